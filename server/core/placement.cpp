#include "server/core/placement.hpp"

#include <limits>

namespace toast::server {

std::size_t replica_count(PlacementPolicy policy) {
    return policy == PlacementPolicy::raid1 || policy == PlacementPolicy::rda ? 2 : 1;
}

std::string placement_problem(PlacementPolicy policy, std::size_t disk_count) {
    if (disk_count == 0) return "no disks configured";
    if (policy == PlacementPolicy::rda && disk_count < 2) return "rda needs at least 2 disks";
    if (policy == PlacementPolicy::raid1 && disk_count % 2 != 0) {
        return "raid1 needs an even number of disks, got " + std::to_string(disk_count);
    }
    if (disk_count > std::numeric_limits<std::uint32_t>::max()) return "too many disks";
    return {};
}

std::uint64_t title_seed(std::uint64_t seed, std::string_view title) {
    // FNV-1a over the name, then one splitmix64 round so nearby seeds and similar names spread apart.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : title) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    std::uint64_t z = seed ^ h;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound) {
    // Accept draws below the largest multiple of `bound`; the rest would favour small values.
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                (std::numeric_limits<std::uint64_t>::max() % bound + 1) % bound;
    for (;;) {
        std::uint64_t x = engine();
        if (x <= limit) return x % bound;
    }
}

Placement place_blocks(PlacementPolicy policy, std::size_t block_count, std::size_t disk_count,
                       std::uint64_t seed, std::string_view title) {
    std::mt19937_64 engine(title_seed(seed, title));
    const auto disks = static_cast<std::uint64_t>(disk_count);
    Placement p;
    p.replicas.reserve(block_count);
    switch (policy) {
        case PlacementPolicy::naive: {
            auto disk = static_cast<std::uint32_t>(uniform_below(engine, disks));
            for (std::size_t b = 0; b < block_count; ++b)
                p.replicas.push_back({disk});
            break;
        }
        case PlacementPolicy::raid0:
            for (std::size_t b = 0; b < block_count; ++b)
                p.replicas.push_back({static_cast<std::uint32_t>(b % disk_count)});
            break;
        case PlacementPolicy::raid1: {
            auto pair = static_cast<std::uint32_t>(uniform_below(engine, disks / 2));
            for (std::size_t b = 0; b < block_count; ++b)
                p.replicas.push_back({2 * pair, 2 * pair + 1});
            break;
        }
        case PlacementPolicy::random:
            for (std::size_t b = 0; b < block_count; ++b)
                p.replicas.push_back({static_cast<std::uint32_t>(uniform_below(engine, disks))});
            break;
        case PlacementPolicy::rda:
            for (std::size_t b = 0; b < block_count; ++b) {
                auto first = uniform_below(engine, disks);
                // A uniform draw among the other D-1 disks, shifted past the first: distinct by construction.
                auto second = uniform_below(engine, disks - 1);
                if (second >= first) ++second;
                p.replicas.push_back({static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(second)});
            }
            break;
    }
    return p;
}

}  // namespace toast::server
