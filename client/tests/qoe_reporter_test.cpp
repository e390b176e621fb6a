#include <catch2/catch.hpp>

#include "client/core/qoe_reporter.hpp"
#include "client/core/token_renewal.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

TEST_CASE("QoE reports carry what changed since the previous one", "[client][qoe]") {
    const SteadyTime t0{};
    QoeReporter r("0123456789abcdef", "movie", 60s, t0);
    std::vector<std::chrono::nanoseconds> stalls;
    QoeSample s;
    s.stalls = &stalls;
    s.bytes_from_peers = 100;
    CHECK_FALSE(r.on_tick(s, t0 + 59s));

    s.startup_ms = 1250;
    stalls.push_back(500ms);
    s.seeks = 2;
    s.played = 58s;
    s.bytes_from_peers = 1000;
    s.bytes_from_server = 300;
    s.bytes_uploaded = 50;
    auto first = r.on_tick(s, t0 + 60s);
    REQUIRE(first);
    CHECK(first->session == "0123456789abcdef");
    CHECK(first->title == "movie");
    CHECK(first->sequence == 0);
    CHECK_FALSE(first->final);
    CHECK(first->startup_seconds == Approx(1.25));
    CHECK(first->stall_count == 1);
    CHECK(first->stall_seconds == Approx(0.5));
    CHECK(first->stall_durations == std::vector<double>{0.5});
    CHECK(first->seeks == 2);
    CHECK(first->played_seconds == Approx(58));
    CHECK(first->bytes_from_peers == 1000);
    CHECK(first->bytes_from_server == 300);
    CHECK(first->bytes_uploaded == 50);
    CHECK_FALSE(r.on_tick(s, t0 + 100s));

    stalls.push_back(2s);
    stalls.push_back(1s);
    s.played = 100s;
    s.bytes_from_peers = 1500;
    auto last = r.on_end(s);
    REQUIRE(last);
    CHECK(last->sequence == 1);
    CHECK(last->final);
    CHECK_FALSE(last->startup_seconds);  // sent once
    CHECK(last->stall_count == 2);
    CHECK(last->stall_seconds == Approx(3));
    CHECK(last->stall_durations == std::vector<double>{2, 1});
    CHECK(last->seeks == 0);
    CHECK(last->played_seconds == Approx(42));
    CHECK(last->bytes_from_peers == 500);
    CHECK(last->bytes_from_server == 0);
    CHECK_FALSE(r.on_end(s));
    CHECK_FALSE(r.on_tick(s, t0 + 1000s));
    CHECK(r.reports() == 2);

    // Every report the reporter makes is one the server's parser takes.
    for (const auto& q : {*first, *last}) {
        auto parsed = parse_qoe_report(format_qoe_report(q), 8192);
        INFO(parsed.error);
        CHECK(parsed.report);
    }
}

TEST_CASE("a report lists at most 64 stall lengths but counts them all", "[client][qoe]") {
    QoeReporter r("0123456789abcdef", "movie", 1s, SteadyTime{});
    std::vector<std::chrono::nanoseconds> stalls(100, 100ms);
    QoeSample s;
    s.stalls = &stalls;
    auto q = r.on_end(s);
    REQUIRE(q);
    CHECK(q->stall_count == 100);
    CHECK(q->stall_seconds == Approx(10));
    CHECK(q->stall_durations.size() == kMaxStallDurations);
    CHECK(parse_qoe_report(format_qoe_report(*q), 8192).report);
}

TEST_CASE("a token is renewed after two thirds of its life, retried until it expires", "[client][token]") {
    const RenewalTimes t{1000, 1600};  // 600 s
    CHECK(next_renewal(t, 1000, 0) == 400s);
    CHECK(next_renewal(t, 1300, 0) == 100s);
    CHECK(next_renewal(t, 1450, 0) == 0s);
    CHECK(next_renewal(t, 1450, 1) == 5s);
    CHECK(next_renewal(t, 1450, 2) == 10s);
    CHECK(next_renewal(t, 1450, 5) == 60s);
    CHECK(next_renewal(t, 1450, 50) == 60s);
    CHECK(next_renewal(t, 1590, 3) == 9s);  // the last try is before the expiry
    CHECK(next_renewal(t, 1599, 3) == 0s);
    CHECK_FALSE(next_renewal(t, 1600, 0));
    CHECK_FALSE(next_renewal(t, 5000, 0));
    // Short tokens (tests use seconds): still before the end.
    CHECK(next_renewal({0, 6}, 0, 0) == 4s);
}
