#include <catch2/catch.hpp>

#include <limits>

#include "client/core/adaptive_tuner.hpp"

using namespace toast::client;
using namespace std::chrono_literals;

namespace {

AdaptiveConfig config() {
    AdaptiveConfig c;
    c.beta_ratio = 0.6;
    c.hybrid_ratio = 0.7;
    c.inorder_ratio = 0.9;
    c.gain = 0.2;
    return c;
}

}  // namespace

TEST_CASE("the adaptive tuner is hybrid with its whole window until peers are measured",
          "[client][adaptive]") {
    AdaptiveTuner t(20s, config());
    CHECK_FALSE(t.peer_ratio());
    CHECK(t.share() == 1.0);
    CHECK(t.inorder_window() == 20s);
    CHECK_FALSE(t.whole_title());
}

TEST_CASE("peers carrying the bitrate keep the window, peers carrying half of it drop it",
          "[client][adaptive]") {
    AdaptiveTuner keep(20s, config());
    keep.on_peer_ratio(1.0);
    REQUIRE(keep.peer_ratio());
    CHECK(*keep.peer_ratio() == 1.0);  // the first sample is taken as it is
    CHECK(keep.share() == 1.0);
    CHECK(keep.inorder_window() == 20s);

    AdaptiveTuner drop(20s, config());
    drop.on_peer_ratio(0.5);
    CHECK(drop.share() == 0.0);
    CHECK(drop.inorder_window() == 0s);  // beta from the give-up zone on

    // In between, a share in proportion: 0.65 is half way from 0.6 to 0.7.
    AdaptiveTuner half(20s, config());
    half.on_peer_ratio(0.65);
    CHECK(half.share() == Approx(0.5));
    CHECK(half.inorder_window() == 10s);
}

TEST_CASE("peers that carry the stream turn the whole title in order", "[client][adaptive]") {
    AdaptiveTuner t(20s, config());
    t.on_peer_ratio(0.85);
    CHECK_FALSE(t.whole_title());  // hybrid: the whole window, beta beyond it
    CHECK(t.share() == 1.0);
    t.on_peer_ratio(1.4);  // 0.8 x 0.85 + 0.2 x 1.4 = 0.96
    CHECK(*t.peer_ratio() == Approx(0.96));
    CHECK(t.whole_title());
    CHECK(t.share() == 1.0);
    // Back to hybrid as soon as the smoothed ratio falls below the in-order ratio.
    t.on_peer_ratio(0.5);  // 0.868
    CHECK_FALSE(t.whole_title());
    CHECK(t.inorder_window() == 20s);

    // The in-order ratio is never below the hybrid ratio: the window is whole before the title is.
    auto low = config();
    low.inorder_ratio = 0.5;
    AdaptiveTuner clamped(20s, low);
    clamped.on_peer_ratio(0.65);
    CHECK_FALSE(clamped.whole_title());
    CHECK(clamped.share() == Approx(0.5));
}

