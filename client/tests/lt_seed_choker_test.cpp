#include <catch2/catch.hpp>

#include "client/lt/seed_choker.hpp"

using toast::client::ChokeCandidate;
using toast::client::seed_choker_unchoke_set;
using toast::client::SeedChokerState;

TEST_CASE("the seed choker keeps the peers we upload to fastest", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 100, true}, {2, 900, true}, {3, 500, true}, {4, 700, false}};
    SeedChokerState state;
    auto unchoke = seed_choker_unchoke_set(peers, 2, 3, state);
    // Slots go to 2 and 3 (fastest interested); the only other interested peer gets the optimistic slot.
    CHECK(unchoke == std::set<std::uint64_t>{1, 2, 3});
    CHECK(state.optimistic_id == 1);
}

TEST_CASE("the seed choker never unchokes a peer that is not interested", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 100, false}, {2, 900, false}};
    SeedChokerState state;
    CHECK(seed_choker_unchoke_set(peers, 4, 3, state).empty());
}

TEST_CASE("the seed choker rotates the optimistic slot among choked peers", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{1, 1000, true}, {5, 10, true}, {7, 20, true}, {9, 30, true}};
    SeedChokerState state;
    std::vector<std::uint64_t> holders;
    for (int tick = 0; tick < 6; ++tick) {
        auto unchoke = seed_choker_unchoke_set(peers, 1, 2, state);
        REQUIRE(unchoke.size() == 2);
        REQUIRE(unchoke.count(1) == 1);
        holders.push_back(state.optimistic_id);
    }
    CHECK(holders == std::vector<std::uint64_t>{5, 5, 7, 7, 9, 9});
}

TEST_CASE("ties in upload rate are broken by peer id", "[client][choker]") {
    std::vector<ChokeCandidate> peers{{4, 50, true}, {2, 50, true}, {3, 50, true}};
    SeedChokerState state;
    auto unchoke = seed_choker_unchoke_set(peers, 1, 1, state);
    CHECK(unchoke.count(2) == 1);
    CHECK(unchoke.size() == 2);
}
