#include <catch2/catch.hpp>

#include "client/core/push_fetch_policy.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kPiece = 256 * 1024;

std::vector<PushPiece> pieces(int n, int first = 0) {
    std::vector<PushPiece> out;
    for (int i = first; i < first + n; ++i)
        out.push_back({0, PieceIndex(i), Bytes(kPiece)});
    return out;
}

PushFetchInput inside(std::vector<PushPiece> missing) {
    PushFetchInput in;
    in.assigned = true;
    in.unix_ms = 5000;
    in.window_start_ms = 1000;
    in.window_end_ms = 100'000;
    in.missing = std::move(missing);
    return in;
}

PushFetchPolicy::Settings settings(std::uint64_t rate = 2'000'000, std::uint64_t quota = 100 * kPiece) {
    return {BitRate(rate), Bytes(quota), 2};
}

}  // namespace

TEST_CASE("a push fetches nothing without an assignment, outside the window or while a title plays",
          "[client][service][push]") {
    PushFetchPolicy policy(settings());
    PushFetchPolicy::Time t{};
    auto in = inside(pieces(10));
    in.assigned = false;
    CHECK(policy.decide(in, t).state == PushState::no_assignment);
    in.assigned = true;
    in.unix_ms = 999;
    auto d = policy.decide(in, t += 10s);
    CHECK(d.state == PushState::waiting_window);
    CHECK(d.start.empty());
    in.unix_ms = 100'000;  // the end is not inside
    CHECK(policy.decide(in, t += 10s).state == PushState::waiting_window);
    in.unix_ms = 5000;
    in.playing = true;
    d = policy.decide(in, t += 10s);
    CHECK(d.state == PushState::paused_playing);
    CHECK(d.start.empty());
    CHECK_FALSE(d.cancel);  // nothing in flight
    // Waiting earned nothing: the first piece waits for its tokens.
    in.playing = false;
    d = policy.decide(in, t += 1ms);
    CHECK(d.state == PushState::fetching);
    CHECK(d.start.empty());
}

TEST_CASE("a title that starts playing, or the window's end, cancels the fetches in flight",
          "[client][service][push]") {
    PushFetchPolicy policy(settings());
    PushFetchPolicy::Time t{};
    auto in = inside(pieces(10));
    policy.decide(in, t);
    auto d = policy.decide(in, t += 2s);
    REQUIRE(d.start.size() == 1);
    in.in_flight = 1;
    in.in_flight_bytes = Bytes(kPiece);
    in.missing = pieces(9, 1);
    in.playing = true;
    d = policy.decide(in, t += 100ms);
    CHECK(d.state == PushState::paused_playing);
    CHECK(d.cancel);
    CHECK(d.start.empty());
    in.playing = false;
    in.unix_ms = 200'000;
    d = policy.decide(in, t += 100ms);
    CHECK(d.state == PushState::waiting_window);
    CHECK(d.cancel);
}

TEST_CASE("a push never fetches faster than its rate", "[client][service][push]") {
    // 2 Mbps: 250 000 bytes a second; pieces of 256 KiB.
    PushFetchPolicy policy(settings(2'000'000, 1000 * kPiece));
    PushFetchPolicy::Time t0{}, t = t0;
    std::uint64_t started = 0;
    int next = 0;
    std::size_t in_flight = 0;
    for (int tick = 0; tick < 600; ++tick) {  // 60 s in 100 ms ticks; each fetch takes one tick
        auto in = inside(pieces(500, next));
        in.in_flight = in_flight;
        in.in_flight_bytes = Bytes(in_flight * kPiece);
        in.held = Bytes(std::uint64_t(next) * kPiece);
        auto d = policy.decide(in, t);
        in_flight = d.start.size();
        for (const auto& p : d.start) {
            CHECK(p.piece == PieceIndex(next));
            ++next;
            started += p.size.value();
        }
        const double elapsed = std::chrono::duration<double>(t - t0).count();
        // The bucket holds at most a second at 2 Mbps and a piece, and starts empty.
        REQUIRE(double(started) <= 250'000.0 * elapsed + 1);
        t += 100ms;
    }
    // And it does use the rate: within a piece of 60 s at 2 Mbps.
    CHECK(double(started) >= 250'000.0 * 59.9 - double(kPiece));
}

TEST_CASE("a push stays within its quota and its fetches in flight", "[client][service][push]") {
    PushFetchPolicy policy({BitRate(100'000'000), Bytes(5 * kPiece), 2});
    PushFetchPolicy::Time t{};
    auto in = inside(pieces(10));
    policy.decide(in, t);
    auto d = policy.decide(in, t += 10s);
    CHECK(d.start.size() == 2);  // max in flight
    in.in_flight = 2;
    in.in_flight_bytes = Bytes(2 * kPiece);
    in.missing = pieces(8, 2);
    CHECK(policy.decide(in, t += 1s).start.empty());
    in.in_flight = 0;
    in.in_flight_bytes = Bytes(0);
    in.held = Bytes(4 * kPiece);
    d = policy.decide(in, t += 1s);
    REQUIRE(d.start.size() == 1);  // the fifth piece fills the quota
    in.held = Bytes(5 * kPiece);
    in.missing = pieces(5, 5);
    d = policy.decide(in, t += 1s);
    CHECK(d.start.empty());
    CHECK(d.state == PushState::over_quota);
    in.missing.clear();
    CHECK(policy.decide(in, t += 1s).state == PushState::complete);
}
