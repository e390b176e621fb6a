#include <catch2/catch.hpp>

#include "client/core/adaptive_tuner.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

const SteadyTime t0{std::chrono::seconds(1000)};

AdaptiveConfig config() {
    AdaptiveConfig c;
    c.late_decrease = 0.5;
    c.decrease_interval = 1s;
    c.recovery = 10s;
    c.max_lead = 8s;
    return c;
}

}  // namespace

TEST_CASE("the adaptive tuner starts as hybrid: the whole window, peers asked from the give-up zone on",
          "[client][adaptive]") {
    AdaptiveTuner t(20s, config(), t0);
    CHECK(t.share() == 1.0);
    CHECK(t.settings().inorder_window == 20s);
    CHECK(t.settings().lead == 0s);
    // Ticks without late pieces keep it there.
    for (int i = 1; i <= 50; ++i)
        t.on_tick(0, t0 + i * 200ms);
    CHECK(t.share() == 1.0);
    CHECK(t.late_pieces() == 0);
}

TEST_CASE("late pieces halve the window, at most once a second", "[client][adaptive]") {
    AdaptiveTuner t(20s, config(), t0);
    t.on_tick(3, t0 + 200ms);
    CHECK(t.share() == 0.5);
    CHECK(t.settings().inorder_window == 10s);
    // A burst within the interval is one event...
    t.on_tick(1, t0 + 400ms);
    t.on_tick(2, t0 + 1100ms);
    CHECK(t.share() == 0.5);
    CHECK(t.late_pieces() == 6);
    // ... the next second's late pieces are another.
    t.on_tick(1, t0 + 1200ms);
    CHECK(t.share() == 0.25);
    CHECK(t.settings().inorder_window == 5s);
    // Late pieces say nothing of how long a piece takes: the lead stays where it was.
    CHECK(t.settings().lead == 0s);
}

TEST_CASE("while peers keep up the window grows back linearly, over `recovery` from nothing to all of it",
          "[client][adaptive]") {
    AdaptiveTuner t(20s, config(), t0);
    auto at = t0;
    for (int i = 0; i < 8; ++i) {
        at += 1s;
        t.on_tick(1, at);
    }
    CHECK(t.share() == Approx(1.0 / 256));
    // 5 s of clean ticks: half of `recovery`.
    for (int i = 0; i < 25; ++i) {
        at += 200ms;
        t.on_tick(0, at);
    }
    CHECK(t.share() == Approx(0.5 + 1.0 / 256));
    for (int i = 0; i < 50; ++i) {
        at += 200ms;
        t.on_tick(0, at);
    }
    CHECK(t.share() == 1.0);
    CHECK(t.settings().inorder_window == 20s);
}

TEST_CASE("the lead is what a piece takes from peers, smoothed, plus four times its deviation (RFC 6298)",
          "[client][adaptive]") {
    AdaptiveConfig c = config();
    c.initial_lead = 1s;
    AdaptiveTuner t(20s, c, t0);
    CHECK(t.settings().lead == 1s);
    // The first sample: mean 2 s, deviation 1 s -> 6 s.
    t.on_peer_piece(2s);
    CHECK(t.settings().lead == 6s);
    // Steady samples shrink the deviation: the lead approaches the time itself.
    for (int i = 0; i < 60; ++i)
        t.on_peer_piece(2s);
    CHECK(t.settings().lead > 2s);
    CHECK(t.settings().lead < 2010ms);
    // One slow piece: deviation 0.75 x ~0 + 0.25 x 4 s = 1 s, mean 2.5 s -> 6.5 s.
    t.on_peer_piece(6s);
    CHECK(t.settings().lead.count() == Approx(std::chrono::nanoseconds(6500ms).count()).epsilon(1e-3));
    // However slow, never past max_lead; a negative time is ignored.
    for (int i = 0; i < 20; ++i)
        t.on_peer_piece(30s);
    CHECK(t.settings().lead == 8s);
    t.on_peer_piece(-1s);
    CHECK(t.settings().lead == 8s);
    // Windows and leads are independent.
    CHECK(t.share() == 1.0);
}

TEST_CASE("out-of-range tuning values are clamped: the share stays in [0, 1], the lead non-negative",
          "[client][adaptive]") {
    AdaptiveConfig c = config();
    c.late_decrease = -3;
    c.max_lead = -1s;
    AdaptiveTuner t(-5s, c, t0);
    t.on_tick(1, t0 + 1s);
    CHECK(t.share() == 0.0);
    CHECK(t.settings().inorder_window == 0s);
    CHECK(t.settings().lead == 0s);
    // A clock that steps back grows nothing.
    t.on_tick(0, t0);
    CHECK(t.share() == 0.0);
}
