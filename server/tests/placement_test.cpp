#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <set>

#include "server/core/placement.hpp"

using namespace toast::server;

namespace {

std::vector<std::size_t> replicas_per_disk(const Placement& p, std::size_t disks) {
    std::vector<std::size_t> counts(disks, 0);
    for (const auto& r : p.replicas)
        for (auto d : r)
            ++counts.at(d);
    return counts;
}

}  // namespace

TEST_CASE("rda puts every block on two distinct disks", "[server][placement]") {
    for (std::size_t disks : {2, 3, 4, 8}) {
        auto p = place_blocks(PlacementPolicy::rda, 2000, disks, 7, "movie");
        REQUIRE(p.replicas.size() == 2000);
        for (const auto& r : p.replicas) {
            REQUIRE(r.size() == 2);
            CHECK(r[0] != r[1]);
            CHECK(r[0] < disks);
            CHECK(r[1] < disks);
        }
    }
}

TEST_CASE("rda spreads replicas and disk pairs near-uniformly for a fixed seed", "[server][placement]") {
    // 8000 blocks x 2 replicas over 4 disks: 4000 expected per disk, binomial sd ~55; 5% (200) is ~3.6 sd.
    auto p = place_blocks(PlacementPolicy::rda, 8000, 4, 1, "movie");
    for (auto n : replicas_per_disk(p, 4)) {
        CHECK(n >= 3800);
        CHECK(n <= 4200);
    }
    // Each of the 6 unordered pairs ~1333 (sd ~33); 10% is ~4 sd.
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> pairs;
    for (const auto& r : p.replicas)
        ++pairs[{std::min(r[0], r[1]), std::max(r[0], r[1])}];
    CHECK(pairs.size() == 6);
    for (const auto& [pair, n] : pairs) {
        CHECK(n >= 1200);
        CHECK(n <= 1467);
    }
    // Which replica is listed first is also unbiased (the chooser's tie-break relies on it).
    std::vector<int> first(4, 0);
    for (const auto& r : p.replicas)
        ++first[r[0]];
    for (auto n : first) {
        CHECK(n >= 1850);
        CHECK(n <= 2150);
    }
}

TEST_CASE("random puts each block on one disk, near-uniformly", "[server][placement]") {
    // 8000 blocks over 8 disks: 1000 expected, sd ~30; 12% is ~4 sd.
    auto p = place_blocks(PlacementPolicy::random, 8000, 8, 3, "movie");
    for (const auto& r : p.replicas)
        REQUIRE(r.size() == 1);
    for (auto n : replicas_per_disk(p, 8)) {
        CHECK(n >= 880);
        CHECK(n <= 1120);
    }
}

TEST_CASE("raid0 stripes round-robin from disk 0", "[server][placement]") {
    auto p = place_blocks(PlacementPolicy::raid0, 10, 4, 9, "movie");
    for (std::size_t b = 0; b < 10; ++b)
        CHECK(p.replicas[b] == std::vector<std::uint32_t>{static_cast<std::uint32_t>(b % 4)});
}

TEST_CASE("raid1 keeps a title on one mirrored pair and titles use every pair", "[server][placement]") {
    std::set<std::uint32_t> pairs_used;
    for (int t = 0; t < 200; ++t) {
        auto p = place_blocks(PlacementPolicy::raid1, 20, 6, 1, "title" + std::to_string(t));
        const auto first = p.replicas[0];
        REQUIRE(first.size() == 2);
        CHECK(first[0] % 2 == 0);
        CHECK(first[1] == first[0] + 1);
        for (const auto& r : p.replicas)
            CHECK(r == first);
        pairs_used.insert(first[0] / 2);
    }
    CHECK(pairs_used == std::set<std::uint32_t>{0, 1, 2});
}

