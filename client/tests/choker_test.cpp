#include <map>

#include <catch2/catch.hpp>

#include "client/core/choker.hpp"

using namespace std::chrono_literals;
using toast::client::chain_min_gap;
using toast::client::chain_position;
using toast::client::ChokeCandidate;
using toast::client::choker_unchoke_set;
using toast::client::ChokerState;
using toast::client::estimated_first_missing;
using toast::client::estimated_position;
using toast::client::leader_rank;
using toast::client::leader_slots;
using toast::client::nearest_behind_rank;
using toast::client::nearest_behind_slots;
using toast::client::PeerSighting;
using toast::client::PeerSightings;
using toast::client::PieceCount;
using toast::client::PieceIndex;
using toast::client::PieceSet;
using toast::client::spaced_behind_rank;

namespace {
const auto kSomeTime = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
}  // namespace

TEST_CASE("the seed choker keeps the peers we upload to fastest", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 100, true}, {2, 900, true}, {3, 500, true}, {4, 700, false}};
    ChokerState state;
    auto unchoke = choker_unchoke_set(peers, 2, true, 3, state);
    // Slots go to 2 and 3 (fastest interested); the only other interested peer gets the optimistic slot.
    CHECK(unchoke == std::set<std::uint64_t>{1, 2, 3});
    CHECK(state.optimistic_id == 1);
}

TEST_CASE("the seed choker never unchokes a peer that is not interested", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 100, false}, {2, 900, false}};
    ChokerState state;
    CHECK(choker_unchoke_set(peers, 4, true, 3, state).empty());
}

TEST_CASE("the seed choker rotates the optimistic slot among choked peers", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 1000, true}, {5, 10, true}, {7, 20, true}, {9, 30, true}};
    ChokerState state;
    std::vector<std::uint64_t> holders;
    for (int tick = 0; tick < 6; ++tick) {
        auto unchoke = choker_unchoke_set(peers, 1, true, 2, state);
        REQUIRE(unchoke.size() == 2);
        REQUIRE(unchoke.count(1) == 1);
        holders.push_back(state.optimistic_id);
    }
    CHECK(holders == std::vector<std::uint64_t>{5, 5, 7, 7, 9, 9});
}

TEST_CASE("a re-rank between ticks keeps the optimistic holder and its turn", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 1000, true}, {5, 10, true}, {7, 20, true}};
    ChokerState state;
    REQUIRE(choker_unchoke_set(peers, 1, true, 2, state) == std::set<std::uint64_t>{1, 5});
    // A newly interested peer between ticks: answered at once, the rotation not advanced.
    peers.push_back({3, 2000, true});
    for (int i = 0; i < 3; ++i)
        CHECK(choker_unchoke_set(peers, 1, true, 2, state, false) == std::set<std::uint64_t>{3, 5});
    CHECK(state.optimistic_id == 5);
    CHECK(state.ticks_left == 1);
    // The ticks go on where they were: one more for peer 5, then the next.
    CHECK(choker_unchoke_set(peers, 1, true, 2, state) == std::set<std::uint64_t>{3, 5});
    CHECK(choker_unchoke_set(peers, 1, true, 2, state) == std::set<std::uint64_t>{3, 7});
}

TEST_CASE("ties in upload rate are broken by peer id", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{4, 50, true}, {2, 50, true}, {3, 50, true}};
    ChokerState state;
    auto unchoke = choker_unchoke_set(peers, 1, true, 1, state);
    CHECK(unchoke.count(2) == 1);
    CHECK(unchoke.size() == 2);
}

