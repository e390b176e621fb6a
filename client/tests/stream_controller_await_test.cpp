// Server fetches of pieces peers are sending leave peers the blocks they deliver anyway: the blocks at the
// front of their queues. The controller holds the server's bytes until those blocks are here, or fetches
// them too at the next tick.
#include <catch2/catch.hpp>

#include "client/core/stream_controller.hpp"
#include "controller_test_support.hpp"

using namespace toast;
using namespace toast::client;
using namespace toast::client::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t block = 16'384;

std::vector<bool> blocks_delivered(int first, int last) {
    std::vector<bool> out(16, false);
    for (int b = first; b <= last; ++b)
        out[static_cast<std::size_t>(b)] = true;
    return out;
}

// Piece 1 of the 40-piece title: peers delivered blocks [0, delivered_to], and the peer sending it has
// `front` next in its queue (places 0, 1, 2...).
SwarmSample sending_piece_1(SteadyTime now, int delivered_to, std::vector<int> front) {
    auto s = sample(now, 1);
    s.peers = {operator_seed()};
    s.in_flight = idx({1});
    PieceProgress pp{PieceIndex(1), blocks_delivered(0, delivered_to), std::vector<int>(16, -1)};
    for (std::size_t i = 0; i < front.size(); ++i)
        pp.queue_position[static_cast<std::size_t>(front[i])] = static_cast<int>(i);
    s.progress = {pp};
    return s;
}

// A second of lead margin more than the default: piece 1 (due in a second) is inside the server's last
// moment at the start, with time to wait a tick for the peers' blocks.
ClientTuning roomy() {
    ClientTuning t;
    t.fallback.lead_margin = 1500ms;
    return t;
}

const FallbackFetch* fetch_of(const ControllerPlan& plan, int piece) {
    for (const auto& f : plan.fetches)
        if (f.piece == PieceIndex(piece)) return &f;
    return nullptr;
}

// The part of `piece` the plan fetches: there is such a fetch, and of part of the piece.
PiecePart part_of(const ControllerPlan& plan, int piece) {
    const auto* f = fetch_of(plan, piece);
    REQUIRE(f != nullptr);
    REQUIRE(f->part);
    return *f->part;
}

}  // namespace

TEST_CASE("the blocks at the front of a peer's queue are the ones it delivers whatever we do",
          "[client][fallback]") {
    // The block being sent and the next one; not the third, and nothing already here.
    CHECK(arriving_blocks({true, false, false, false}, {-1, 0, 1, 2}, 2) ==
          std::vector<bool>{false, true, true, false});
    CHECK(arriving_blocks({true, true, false, false}, {0, 1, -1, -1}, 2) ==
          std::vector<bool>{false, false, false, false});
    CHECK(arriving_blocks({}, {1, -1, 0}, 1) == std::vector<bool>{false, false, true});
}

