#include <catch2/catch.hpp>

#include <algorithm>

#include "client/core/peer_admission.hpp"

using namespace toast::client;
using namespace std::chrono_literals;

namespace {

// 40 pieces of 1 s each, playhead at 0, the in-order policy's plan (zone: the first 3 pieces given up).
struct Fixture {
    SwarmSnapshot snap = SwarmSnapshot::empty(PieceCount(40));
    PiecePlan plan;
    Fixture() {
        snap.piece_duration = 1000ms;
        snap.horizon = PieceCount(3);
        plan = make_policy(PickerKind::inorder, {})->plan(snap);
    }
};

std::vector<int> values(const std::vector<PieceIndex>& v) {
    std::vector<int> out;
    for (auto p : v)
        out.push_back(p.value());
    return out;
}

}  // namespace

TEST_CASE("peers fast enough for the bitrate keep every piece past the zone", "[client][admission]") {
    Fixture f;
    auto before = f.plan;
    // Zone 3 s; one piece takes 0.5 s from peers: piece k (slack k - 3 s) fits any load up to 2(k - 3).
    auto r = drop_undeliverable(f.plan, f.snap, 3s, 500ms);
    CHECK(r.dropped == 1);  // piece 3: slack 0 fits no delivery at all
    CHECK(f.plan.wanted.front() == PieceIndex(4));
    CHECK(f.plan.wanted.size() == before.wanted.size() - 1);
    CHECK(f.plan.priority[3] == 0);
}

TEST_CASE("peers at half the bitrate are asked for every other piece past the zone", "[client][admission]") {
    Fixture f;
    // One piece takes 2 s: the k-th kept piece needs 2(k + 1) s of slack. Piece 3 + j has j s of slack.
    auto r = drop_undeliverable(f.plan, f.snap, 3s, 2000ms);
    auto kept = values(f.plan.wanted);
    REQUIRE(kept.size() >= 4);
    CHECK(std::vector<int>(kept.begin(), kept.begin() + 4) == std::vector<int>{5, 7, 9, 11});
    CHECK(r.dropped > 15);
    for (int p : {3, 4, 6, 8, 10})
        CHECK(f.plan.priority[static_cast<std::size_t>(p)] == 0);
    CHECK(f.plan.priority[5] > 0);
    // Deadlines follow: none is left on a dropped piece.
    for (const auto& d : f.plan.deadlines)
        CHECK(std::find(f.plan.wanted.begin(), f.plan.wanted.end(), d.piece) != f.plan.wanted.end());
}

TEST_CASE("a piece the server refused stays wanted however little time is left", "[client][admission]") {
    Fixture f;
    f.snap.refused = PieceSet(PieceCount(40));
    f.snap.refused.set(PieceIndex(3));
    // Piece 3 has no slack at all past the 3 s zone; refused by the server, peers are its only source.
    auto r = drop_undeliverable(f.plan, f.snap, 3s, 500ms);
    CHECK(r.dropped == 0);
    CHECK(f.plan.wanted.front() == PieceIndex(3));
}

TEST_CASE("a piece peers already started stays wanted and counts as load", "[client][admission]") {
    Fixture f;
    f.snap.in_flight.set(PieceIndex(3));
    drop_undeliverable(f.plan, f.snap, 3s, 2000ms);
    auto kept = values(f.plan.wanted);
    REQUIRE(kept.size() >= 3);
    // 3 is kept (started) and takes the first delivery: the next kept piece needs 4 s of slack (piece 7).
    CHECK(std::vector<int>(kept.begin(), kept.begin() + 3) == std::vector<int>{3, 7, 9});
}

TEST_CASE("without a peer rate nothing is dropped", "[client][admission]") {
    Fixture f;
    auto before = f.plan;
    CHECK(drop_undeliverable(f.plan, f.snap, 3s, 0ns).dropped == 0);
    CHECK(f.plan == before);
}

TEST_CASE("far pieces of a spread-out plan are kept, near ones dropped", "[client][admission]") {
    Fixture f;
    f.plan = make_policy(PickerKind::rarest, {})->plan(f.snap);
    drop_undeliverable(f.plan, f.snap, 3s, 2000ms);
    // Slack-ordered: 2(k + 1) <= slack. 37 pieces past the zone fit about 18 deliveries.
    CHECK(f.plan.wanted.size() == 18);
    CHECK(f.plan.priority[39] > 0);
    CHECK(f.plan.priority[3] == 0);
}