TEST_CASE("the nearest-behind rank puts the peer just behind us first", "[client][choker]") {
    PieceIndex ours(100);
    // Behind us: nearer ranks higher.
    CHECK(nearest_behind_rank(PieceIndex(99), ours) > nearest_behind_rank(PieceIndex(60), ours));
    CHECK(nearest_behind_rank(PieceIndex(60), ours) > nearest_behind_rank(PieceIndex(0), ours));
    // Level with us or ahead (interested in pieces we fetched ahead): after every peer behind, nearer first.
    CHECK(nearest_behind_rank(PieceIndex(0), ours) > nearest_behind_rank(PieceIndex(100), ours));
    CHECK(nearest_behind_rank(PieceIndex(100), ours) > nearest_behind_rank(PieceIndex(101), ours));
    CHECK(nearest_behind_rank(PieceIndex(101), ours) > nearest_behind_rank(PieceIndex(400), ours));
}

TEST_CASE("a viewer's regular slot goes to the peer just behind it, the rest rotate", "[client][choker]") {
    // We lack piece 50. Peers: 1 at 10, 2 at 45 (just behind), 3 at 30, 4 ahead at 70, 5 at 48 but not
    // interested.
    PieceIndex ours(50);
    auto c = [&](std::uint64_t id, int fm, bool interested) {
        return ChokeCandidate{id, nearest_behind_rank(PieceIndex(fm), ours), interested};
    };
    std::vector<ChokeCandidate> peers{c(1, 10, true), c(2, 45, true), c(3, 30, true), c(4, 70, true),
                                      c(5, 48, false)};
    ChokerState state;
    auto split = nearest_behind_slots(2);
    CHECK(split.regular == 1);
    CHECK(split.optimistic);
    CHECK(nearest_behind_slots(4).regular == 3);
    std::vector<std::uint64_t> optimistic;
    for (int tick = 0; tick < 3; ++tick) {
        auto unchoke = choker_unchoke_set(peers, split.regular, split.optimistic, 1, state);
        REQUIRE(unchoke.size() == 2);
        CHECK(unchoke.count(2) == 1);
        CHECK(unchoke.count(5) == 0);
        optimistic.push_back(state.optimistic_id);
    }
    CHECK(optimistic == std::vector<std::uint64_t>{1, 3, 4});
}

TEST_CASE("a seed's regular slot goes to the viewer furthest along", "[client][choker]") {
    PieceIndex ours(200);  // a 200-piece title, complete
    std::vector<ChokeCandidate> peers{{1, nearest_behind_rank(PieceIndex(20), ours), true},
                                      {2, nearest_behind_rank(PieceIndex(180), ours), true},
                                      {3, nearest_behind_rank(PieceIndex(90), ours), true}};
    ChokerState state;
    auto unchoke = choker_unchoke_set(peers, 1, true, 3, state);
    CHECK(unchoke.count(2) == 1);
    CHECK(unchoke.size() == 2);
}

TEST_CASE("a piece set's first missing piece", "[client][choker]") {
    PieceSet s(PieceCount(4));
    CHECK(s.first_missing() == PieceIndex(0));
    s.set(PieceIndex(0));
    s.set(PieceIndex(2));
    CHECK(s.first_missing() == PieceIndex(1));
    s.set(PieceIndex(1));
    s.set(PieceIndex(3));
    CHECK(s.first_missing() == PieceIndex(4));
}

TEST_CASE("a single nearest-behind slot is a regular one: no optimistic unchoke", "[client][choker]") {
    auto split = nearest_behind_slots(1);
    CHECK(split.regular == 1);
    CHECK_FALSE(split.optimistic);
    std::vector<ChokeCandidate> peers{{1, 10, true}, {2, 40, true}, {3, 20, true}};
    ChokerState state;
    CHECK(choker_unchoke_set(peers, split.regular, split.optimistic, 3, state) == std::set<std::uint64_t>{2});
    CHECK(state.optimistic_id == 0);
}

