// Block placement: which disks hold each block of a title (thesis ch. 4). Pure: the layout is a function of
// the policy, the counts, the configured seed and the title name, so the same inputs give the same layout on
// any standard library (the RNG is std::mt19937_64 and the sampling is ours, not std::*_distribution).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "server/core/server_config.hpp"

namespace toast::server {

// replicas[b] lists the disks holding block b: one disk, or two distinct disks for raid1 and rda.
struct Placement {
    std::vector<std::vector<std::uint32_t>> replicas;
};

// Replicas per block under `policy` (2 for raid1 and rda, else 1).
std::size_t replica_count(PlacementPolicy policy);

// Empty string when `policy` can lay blocks over `disk_count` disks, else the reason
// ("rda needs at least 2 disks").
std::string placement_problem(PlacementPolicy policy, std::size_t disk_count);

// The layout of `block_count` blocks. Precondition: placement_problem(policy, disk_count) is empty.
//   naive:  every block on one disk, drawn per title
//   raid0:  block b on disk b mod D (every title starts on disk 0, as in the thesis's RAID-0)
//   raid1:  every block on one mirrored pair (disks 2p and 2p+1), the pair drawn per title
//   random: each block on one uniformly drawn disk
//   rda:    each block on two distinct uniformly drawn disks (random duplicate allocation)
Placement place_blocks(PlacementPolicy policy, std::size_t block_count, std::size_t disk_count,
                       std::uint64_t seed, std::string_view title);

// The engine seed for a title: the configured seed mixed with a hash of the name, so titles ingested with the
// same configured seed still get independent layouts.
std::uint64_t title_seed(std::uint64_t seed, std::string_view title);

// A uniform integer in [0, bound) from the raw engine, without modulo bias (rejection of the short tail).
// Precondition: bound > 0.
std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound);

}  // namespace toast::server
