#include <catch2/catch.hpp>

#include <map>

#include "sim/core/catalogue_sessions.hpp"

using namespace toast::sim;

TEST_CASE("shares of the boxes are rounded by largest remainder, ties to the lower index",
          "[sim][workload]") {
    CHECK(largest_remainder({0.3, 0.5, 0.2}, 40) == std::vector<int>{12, 20, 8});
    CHECK(largest_remainder({0.5, 0.5}, 3) == std::vector<int>{2, 1});
    CHECK(largest_remainder({1.0 / 3, 1.0 / 3, 1.0 / 3}, 10) == std::vector<int>{4, 3, 3});
}

TEST_CASE("the Zipf draw takes the first title whose cumulative weight passes u", "[sim][workload]") {
    const auto c = zipf_cumulative(3, 1.0);  // weights 1, 1/2, 1/3 over 11/6
    CHECK(c[0] == Approx(6.0 / 11));
    CHECK(c[2] == 1.0);
    CHECK(zipf_pick(c, 0.0) == 0);
    CHECK(zipf_pick(c, 6.0 / 11 - 1e-12) == 0);
    CHECK(zipf_pick(c, 6.0 / 11 + 1e-12) == 1);
    CHECK(zipf_pick(c, 0.9999999) == 2);
}

TEST_CASE("the evening's profile is piecewise linear", "[sim][workload]") {
    const std::vector<std::pair<double, double>> p = {{0, 0.15}, {0.5, 1.0}, {0.8, 1.0}, {1.0, 0.2}};
    CHECK(profile_at(p, 0) == 0.15);
    CHECK(profile_at(p, 0.25) == Approx(0.575));
    CHECK(profile_at(p, 0.6) == 1.0);
    CHECK(profile_at(p, 0.9) == Approx(0.6));
}

// Expectations from an independent reading of the spec in Python (mt19937_64 written out in full).
TEST_CASE("the sessions are the spec's, draw for draw", "[sim][workload]") {
    CatalogueScenario s;
    s.boxes = 40;
    s.titles = 7;
    s.uplink_mix = {{0.3, 2}, {0.5, 1}, {0.2, 0.25}};
    s.evening_seconds = 300;
    s.peak_viewers_pct = 60;
    s.random_seed = 7;
    s.warm_titles = 2;
    s.disk_quota_titles = 3;
    const auto plan = plan_evening(s);
    const std::vector<double> first_uplinks = {1e6, 2e6, 1e6, 2e6, 2e6, 2e6,  1e6,
                                               1e6, 1e6, 1e6, 1e6, 1e6, 250e3};
    for (std::size_t b = 0; b < first_uplinks.size(); ++b)
        CHECK(plan.uplink_bps[b] == first_uplinks[b]);
    CHECK(plan.warm[0] == std::vector<int>{4, 0});
    CHECK(plan.warm[6] == std::vector<int>{0, 3});
    CHECK(plan.warm[7] == std::vector<int>{0, 4});
    REQUIRE(plan.sessions.size() == 62);
    CHECK(plan.dropped == 0);
    CHECK(plan.sessions[0].box == 20);
    CHECK(plan.sessions[0].title == 0);
    CHECK(plan.sessions[0].start_s == 14.12881504611263);
    CHECK(plan.sessions[2].box == 32);
    CHECK(plan.sessions[2].title == 5);
    CHECK(plan.sessions[2].watch_s == 26.522164124775294);
    CHECK(plan.sessions[2].watched_fraction == 0.22101803437312745);
    CHECK(plan.sessions[5].start_s == 64.88907022297676);
    CHECK(plan.sessions[5].box == 39);
    CHECK(plan.sessions.back().start_s == 293.28947128545315);
    CHECK(plan.sessions.back().box == 25);
    int abandoned = 0;
    for (const auto& x : plan.sessions)
        abandoned += x.watched_fraction < 1 ? 1 : 0;
    CHECK(abandoned == 29);
}

TEST_CASE("no box holds two sessions at once, and sessions come by start", "[sim][workload]") {
    CatalogueScenario s;
    s.boxes = 10;
    s.peak_viewers_pct = 100;  // more arrivals than boxes at the peak: some are dropped
    s.random_seed = 3;
    const auto plan = plan_evening(s);
    std::map<int, double> busy_until;
    double last = 0;
    for (const auto& x : plan.sessions) {
        CHECK(x.start_s >= last);
        last = x.start_s;
        CHECK(busy_until[x.box] <= x.start_s);
        busy_until[x.box] = x.start_s + x.watch_s;
    }
    CHECK(plan.dropped > 0);
    const auto j = sessions_json(plan);
    CHECK(j["sessions"].size() == plan.sessions.size());
    CHECK(j["sessions"][0]["title"].get<std::string>().substr(0, 1) == "t");
    CHECK(j["warm_titles"].size() == plan.warm.size());
    CHECK(j["lambda_peak"] == plan.lambda_peak);
    // Same seed, same evening.
    const auto again = plan_evening(s);
    REQUIRE(again.sessions.size() == plan.sessions.size());
    CHECK(again.sessions.back().start_s == plan.sessions.back().start_s);
}

TEST_CASE("with no cache, no box holds a warm title and the sessions are the same", "[sim][workload]") {
    CatalogueScenario s;
    const auto lru = plan_evening(s);
    s.cache = "none";
    const auto plan = plan_evening(s);
    for (const auto& w : plan.warm)
        CHECK(w.empty());
    // The warm titles are drawn whatever the cache: every policy sees the same sessions.
    REQUIRE(plan.sessions.size() == lru.sessions.size());
    for (std::size_t i = 0; i < plan.sessions.size(); ++i) {
        CHECK(plan.sessions[i].box == lru.sessions[i].box);
        CHECK(plan.sessions[i].title == lru.sessions[i].title);
        CHECK(plan.sessions[i].start_s == lru.sessions[i].start_s);
    }
}
