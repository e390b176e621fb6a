#include <catch2/catch.hpp>

#include <numeric>

#include "server/bench/loadgen/workload.hpp"

using namespace toast::loadgen;

TEST_CASE("workload options parse and refuse what they cannot read", "[loadgen][workload]") {
    auto ramp = parse_arrivals("ramp:10s");
    REQUIRE(ramp);
    CHECK(ramp->kind == Arrivals::Kind::ramp);
    CHECK(ramp->seconds == 10);
    auto poisson = parse_arrivals("poisson:250ms");
    REQUIRE(poisson);
    CHECK(poisson->seconds == Approx(0.25));
    CHECK_FALSE(parse_arrivals("poisson:0s"));
    CHECK_FALSE(parse_arrivals("burst:1s"));
    CHECK_FALSE(parse_arrivals("ramp"));
    auto zipf = parse_pick("zipf:0.5");
    REQUIRE(zipf);
    CHECK(zipf->zipf_s == 0.5);
    CHECK(parse_pick("distinct")->kind == Pick::Kind::distinct);
    CHECK_FALSE(parse_pick("zipf:x"));
    CHECK_FALSE(parse_pick("zipf:-1"));
    CHECK_FALSE(parse_pick("popular"));
}

TEST_CASE("ramp arrivals are evenly spread, Poisson gaps have the asked mean", "[loadgen][workload]") {
    std::mt19937_64 rng(7);
    CHECK(arrival_times({Arrivals::Kind::ramp, 10}, 4, rng) == std::vector<double>{0, 2.5, 5, 7.5});
    auto t = arrival_times({Arrivals::Kind::poisson, 0.5}, 4001, rng);
    CHECK(std::is_sorted(t.begin(), t.end()));
    CHECK(t.front() == 0);
    CHECK(t.back() / 4000 == Approx(0.5).epsilon(0.05));
    std::mt19937_64 again(7);
    arrival_times({Arrivals::Kind::ramp, 10}, 4, again);
    CHECK(arrival_times({Arrivals::Kind::poisson, 0.5}, 4001, again) == t);  // same seed, same draws
}

TEST_CASE("picks: distinct in list order, weighted by weight, Zipf by rank", "[loadgen][workload]") {
    std::mt19937_64 rng(3);
    const std::vector<double> four(4, 1.0);
    CHECK(pick_titles({Pick::Kind::distinct, 0}, 3, four, rng) == std::vector<std::size_t>{0, 1, 2});

    std::vector<int> count(4, 0);
    for (auto i : pick_titles({Pick::Kind::weighted, 0}, 8000, {1, 1, 2, 0}, rng))
        ++count[i];
    CHECK(count[3] == 0);
    CHECK(count[2] == Approx(4000).epsilon(0.06));
    CHECK(count[0] == Approx(2000).epsilon(0.08));

    std::fill(count.begin(), count.end(), 0);
    for (auto i : pick_titles({Pick::Kind::zipf, 1.0}, 25000, four, rng))
        ++count[i];
    // P(r) = r^-1 / (1 + 1/2 + 1/3 + 1/4) = 0.48, 0.24, 0.16, 0.12.
    CHECK(count[0] == Approx(12000).epsilon(0.04));
    CHECK(count[3] == Approx(3000).epsilon(0.08));
}