TEST_CASE("the server is asked for what peers neither delivered nor are about to deliver",
          "[client][fallback]") {
    const Bytes k(16'384);
    const Bytes size(65'536);
    // Blocks 1 and 2 on their way: the server takes block 3, and they are awaited.
    auto share = server_share(size, k, {true, false, false, false}, {false, true, true, false});
    CHECK(share.part == PiecePart{Bytes(49'152), Bytes(16'384)});
    CHECK(share.awaited == std::vector<std::int32_t>{1, 2});
    // An arriving block inside the server's range is fetched anyway (a request is one range).
    share = server_share(size, k, {false, false, false, false}, {false, true, false, false});
    CHECK(share.part == PiecePart{Bytes(0), Bytes(65'536)});
    CHECK(share.awaited.empty());
    // Every missing block arriving: nothing for the server.
    share = server_share(size, k, {true, true, false, false}, {false, false, true, true});
    CHECK(share.part.length == Bytes(0));
    CHECK(share.awaited == std::vector<std::int32_t>{2, 3});
    // Nothing arriving: server_part, whole-piece and all-delivered cases included.
    CHECK(server_share(size, k, {true, false, false, false}, {}).part == server_part(size, k, {true}));
    CHECK(server_share(Bytes(40'000), k, {true, true, true}, {}).part ==
          PiecePart{Bytes(32'768), Bytes(7'232)});
}

TEST_CASE("a server fetch waits a tick for the blocks a peer is sending", "[client][controller]") {
    const auto tuning = roomy();
    StreamController c(geometry(), setup(), tuning, t0);
    // Blocks 0-4 here, 5 being sent, 6 next in the peer's send buffer, 7 queued behind them.
    auto plan = c.tick(sending_piece_1(t0, 4, {5, 6, 7}));
    CHECK(part_of(plan, 1) == PiecePart{Bytes(7 * block), Bytes(250'000 - 7 * block)});
    CHECK(c.holding(PieceIndex(1)));
    // Piece 0 (due now) has no time to wait, and nothing of it is on its way: whole.
    REQUIRE(fetch_of(plan, 0) != nullptr);
    CHECK_FALSE(fetch_of(plan, 0)->part);
    CHECK_FALSE(c.holding(PieceIndex(0)));
    // Kept, and held: add_piece would write zeros over blocks 5 and 6.
    REQUIRE(c.on_server_data(PieceIndex(1), Bytes(250'000 - 7 * block), t0 + 30ms));
    CHECK(c.holding(PieceIndex(1)));
    StatsRecord r;

    SECTION("they arrive: the held bytes are written at the next tick") {
        auto next = c.tick(sending_piece_1(t0 + 200ms, 6, {}));
        CHECK(next.release == idx({1}));
        CHECK(fetch_of(next, 1) == nullptr);
        CHECK_FALSE(c.holding(PieceIndex(1)));
        auto a = c.on_piece_finished(PieceIndex(1), t0 + 210ms);
        CHECK(a.from_server);
        c.fill_record(r, t0 + 300ms);
        CHECK(r.bytes_server_useful == 250'000 - 7 * block);
        CHECK(r.pieces_mixed == 1);
        CHECK(r.blocks_awaited == 2);
        CHECK(r.blocks_awaited_late == 0);
        // The fetch is measured from its start to the server's answer, not to the release.
        CHECK(c.fallback().fetch_estimate() < 100ms);
    }
    SECTION("one is late: the server sends it too") {
        auto next = c.tick(sending_piece_1(t0 + 200ms, 5, {6}));
        CHECK(next.release.empty());
        CHECK(part_of(next, 1) == PiecePart{Bytes(6 * block), Bytes(block)});
        CHECK(fetch_of(next, 1)->reason == FetchReason::needed);
        // The rest completes the piece: written at once.
        REQUIRE(c.on_server_data(PieceIndex(1), Bytes(block), t0 + 230ms));
        CHECK_FALSE(c.holding(PieceIndex(1)));
        CHECK(c.on_piece_finished(PieceIndex(1), t0 + 240ms).from_server);
        c.fill_record(r, t0 + 300ms);
        CHECK(r.bytes_server_useful == 250'000 - 6 * block);
        CHECK(r.blocks_awaited == 2);
        CHECK(r.blocks_awaited_late == 1);
        // Not fetched a third time.
        CHECK(fetch_of(c.tick(sending_piece_1(t0 + 400ms, 5, {})), 1) == nullptr);
    }
    SECTION("peers' blocks fail the check while the server's bytes wait: it is fetched again, whole") {
        CHECK_FALSE(c.on_hash_failed(PieceIndex(1), t0 + 100ms));
        CHECK_FALSE(c.holding(PieceIndex(1)));
        CHECK_FALSE(c.fallback().in_flight(PieceIndex(1)));
        c.fill_record(r, t0 + 150ms);
        CHECK(r.bytes_server_wasted == 250'000 - 7 * block);
        auto again = c.tick(sample(t0 + 200ms, 1));
        REQUIRE(fetch_of(again, 1) != nullptr);
        CHECK_FALSE(fetch_of(again, 1)->part);
    }
    SECTION("peers deliver the whole piece first: the held bytes are wasted") {
        auto a = c.on_piece_finished(PieceIndex(1), t0 + 100ms);
        CHECK_FALSE(a.from_server);
        CHECK(a.cancel_fetch);
        CHECK_FALSE(c.holding(PieceIndex(1)));
        c.fill_record(r, t0 + 300ms);
        CHECK(r.bytes_server_wasted == 250'000 - 7 * block);
        CHECK(r.bytes_server_useful == 0);
        CHECK(c.tick(sending_piece_1(t0 + 200ms, 15, {})).release.empty());
    }
}

TEST_CASE("a piece whose missing blocks are all on their way costs the server nothing",
          "[client][controller]") {
    const auto tuning = roomy();
    StreamController c(geometry(), setup(), tuning, t0);
    auto plan = c.tick(sending_piece_1(t0, 13, {14, 15}));
    CHECK(fetch_of(plan, 1) == nullptr);
    CHECK(c.holding(PieceIndex(1)));
    // Nor is it asked of peers again meanwhile.
    CHECK(plan.pieces.priority[1] == 0);

    SECTION("they arrive: peers complete it") {
        // Being checked: not fetched, not released.
        auto next = c.tick(sending_piece_1(t0 + 200ms, 15, {}));
        CHECK(next.release.empty());
        CHECK(fetch_of(next, 1) == nullptr);
        auto a = c.on_piece_finished(PieceIndex(1), t0 + 210ms);
        CHECK_FALSE(c.holding(PieceIndex(1)));
        CHECK_FALSE(a.from_server);
        CHECK_FALSE(a.cancel_fetch);
        StatsRecord r;
        c.fill_record(r, t0 + 300ms);
        CHECK(r.bytes_from_server == 0);
        CHECK(r.blocks_awaited == 2);
    }
    SECTION("they arrive and fail the check: the piece is fetched again as any other") {
        REQUIRE(fetch_of(c.tick(sending_piece_1(t0 + 200ms, 15, {})), 1) == nullptr);
        CHECK_FALSE(c.on_hash_failed(PieceIndex(1), t0 + 210ms));
        CHECK_FALSE(c.holding(PieceIndex(1)));
        CHECK_FALSE(c.fallback().in_flight(PieceIndex(1)));
        auto again = c.tick(sample(t0 + 400ms, 1));
        REQUIRE(fetch_of(again, 1) != nullptr);
        CHECK_FALSE(fetch_of(again, 1)->part);
    }
    SECTION("the last one is late: the server sends it") {
        auto next = c.tick(sending_piece_1(t0 + 200ms, 14, {15}));
        CHECK(part_of(next, 1) == PiecePart{Bytes(15 * block), Bytes(250'000 - 15 * block)});
        REQUIRE(c.on_server_data(PieceIndex(1), Bytes(250'000 - 15 * block), t0 + 230ms));
        CHECK_FALSE(c.holding(PieceIndex(1)));
        CHECK(c.on_piece_finished(PieceIndex(1), t0 + 240ms).from_server);
    }
}

TEST_CASE("a fetch with no time to wait takes the arriving blocks too", "[client][controller]") {
    ClientTuning tuning;  // the default lead: piece 1 is fetched at its last moment, half a second ahead
    tuning.fallback.lead_margin = 1000ms;
    tuning.await_guard = 1000ms;
    StreamController c(geometry(), setup(), tuning, t0);
    auto plan = c.tick(sending_piece_1(t0, 4, {5, 6}));
    CHECK(part_of(plan, 1) == PiecePart{Bytes(5 * block), Bytes(250'000 - 5 * block)});
    CHECK_FALSE(c.holding(PieceIndex(1)));
}

TEST_CASE("no blocks are awaited while the server refuses pieces: its answers may come late",
          "[client][controller]") {
    const auto tuning = roomy();
    StreamController c(geometry(), setup(), tuning, t0);
    // Piece 30's block is lost on the server.
    c.on_fetch_failed(PieceIndex(30), FetchFault::piece);
    auto plan = c.tick(sending_piece_1(t0, 4, {5, 6, 7}));
    CHECK(part_of(plan, 1) == PiecePart{Bytes(5 * block), Bytes(250'000 - 5 * block)});
    CHECK_FALSE(c.holding(PieceIndex(1)));
}
