// The server refusing pieces, or not answering: a refused piece goes to peers first, with a deadline, and so
// does every piece in the bytes a refusal says the server lost.
#include <catch2/catch.hpp>

#include <algorithm>

#include "client/core/stream_controller.hpp"
#include "controller_test_support.hpp"

using namespace toast;
using namespace toast::client;
using namespace toast::client::testing;
using namespace std::chrono_literals;

namespace {

// Beta draws pieces far ahead too: its plans show where the server's pieces go among the others.
ControllerSetup beta_setup() {
    auto st = setup();
    st.picker = PickerKind::beta;
    return st;
}

// A sample at `now` with one viewer connected, holding every piece.
SwarmSample with_a_viewer(SteadyTime now) {
    auto s = sample(now, 1);
    s.peers = {viewer()};
    return s;
}

}  // namespace

TEST_CASE("a server that cannot be reached gives nothing up: peers may have the pieces near the playhead",
          "[client][controller]") {
    ClientTuning tuning;
    // The pieces the server would have taken still come first, before beta's far ones.
    StreamController c(geometry(), beta_setup(), tuning, t0);
    auto s = with_a_viewer(t0);
    auto up = c.tick(s);
    REQUIRE(up.horizon > PieceCount(0));
    CHECK(up.pieces.wanted.front() >= PieceIndex(up.horizon.value()));
    CHECK(up.pieces.deadlines.empty());
    s.now = t0 + 100ms;
    s.server_up = false;
    auto plan = c.tick(s);
    CHECK(plan.horizon == PieceCount(0));
    CHECK(plan.pieces.give_up.empty());
    REQUIRE(plan.pieces.wanted.size() == 40);
    REQUIRE(plan.pieces.deadlines.size() >= static_cast<std::size_t>(up.horizon.value()));
    for (int p = 0; p < up.horizon.value(); ++p) {
        CHECK(plan.pieces.wanted[static_cast<std::size_t>(p)] == PieceIndex(p));
        CHECK(plan.pieces.deadlines[static_cast<std::size_t>(p)].piece == PieceIndex(p));
    }
}

TEST_CASE("a piece the server refused is asked of peers first, with a deadline, while the server stays up",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), beta_setup(), tuning, t0);
    auto s = with_a_viewer(t0);
    auto up = c.tick(s);
    REQUIRE(up.horizon > PieceCount(0));
    const PieceIndex refused(up.horizon.value() - 1);  // the last piece of the server's zone
    REQUIRE(std::find(up.pieces.give_up.begin(), up.pieces.give_up.end(), refused) !=
            up.pieces.give_up.end());

    // A server that failed as a whole changes nothing here (server_up says so); a refusal does.
    c.on_fetch_failed(refused, FetchFault::server);
    s.now = t0 + 100ms;
    CHECK(c.tick(s).pieces.wanted.front() != refused);
    c.on_fetch_failed(refused, FetchFault::piece);
    s.now = t0 + 200ms;
    auto plan = c.tick(s);
    CHECK(plan.horizon == up.horizon);  // the rest of the zone stays the server's
    REQUIRE_FALSE(plan.pieces.wanted.empty());
    CHECK(plan.pieces.wanted.front() == refused);
    REQUIRE_FALSE(plan.pieces.deadlines.empty());
    CHECK(plan.pieces.deadlines.front().piece == refused);
    CHECK(std::find(plan.pieces.give_up.begin(), plan.pieces.give_up.end(), refused) ==
          plan.pieces.give_up.end());

    // Once it arrives (from whoever), it is no longer asked for.
    c.on_piece_finished(refused, t0 + 300ms);
    s.now = t0 + 400ms;
    plan = c.tick(s);
    CHECK(std::find(plan.pieces.wanted.begin(), plan.pieces.wanted.end(), refused) ==
          plan.pieces.wanted.end());
}

TEST_CASE("a refusal that names the bytes the server lost refuses every piece in them",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), beta_setup(), tuning, t0);
    auto s = with_a_viewer(t0);
    auto up = c.tick(s);
    REQUIRE(up.horizon > PieceCount(0));
    REQUIRE(up.horizon < PieceCount(10));
    const PieceIndex asked(up.horizon.value() - 1);
    c.on_piece_finished(PieceIndex(11), t0 + 50ms);  // already here: nothing to ask for
    // The block the server lost holds the last byte of piece 9 and all of pieces 10-12 (250,000 bytes each).
    c.on_fetch_failed(asked, FetchFault::piece,
                      UnavailableBytes{ByteOffset(10 * 250'000 - 1), ByteOffset(13 * 250'000 - 1)});
    s.now = t0 + 100ms;
    auto plan = c.tick(s);
    REQUIRE(plan.pieces.wanted.size() >= 4);
    CHECK(std::vector<PieceIndex>(plan.pieces.wanted.begin(), plan.pieces.wanted.begin() + 4) ==
          std::vector<PieceIndex>{asked, PieceIndex(9), PieceIndex(10), PieceIndex(12)});
    std::vector<PieceIndex> with_deadlines;
    for (const auto& d : plan.pieces.deadlines)
        with_deadlines.push_back(d.piece);
    for (auto p : {asked, PieceIndex(9), PieceIndex(10), PieceIndex(12)})
        CHECK(std::find(with_deadlines.begin(), with_deadlines.end(), p) != with_deadlines.end());
    CHECK(std::find(plan.pieces.wanted.begin(), plan.pieces.wanted.end(), PieceIndex(11)) ==
          plan.pieces.wanted.end());

    // Bytes beyond the title name nothing; a range running past its end stops at the last piece.
    StreamController d(geometry(), beta_setup(), tuning, t0);
    d.tick(sample(t0, 1));
    d.on_fetch_failed(asked, FetchFault::piece,
                      UnavailableBytes{ByteOffset(10'000'000), ByteOffset(20'000'000)});
    d.on_fetch_failed(asked, FetchFault::piece,
                      UnavailableBytes{ByteOffset(39 * 250'000), ByteOffset(~0ull)});
    auto last = d.tick(with_a_viewer(t0 + 100ms));
    REQUIRE(last.pieces.wanted.size() >= 2);
    CHECK(last.pieces.wanted[0] == asked);
    CHECK(last.pieces.wanted[1] == PieceIndex(39));
    // A failure of the whole server names nothing, whatever it carried.
    StreamController e(geometry(), beta_setup(), tuning, t0);
    e.tick(sample(t0, 1));
    e.on_fetch_failed(asked, FetchFault::server, UnavailableBytes{ByteOffset(0), ByteOffset(1'000'000)});
    CHECK(e.tick(with_a_viewer(t0 + 100ms)).pieces.wanted.front() != PieceIndex(2));
}
