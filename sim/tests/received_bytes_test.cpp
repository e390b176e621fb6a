#include <catch2/catch.hpp>

#include "sim/core/received_bytes.hpp"

using toast::sim::ReceivedBytes;

TEST_CASE("received bytes merge into disjoint spans and answer gaps", "[sim][swarm]") {
    ReceivedBytes r;
    CHECK(r.gap_from(0, 100) == std::pair<std::uint64_t, std::uint64_t>{0, 100});
    r.add(10, 20);
    r.add(30, 40);
    CHECK(r.spans().size() == 2);
    CHECK(r.gap_from(0, 100) == std::pair<std::uint64_t, std::uint64_t>{0, 10});
    CHECK(r.gap_from(10, 100) == std::pair<std::uint64_t, std::uint64_t>{20, 30});
    r.add(20, 30);
    CHECK(r.spans().size() == 1);
    CHECK(r.covers(10, 40));
    CHECK(!r.covers(5, 40));
    CHECK(r.total() == 30);
    r.add(0, 10);
    r.add(35, 100);
    CHECK(r.covers(0, 100));
    CHECK(r.gap_from(0, 100) == std::pair<std::uint64_t, std::uint64_t>{100, 100});
}

TEST_CASE("received bytes hold exactly the bytes added, in the fewest spans", "[sim][swarm]") {
    // Against a byte map: random spans over a 64-byte piece, including touching and nested ones.
    std::uint64_t state = 12345;
    auto next = [&state](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
    };
    for (int round = 0; round < 200; ++round) {
        ReceivedBytes r;
        std::vector<bool> here(64, false);
        for (int k = 0; k < 8; ++k) {
            const auto a = next(64);
            const auto b = a + next(65 - a);
            r.add(a, b);
            for (auto i = a; i < b; ++i)
                here[i] = true;
            std::vector<std::pair<std::uint64_t, std::uint64_t>> want;
            for (std::uint64_t i = 0; i < 64; ++i) {
                if (!here[i]) continue;
                if (!want.empty() && want.back().second == i) {
                    want.back().second = i + 1;
                } else {
                    want.emplace_back(i, i + 1);
                }
            }
            REQUIRE(r.spans() == want);
        }
        r.clear();
        CHECK(r.empty());
    }
}
