#include <catch2/catch.hpp>

#include "client/core/operator_tier.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

const SteadyTime t0{std::chrono::seconds(100)};

PieceSet had(int n, std::initializer_list<int> list) {
    PieceSet s{PieceCount(n)};
    for (int p : list)
        s.set(PieceIndex(p));
    return s;
}

// 20 pieces of a second each, the playhead at piece 2, a reach of 5 s: pieces 2..7 are within it.
struct Bed {
    PieceSet have = had(20, {0, 1, 2});
    std::vector<int> viewers = std::vector<int>(20, 1);
    OperatorTierInput input() const {
        OperatorTierInput in{have, PieceIndex(2), 1s, 0s, 5s, &viewers};
        in.viewers = 3;
        in.running = 60s;
        return in;
    }
};

}  // namespace

TEST_CASE("the operator's peers are left alone while viewers hold every piece within the fallback's reach",
          "[client][operator_tier]") {
    Bed bed;
    OperatorTier tier;
    CHECK_FALSE(tier.update(bed.input(), t0));
    CHECK(tier.reason() == OperatorNeed::none);
    // Pieces past the reach that nobody holds are not the operator's business yet.
    bed.viewers[8] = 0;
    bed.viewers[19] = 0;
    CHECK_FALSE(tier.update(bed.input(), t0 + 1s));
    CHECK(tier.turned_on() == 0);
}

TEST_CASE("a missing piece within the reach that no viewer holds asks the operator's peers",
          "[client][operator_tier]") {
    Bed bed;
    bed.viewers[7] = 0;  // due in exactly 5 s: inside the reach
    OperatorTier tier;
    CHECK(tier.update(bed.input(), t0));
    CHECK(tier.reason() == OperatorNeed::unheld_piece);
    CHECK(tier.turned_on() == 1);

    // Had, it no longer counts.
    Bed held;
    held.viewers[7] = 0;
    held.have.set(PieceIndex(7));
    OperatorTier other;
    CHECK_FALSE(other.update(held.input(), t0));
}

TEST_CASE("the reach counts from where the playhead is inside its piece", "[client][operator_tier]") {
    Bed bed;
    bed.viewers[8] = 0;  // 6 s from the start of piece 2
    OperatorTier tier;
    CHECK_FALSE(tier.update(bed.input(), t0));
    auto in = bed.input();
    in.into_playhead_piece = 1s;  // now 5 s away
    CHECK(tier.update(in, t0));
}

TEST_CASE("the operator's peers stay asked for the hold after the last reason, then are left alone",
          "[client][operator_tier]") {
    Bed bed;
    OperatorTier tier(OperatorTierConfig{4s});
    bed.viewers[5] = 0;
    REQUIRE(tier.update(bed.input(), t0));
    bed.viewers[5] = 1;  // a viewer has it now
    CHECK(tier.update(bed.input(), t0 + 1s));
    CHECK(tier.reason() == OperatorNeed::unheld_piece);
    CHECK(tier.update(bed.input(), t0 + 3999ms));
    CHECK_FALSE(tier.update(bed.input(), t0 + 4s));
    CHECK(tier.reason() == OperatorNeed::none);
    // A new reason starts a new hold and counts as a new turn.
    bed.viewers[6] = 0;
    CHECK(tier.update(bed.input(), t0 + 5s));
    bed.viewers[6] = 1;
    CHECK(tier.update(bed.input(), t0 + 8s));
    CHECK_FALSE(tier.update(bed.input(), t0 + 9s));
    CHECK(tier.turned_on() == 2);
}

TEST_CASE("viewers late with a piece they hold ask the operator's peers, bitfields or not",
          "[client][operator_tier]") {
    Bed bed;
    OperatorTier tier(OperatorTierConfig{2s});
    auto in = bed.input();
    in.late = true;
    CHECK(tier.update(in, t0));
    CHECK(tier.reason() == OperatorNeed::late_viewers);
    in.late = false;
    CHECK(tier.update(in, t0 + 1s));
    CHECK_FALSE(tier.update(in, t0 + 2s));

    in.viewer_availability = nullptr;
    in.late = true;
    CHECK(tier.update(in, t0 + 3s));
}

TEST_CASE("lateness in the box's first seconds is the server's business", "[client][operator_tier]") {
    Bed bed;
    OperatorTier tier(OperatorTierConfig{5s, 7s});
    auto in = bed.input();
    in.late = true;
    in.running = 6999ms;  // its peers are still reaching their rate
    CHECK_FALSE(tier.update(in, t0));
    in.running = 7s;
    CHECK(tier.update(in, t0 + 1ms));
    CHECK(tier.reason() == OperatorNeed::late_viewers);
}

TEST_CASE("before the peers' bitfields are in, a piece nobody seems to hold asks nothing",
          "[client][operator_tier]") {
    Bed bed;
    std::fill(bed.viewers.begin(), bed.viewers.end(), 0);
    auto in = bed.input();
    in.viewer_availability = nullptr;
    OperatorTier tier;
    CHECK_FALSE(tier.update(in, t0));
    in.viewer_availability = &bed.viewers;
    CHECK(tier.update(in, t0 + 2s));
    CHECK(tier.reason() == OperatorNeed::unheld_piece);
}

TEST_CASE("with no viewer connected the operator's peers are the swarm", "[client][operator_tier]") {
    Bed bed;
    auto in = bed.input();
    in.viewers = 0;
    OperatorTier tier;
    CHECK(tier.update(in, t0));
    CHECK(tier.reason() == OperatorNeed::no_viewers);
}

TEST_CASE("pieces a bounded buffer does not ask for yet do not ask the operator's peers",
          "[client][operator_tier]") {
    Bed bed;
    bed.viewers[5] = 0;
    auto in = bed.input();
    in.request_end = PieceIndex(5);
    OperatorTier tier;
    CHECK_FALSE(tier.update(in, t0));
    in.request_end = PieceIndex(6);
    CHECK(tier.update(in, t0 + 1s));
}

TEST_CASE("a complete title asks the operator's peers nothing", "[client][operator_tier]") {
    Bed bed;
    for (int p = 0; p < 20; ++p)
        bed.have.set(PieceIndex(p));
    std::fill(bed.viewers.begin(), bed.viewers.end(), 0);
    OperatorTier tier;
    CHECK_FALSE(tier.update(bed.input(), t0));
    CHECK(to_string(OperatorNeed::unheld_piece) == "a piece no viewer holds");
}