TEST_CASE("a peer behind us is estimated to move on a piece per piece-time from where it was first seen",
          "[client][choker]") {
    auto t0 = kSomeTime;
    PieceCount pieces(1000);
    // Seen at piece 40; its bitfield still says 40 (it never tells us of pieces we have) 10 s later: at
    // 128 ms a piece it has moved on 78 pieces.
    PeerSighting seen{PieceIndex(40), t0};
    CHECK(estimated_first_missing(seen, PieceIndex(40), t0, 128ms, pieces) == PieceIndex(40));
    CHECK(estimated_first_missing(seen, PieceIndex(40), t0 + 10s, 128ms, pieces) == PieceIndex(118));
    // What it told us is a floor: a peer that got further than its pace (it fetched ahead) is where it says.
    CHECK(estimated_first_missing(seen, PieceIndex(300), t0 + 10s, 128ms, pieces) == PieceIndex(300));
    // Never past the title's end.
    CHECK(estimated_first_missing(seen, PieceIndex(40), t0 + 1h, 128ms, pieces) == PieceIndex(1000));
    // Without a piece-time (a title we do not play), only what it told us.
    CHECK(estimated_first_missing(seen, PieceIndex(55), t0 + 10s, std::nullopt, pieces) == PieceIndex(55));
}

TEST_CASE("with estimated positions the peer just behind us outranks a later one that came with pieces",
          "[client][choker]") {
    auto t0 = kSomeTime;
    PieceCount pieces(3000);
    auto piece_time = 128ms;
    // We are at piece 900. Peer 1 arrived 60 s ago with nothing and has told us nothing since; peer 2
    // connected 5 s ago already holding 30 pieces. By their bitfields peer 2 would be nearer (30 > 0); by
    // where they play, peer 1 is (about 468 against 69).
    PieceIndex ours(900);
    auto now = t0 + 60s;
    auto p1 = estimated_first_missing({PieceIndex(0), t0}, PieceIndex(0), now, piece_time, pieces);
    auto p2 = estimated_first_missing({PieceIndex(30), t0 + 55s}, PieceIndex(30), now, piece_time, pieces);
    CHECK(p1 == PieceIndex(468));
    CHECK(p2 == PieceIndex(69));
    std::vector<ChokeCandidate> peers{{2, nearest_behind_rank(p2, ours), true},
                                      {1, nearest_behind_rank(p1, ours), true}};
    ChokerState state;
    auto split = nearest_behind_slots(1);
    CHECK(choker_unchoke_set(peers, split.regular, split.optimistic, 3, state) == std::set<std::uint64_t>{1});
}

TEST_CASE("a client holding the whole title spreads its upload over every peer, in turns",
          "[client][choker]") {
    using toast::client::complete_slots;
    using toast::client::rotating_rank;
    auto split = complete_slots(1);
    CHECK(split.regular == 2);
    CHECK_FALSE(split.optimistic);
    CHECK(complete_slots(4).regular == 4);
    // Ten interested peers; over 50 epochs every one of them is unchoked, none in more than half of them,
    // and the order is the same for the same epoch.
    std::map<std::uint64_t, int> turns;
    for (std::uint64_t epoch = 0; epoch < 50; ++epoch) {
        std::vector<ChokeCandidate> peers;
        for (std::uint64_t id = 1; id <= 10; ++id)
            peers.push_back({id, rotating_rank(id, epoch), true});
        ChokerState state;
        auto unchoke = choker_unchoke_set(peers, split.regular, split.optimistic, 3, state);
        REQUIRE(unchoke.size() == 2);
        for (auto id : unchoke)
            ++turns[id];
    }
    CHECK(turns.size() == 10);
    for (auto [id, n] : turns)
        CHECK(n <= 25);
    CHECK(rotating_rank(7, 3) == rotating_rank(7, 3));
    CHECK(rotating_rank(7, 3) != rotating_rank(7, 4));
}