TEST_CASE("until peers are measured the tuner assumes they deliver its own upload cap's share",
          "[client][adaptive]") {
    AdaptiveTuner half(20s, config(), 0.5);
    CHECK_FALSE(half.peer_ratio());  // assumed, not measured
    CHECK(half.share() == 0.0);
    CHECK(half.inorder_window() == 0s);
    // The first sample is smoothed from the prior, not taken as it is: 0.8 x 0.5 + 0.2 x 0.75.
    half.on_peer_ratio(0.75);
    REQUIRE(half.peer_ratio());
    CHECK(*half.peer_ratio() == Approx(0.55));
    CHECK(half.share() == 0.0);

    // A prior sets the window, and the whole title as a measured ratio would: a box uploading the bitrate
    // picks in order from its first piece.
    AdaptiveTuner full(20s, config(), 1.0);
    CHECK_FALSE(full.peer_ratio());
    CHECK(full.share() == 1.0);
    CHECK(full.whole_title());
    full.on_peer_ratio(0.2);  // 0.84: measured below the in-order ratio, back to hybrid
    CHECK_FALSE(full.whole_title());
    CHECK(full.inorder_window() == 20s);
    // A prior between the hybrid and in-order ratios: the whole window, not the whole title.
    AdaptiveTuner window(20s, config(), 0.8);
    CHECK(window.share() == 1.0);
    CHECK_FALSE(window.whole_title());

    // A prior that is not a ratio is no prior.
    for (double bad :
         {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        AdaptiveTuner t(20s, config(), bad);
        CHECK(t.share() == 1.0);
        CHECK_FALSE(t.whole_title());
        t.on_peer_ratio(0.5);
        CHECK(*t.peer_ratio() == 0.5);
    }
}

TEST_CASE("with a prior the tuner follows no more than the prior plus its headroom", "[client][adaptive]") {
    auto c = config();
    c.headroom = 0.1;
    // Uploading half the bitrate: peers measured at 1.2 are taken for at most 0.6, the beta ratio.
    AdaptiveTuner half(20s, c, 0.5);
    for (int i = 0; i < 30; ++i)
        half.on_peer_ratio(1.2);
    REQUIRE(half.peer_ratio());
    CHECK(*half.peer_ratio() == Approx(1.2).margin(0.01));  // reported as measured
    CHECK(half.share() == 0.0);
    CHECK_FALSE(half.whole_title());
    // Measured below the cap, the measure decides: 0.55 from a prior of 0.5 is still beta.
    AdaptiveTuner low(20s, c, 0.5);
    for (int i = 0; i < 30; ++i)
        low.on_peer_ratio(0.55);
    CHECK(low.share() == 0.0);
    // A prior of 0.6 caps at 0.7, the hybrid ratio: the whole window, never the whole title.
    AdaptiveTuner more(20s, c, 0.6);
    for (int i = 0; i < 30; ++i)
        more.on_peer_ratio(1.5);
    CHECK(more.share() == 1.0);
    CHECK_FALSE(more.whole_title());
    // At the bitrate the cap (1.1) is above the in-order ratio.
    AdaptiveTuner full(20s, c, 1.0);
    for (int i = 0; i < 30; ++i)
        full.on_peer_ratio(1.5);
    CHECK(full.whole_title());
    // Without a prior nothing caps the measure.
    AdaptiveTuner none(20s, c);
    none.on_peer_ratio(1.2);
    CHECK(none.whole_title());
}

TEST_CASE("what idle peers deliver lifts the cap by as much", "[client][adaptive]") {
    auto c = config();
    c.headroom = 0.1;
    // A box uploading a quarter of the bitrate among idle boxes: peers measured at 1.2, 1.0 of it from peers
    // that download nothing. Capped at 0.25 + 0.1 + 1.0, the measure decides: the whole title in order.
    AdaptiveTuner idle(20s, c, 0.25);
    for (int i = 0; i < 30; ++i)
        idle.on_peer_ratio(1.2, 1.0);
    CHECK(idle.idle_ratio() == Approx(1.0).margin(0.01));
    CHECK(idle.whole_title());
    // The same 1.2 from viewers only: capped at 0.35, beta.
    AdaptiveTuner viewers(20s, c, 0.25);
    for (int i = 0; i < 30; ++i)
        viewers.on_peer_ratio(1.2, 0.0);
    CHECK(viewers.idle_ratio() == 0.0);
    CHECK(viewers.share() == 0.0);
    // Idle peers carrying 0.3: capped at 0.65, half of the window.
    AdaptiveTuner some(20s, c, 0.25);
    for (int i = 0; i < 60; ++i)
        some.on_peer_ratio(1.2, 0.3);
    CHECK(some.share() == Approx(0.5).margin(0.01));
    CHECK_FALSE(some.whole_title());
    // The first sample's idle part is measured, not assumed: taken as it is (never more than the sample),
    // and added to the prior the ratio is smoothed from. A box among idle boxes is in order from its first
    // sample: 0.8 x (0.25 + 0.8) + 0.2 x 1.0 = 1.04, under the cap of 0.25 + 0.1 + 0.8.
    AdaptiveTuner first(20s, c, 0.25);
    first.on_peer_ratio(1.0, 0.8);
    CHECK(first.idle_ratio() == Approx(0.8));
    CHECK(*first.peer_ratio() == Approx(1.04));
    CHECK(first.whole_title());
    // Then smoothed like the ratio; a sample that is not a rate counts as 0.
    first.on_peer_ratio(1.0, std::numeric_limits<double>::quiet_NaN());
    CHECK(first.idle_ratio() == Approx(0.64));
    first.on_peer_ratio(1.0, -1.0);
    CHECK(first.idle_ratio() == Approx(0.512));
    AdaptiveTuner clamped(20s, c, 0.25);
    clamped.on_peer_ratio(1.0, 5.0);
    CHECK(clamped.idle_ratio() == 1.0);
    // Without idle peers the first sample is smoothed from the prior alone: 0.8 x 0.25 + 0.2 x 0.8.
    AdaptiveTuner alone(20s, c, 0.25);
    alone.on_peer_ratio(0.8, 0.0);
    CHECK(*alone.peer_ratio() == Approx(0.36));
    CHECK(alone.share() == 0.0);
}

TEST_CASE("the ratio is smoothed: one slow second does not drop the window", "[client][adaptive]") {
    AdaptiveTuner t(20s, config());
    t.on_peer_ratio(1.0);
    t.on_peer_ratio(0.2);  // 0.8 x 1.0 + 0.2 x 0.2 = 0.84
    CHECK(*t.peer_ratio() == Approx(0.84));
    CHECK(t.share() == 1.0);
    // Peers that stay at half the bitrate take it below the beta ratio within a few seconds.
    int seconds = 0;
    while (t.share() > 0.0 && seconds < 60) {
        t.on_peer_ratio(0.5);
        ++seconds;
    }
    CHECK(seconds >= 3);
    CHECK(seconds <= 8);
    CHECK(t.inorder_window() == 0s);
    // And back when they carry the stream again.
    for (int i = 0; i < 10; ++i)
        t.on_peer_ratio(1.0);
    CHECK(t.share() == 1.0);
}

TEST_CASE("samples that are not a rate are ignored", "[client][adaptive]") {
    AdaptiveTuner t(20s, config());
    t.on_peer_ratio(-1.0);
    t.on_peer_ratio(std::numeric_limits<double>::quiet_NaN());
    t.on_peer_ratio(std::numeric_limits<double>::infinity());
    CHECK_FALSE(t.peer_ratio());
    CHECK(t.share() == 1.0);
    CHECK_FALSE(t.whole_title());
}
