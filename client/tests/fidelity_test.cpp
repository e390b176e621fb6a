#include <catch2/catch.hpp>

#include "client/core/fidelity.hpp"

using namespace toast::client;

namespace {

std::vector<PieceIndex> range(int from, int to) {
    std::vector<PieceIndex> out;
    for (int i = from; i < to; ++i)
        out.emplace_back(i);
    return out;
}

}  // namespace

TEST_CASE("fidelity is undefined until a piece arrives", "[client][fidelity]") {
    FidelityMeter m(4);
    CHECK_FALSE(m.fidelity());
    m.on_plan(range(0, 10));
    CHECK_FALSE(m.fidelity());
    CHECK_FALSE(m.mean_rank_fraction());
}

TEST_CASE("arrivals in the planned order have fidelity one", "[client][fidelity]") {
    FidelityMeter m(1);
    m.on_plan(range(0, 100));
    for (int i = 0; i < 100; ++i)
        m.on_arrival(PieceIndex(i));
    CHECK(m.arrivals() == 100);
    CHECK(m.hits() == 100);
    CHECK(*m.fidelity() == 1.0);
    CHECK(*m.mean_rank_fraction() == 0.0);
}

TEST_CASE("arrivals in reverse order of an in-order plan score only the top-k tail", "[client][fidelity]") {
    FidelityMeter m(4);
    m.on_plan(range(0, 100));
    for (int i = 99; i >= 0; --i)
        m.on_arrival(PieceIndex(i));
    // Only once 4 pieces remain are the arrivals among the top 4.
    CHECK(m.hits() == 4);
    CHECK(*m.fidelity() == Approx(0.04));
    CHECK(*m.mean_rank_fraction() > 0.9);
}

TEST_CASE("a piece outside the plan is a miss and a new plan replaces the ranks", "[client][fidelity]") {
    FidelityMeter m(2);
    m.on_plan(range(10, 20));
    m.on_arrival(PieceIndex(5));   // not wanted: miss
    m.on_arrival(PieceIndex(11));  // rank 1: hit
    m.on_arrival(PieceIndex(19));  // rank 8 of the remaining: miss
    m.on_plan({PieceIndex(19), PieceIndex(3)});
    m.on_arrival(PieceIndex(3));   // rank 1: hit
    m.on_arrival(PieceIndex(12));  // no longer in the plan: miss
    m.on_arrival(PieceIndex(-1));  // nonsense index: miss, no crash
    CHECK(m.arrivals() == 6);
    CHECK(m.hits() == 2);
    CHECK(*m.fidelity() == Approx(2.0 / 6.0));
}
