#include <catch2/catch.hpp>

#include "client/core/give_up_horizon.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

// 100 pieces of 250 kB at 2 Mbps (250 kB/s): one piece is one second of media.
TitleGeometry geometry() {
    return *TitleGeometry::make(Bytes(25'000'000), Bytes(250'000), BitRate(2'000'000));
}

HorizonConfig config() {
    HorizonConfig c;
    c.safety_factor = 1.5;
    c.safety_margin = 1s;
    c.ewma_alpha = 0.5;
    c.max_horizon = 30s;
    return c;
}

}  // namespace

TEST_CASE("with no peers nothing is given up early: only the missing playhead piece is the server's",
          "[client][horizon]") {
    GiveUpHorizon h(geometry(), config());
    CHECK(h.peer_count() == 0);
    CHECK(h.horizon_time() == 0s);
    CHECK(h.pieces(0s) == PieceCount(1));
    CHECK(h.pieces(900ms) == PieceCount(1));
    CHECK_FALSE(h.gives_up(0s));
    // Slow samples do not matter while nobody is connected; once a peer is, they do.
    for (int i = 0; i < 20; ++i)
        h.on_peer_rate(10'000);
    CHECK(h.horizon_time() == 0s);
    h.set_peer_count(1);
    CHECK(h.horizon_time() == 30s);
    h.set_peer_count(0);
    CHECK(h.horizon_time() == 0s);
}

TEST_CASE("the horizon is a peer's delivery time for a piece times the safety factor plus the margin",
          "[client][horizon]") {
    GiveUpHorizon h(geometry(), config());
    h.set_peer_count(3);
    // Before any sample a peer is assumed to deliver at the bitrate: 1 s per piece -> 1.5 s + 1 s.
    CHECK(h.peer_delivery_time() == 1s);
    CHECK(h.horizon_time() == 2500ms);
    // A piece that took 4 s from one peer (62.5 kB/s) is blended with the assumption (alpha 0.5)...
    h.on_piece_from_peer(Bytes(250'000), 4s);
    CHECK(h.samples() == 1);
    CHECK(h.peer_rate() == Approx(156'250));
    // ... and the estimate converges to it as such samples keep coming.
    for (int i = 0; i < 60; ++i)
        h.on_piece_from_peer(Bytes(250'000), 4s);
    CHECK(h.peer_rate() == Approx(62'500).epsilon(1e-6));
    CHECK(h.peer_delivery_time() == 4s);
    CHECK(h.horizon_time() == 7s);
    // Needed in 6.9 s: a peer cannot make it; needed in 7 s: leave it to the peers.
    CHECK(h.gives_up(6900ms));
    CHECK_FALSE(h.gives_up(7s));
    CHECK(h.pieces(0s) == PieceCount(7));     // pieces needed at 0..6 s
    CHECK(h.pieces(500ms) == PieceCount(8));  // half the playhead piece played: piece +7 is due in 6.5 s
}

TEST_CASE("the horizon adapts as peer rates change", "[client][horizon]") {
    GiveUpHorizon h(geometry(), config());
    h.set_peer_count(1);
    h.on_peer_rate(62'500);  // 4 s per piece -> 7 s
    auto slow = h.horizon_time();
    for (int i = 0; i < 10; ++i)
        h.on_peer_rate(1'000'000);  // 0.25 s per piece
    auto fast = h.horizon_time();
    CHECK(fast < slow);
    CHECK(fast < 1500ms);
    CHECK(fast >= 1s);  // the margin stays
    for (int i = 0; i < 10; ++i)
        h.on_peer_rate(10'000);  // 25 s per piece: capped
    CHECK(h.horizon_time() == 30s);
}

TEST_CASE("the horizon never gives up fewer than the playhead piece nor more than the title",
          "[client][horizon]") {
    HorizonConfig c = config();
    c.safety_margin = 0s;
    c.safety_factor = 0;
    GiveUpHorizon h(geometry(), c);
    h.set_peer_count(5);
    CHECK(h.horizon_time() == 0s);
    CHECK(h.pieces(0s) == PieceCount(1));
    c.max_horizon = std::chrono::nanoseconds::max();
    c.safety_factor = 1e9;  // a delivery time of 1e9 s: beyond the title, and beyond nanoseconds' range
    GiveUpHorizon none(geometry(), c);
    none.set_peer_count(1);
    CHECK(none.pieces(0s) == PieceCount(100));
}

TEST_CASE("one ramp-up sample cannot give up the whole title", "[client][horizon]") {
    GiveUpHorizon h(geometry(), config());
    h.set_peer_count(5);
    h.on_peer_rate(9'830);  // a just-unchoked peer's first second: 25 s per piece if taken at face value
    CHECK(h.horizon_time() < 5s);
    CHECK(h.pieces(0s) < PieceCount(5));
}

TEST_CASE("nonsense rate samples are ignored", "[client][horizon]") {
    GiveUpHorizon h(geometry(), config());
    h.on_peer_rate(0);
    h.on_peer_rate(-5);
    h.on_peer_rate(std::numeric_limits<double>::infinity());
    h.on_piece_from_peer(Bytes(0), 1s);
    h.on_piece_from_peer(Bytes(250'000), 0s);
    CHECK(h.samples() == 0);
    CHECK(h.peer_rate() == Approx(250'000));
}