TEST_CASE("the leader choker gives every slot to the viewers furthest along, none optimistic",
          "[client][choker]") {
    CHECK(leader_slots(1).regular == 1);
    CHECK_FALSE(leader_slots(1).optimistic);
    CHECK(leader_slots(3).regular == 3);
    CHECK_FALSE(leader_slots(3).optimistic);
    CHECK(leader_slots(0).regular == 1);
    std::vector<ChokeCandidate> peers{{1, leader_rank(PieceIndex(20)), true},
                                      {2, leader_rank(PieceIndex(180)), true},
                                      {3, leader_rank(PieceIndex(90)), true},
                                      {4, leader_rank(PieceIndex(199)), false},  // not interested
                                      {5, leader_rank(PieceIndex(0)), true}};
    ChokerState state;
    auto split = leader_slots(1);
    CHECK(choker_unchoke_set(peers, split.regular, split.optimistic, 3, state) == std::set<std::uint64_t>{2});
    split = leader_slots(2);
    // Every tick the same answer: nothing rotates.
    for (int tick = 0; tick < 10; ++tick)
        CHECK(choker_unchoke_set(peers, split.regular, split.optimistic, 3, state) ==
              std::set<std::uint64_t>{2, 3});
}

TEST_CASE("a peer's estimated position keeps fractions of a piece-time", "[client][choker]") {
    auto t0 = kSomeTime;
    PieceCount pieces(250);
    auto pt = 1000ms;
    // Two newcomers seen with nothing 0.5 s apart are half a piece-time apart, not level.
    auto a = estimated_position({PieceIndex(0), t0}, PieceIndex(0), t0 + 10s, pt, pieces);
    auto b = estimated_position({PieceIndex(0), t0 + 500ms}, PieceIndex(0), t0 + 10s, pt, pieces);
    CHECK(a == 10s);
    CHECK(b == 9500ms);
    // What it told us is a floor, the title's end a ceiling.
    CHECK(estimated_position({PieceIndex(0), t0}, PieceIndex(30), t0 + 10s, pt, pieces) == 30s);
    CHECK(estimated_position({PieceIndex(0), t0}, PieceIndex(0), t0 + 1h, pt, pieces) == 250s);
}

TEST_CASE("a viewer stands in a chain only while it plays with an upload limit", "[client][choker]") {
    using toast::BitRate;
    using toast::Bytes;
    using toast::client::ByteOffset;
    using toast::client::PlaybackState;
    using toast::client::StreamWatcher;
    using toast::client::TitleGeometry;
    // 1000-byte pieces at 8000 bit/s: a piece-time of 1 s.
    const auto g = *TitleGeometry::make(Bytes(9500), Bytes(1000), BitRate(8000));
    const auto t0 = kSomeTime;
    StreamWatcher w(g, {}, t0);
    REQUIRE(w.state() == PlaybackState::starting);
    // Starting counts as playing: its position is the start.
    auto p = chain_position(w, g, BitRate(8000));
    REQUIRE(p.min_gap);
    CHECK(*p.min_gap == 1125ms);  // 1 s to send a piece, and an eighth of a piece-time
    CHECK(p.playhead == 0ns);
    w.on_piece_had(PieceIndex(0), t0);
    w.on_piece_had(PieceIndex(1), t0);
    w.tick(t0 + 1500ms);
    REQUIRE(w.state() == PlaybackState::playing);
    CHECK(w.playhead() == ByteOffset(1500));
    p = chain_position(w, g, BitRate(4000));
    CHECK(p.min_gap == 2125ms);
    CHECK(p.playhead == 1500ms);
    // No upload limit: nothing bounds how fast a piece is passed on.
    p = chain_position(w, g, std::nullopt);
    CHECK_FALSE(p.min_gap);
    CHECK_FALSE(p.playhead);
    // Not playing (paused): neither.
    w.pause(t0 + 1500ms);
    REQUIRE(w.state() == PlaybackState::paused);
    p = chain_position(w, g, BitRate(8000));
    CHECK_FALSE(p.min_gap);
    CHECK_FALSE(p.playhead);
}