TEST_CASE("naive keeps a title on one disk and spreads titles over the disks", "[server][placement]") {
    // 400 titles over 4 disks: 100 expected per disk, sd ~8.7; 35% is ~4 sd.
    std::vector<int> per_disk(4, 0);
    for (int t = 0; t < 400; ++t) {
        auto p = place_blocks(PlacementPolicy::naive, 5, 4, 1, "title" + std::to_string(t));
        for (const auto& r : p.replicas)
            CHECK(r == p.replicas[0]);
        ++per_disk[p.replicas[0][0]];
    }
    for (auto n : per_disk) {
        CHECK(n >= 65);
        CHECK(n <= 135);
    }
}

TEST_CASE("the same seed and title give the same layout, pinned across builds", "[server][placement]") {
    for (auto policy : {PlacementPolicy::naive, PlacementPolicy::raid0, PlacementPolicy::raid1,
                        PlacementPolicy::random, PlacementPolicy::rda}) {
        CHECK(place_blocks(policy, 500, 4, 11, "movie").replicas ==
              place_blocks(policy, 500, 4, 11, "movie").replicas);
    }
    // std::mt19937_64 is fully specified and the sampling is ours, so these values hold on every platform.
    using R = std::vector<std::vector<std::uint32_t>>;
    CHECK(place_blocks(PlacementPolicy::rda, 6, 4, 1, "movie").replicas ==
          R{{0, 2}, {0, 1}, {3, 1}, {1, 3}, {3, 2}, {0, 2}});
    CHECK(place_blocks(PlacementPolicy::random, 6, 8, 42, "movie").replicas ==
          R{{3}, {5}, {0}, {6}, {0}, {0}});
}

TEST_CASE("a different seed or title gives a different layout", "[server][placement]") {
    const auto base = place_blocks(PlacementPolicy::rda, 200, 8, 1, "movie").replicas;
    CHECK(place_blocks(PlacementPolicy::rda, 200, 8, 2, "movie").replicas != base);
    CHECK(place_blocks(PlacementPolicy::rda, 200, 8, 1, "movie2").replicas != base);
    CHECK(title_seed(1, "a") != title_seed(1, "b"));
    CHECK(title_seed(1, "a") != title_seed(2, "a"));
}

TEST_CASE("uniform_below stays in range and has no modulo bias", "[server][placement]") {
    std::mt19937_64 engine(5);
    for (int i = 0; i < 100; ++i)
        CHECK(uniform_below(engine, 1) == 0);
    // Bound 3 * 2^62: plain modulo would map the top quarter of the engine's range onto [0, 2^62) and
    // return values below 2^62 half the time instead of a third.
    const std::uint64_t big = std::uint64_t{3} << 62;
    int low = 0;
    for (int i = 0; i < 3000; ++i) {
        auto v = uniform_below(engine, big);
        REQUIRE(v < big);
        if (v < (std::uint64_t{1} << 62)) ++low;
    }
    // Unbiased: ~1000 (sd ~26); modulo bias would give ~1500.
    CHECK(low > 900);
    CHECK(low < 1100);
    std::array<int, 3> counts{};
    for (int i = 0; i < 30000; ++i)
        ++counts[uniform_below(engine, 3)];
    for (auto n : counts) {
        CHECK(n > 9600);
        CHECK(n < 10400);
    }
}

TEST_CASE("policies that cannot fit the disks are refused with a reason", "[server][placement]") {
    CHECK(placement_problem(PlacementPolicy::rda, 1) == "rda needs at least 2 disks");
    CHECK(placement_problem(PlacementPolicy::raid1, 3) == "raid1 needs an even number of disks, got 3");
    CHECK(placement_problem(PlacementPolicy::naive, 0) == "no disks configured");
    CHECK(placement_problem(PlacementPolicy::rda, 2).empty());
    CHECK(placement_problem(PlacementPolicy::naive, 1).empty());
    CHECK(replica_count(PlacementPolicy::rda) == 2);
    CHECK(replica_count(PlacementPolicy::raid1) == 2);
    CHECK(replica_count(PlacementPolicy::raid0) == 1);
}