TEST_CASE("the chain's gap is a piece's upload time and an eighth of a piece-time", "[client][choker]") {
    // 256 KiB at 2 Mbps: 1.048576 s to send, a piece-time of the same at upload = bitrate.
    auto pt = std::chrono::nanoseconds(1'048'576'000);
    auto gap = chain_min_gap(256 * 1024, 2'000'000, pt);
    REQUIRE(gap);
    CHECK(*gap == std::chrono::nanoseconds(1'048'576'000 + 131'072'000));
    // Half the upload: twice the time to send a piece.
    CHECK(*chain_min_gap(256 * 1024, 1'000'000, pt) ==
          std::chrono::nanoseconds(std::int64_t{2'097'152'000} + 131'072'000));
    // Nothing bounds the upload, or no piece-time: none.
    CHECK_FALSE(chain_min_gap(256 * 1024, std::nullopt, pt));
    CHECK_FALSE(chain_min_gap(256 * 1024, 2'000'000, std::nullopt));
    CHECK_FALSE(chain_min_gap(256 * 1024, 0, pt));
}

TEST_CASE("with spacing the slot goes to the nearest peer at least the gap behind our playhead",
          "[client][choker]") {
    // Viewers 0.5 s apart at a 1 s piece-time, a gap of 1.125 s: we play at 100 s and hold up to 130 s.
    // Peers behind at 99.5, 99, 98.5, 98 s: the one at 98.5 s is the nearest at least 1.125 s behind.
    std::chrono::nanoseconds playhead = 100s, first_missing = 130s, gap = 1125ms;
    auto r = [&](std::chrono::nanoseconds at) {
        return spaced_behind_rank(at, playhead, first_missing, gap);
    };
    std::vector<ChokeCandidate> peers{{1, r(99500ms), true},
                                      {2, r(99s), true},
                                      {3, r(98500ms), true},
                                      {4, r(98s), true},
                                      {5, r(140s), true}};
    ChokerState state;
    CHECK(choker_unchoke_set(peers, 1, false, 3, state) == std::set<std::uint64_t>{3});
    // Spaced peers first, nearest first; then the nearer ones, farthest first; then those level or ahead.
    CHECK(r(98500ms) > r(98s));
    CHECK(r(10s) > r(99s));
    CHECK(r(99s) > r(99500ms));
    CHECK(r(99500ms) > r(120s));  // between our playhead and our first missing piece: still behind us
    CHECK(r(120s) > r(130s));
    CHECK(r(130s) > r(140s));
    // Without a spaced peer interested, the farthest of the nearer ones.
    peers[2].interested = false;
    peers[3].interested = false;
    CHECK(choker_unchoke_set(peers, 1, false, 3, state) == std::set<std::uint64_t>{2});
}

TEST_CASE("a peer is sighted once its pieces are known, not from the empty bitfield of its handshake",
          "[client][choker]") {
    const auto t0 = std::chrono::steady_clock::time_point{} + 100s;
    const PieceCount pieces(400);
    PeerSightings ahead;
    // Just connected: nothing told yet, the peer looks to be at the title's start, and nothing is kept.
    const auto early = ahead.sighting(PieceIndex(0), t0);
    CHECK(early.first_missing == PieceIndex(0));
    CHECK(early.at == t0);
    // Its bitfield arrives: it is 90 pieces in. That is the sighting kept, whatever it tells later.
    ahead.pieces_known();
    const auto kept = ahead.sighting(PieceIndex(90), t0 + 1s);
    CHECK(kept.first_missing == PieceIndex(90));
    CHECK(kept.at == t0 + 1s);
    const auto later = ahead.sighting(PieceIndex(95), t0 + 20s);
    CHECK(later.first_missing == PieceIndex(90));
    CHECK(later.at == t0 + 1s);
    // 10 s of 128 ms pieces later it is estimated 78 pieces on from where its bitfield put it. From the
    // handshake's sighting the estimate (85 pieces from 0) would stay at what it told, 90, with no HAVE to
    // move it: level with a viewer at piece 90 that it is in fact far ahead of.
    CHECK(estimated_first_missing(later, PieceIndex(90), t0 + 11s, 128ms, pieces) == PieceIndex(168));
    CHECK(estimated_first_missing(early, PieceIndex(90), t0 + 11s, 128ms, pieces) == PieceIndex(90));
}
