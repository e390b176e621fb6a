// How a node of a tier reads a byte range of a title: cut at block boundaries, runs of blocks it holds read
// from its own disks in one go, every other block read from one of that block's holders. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "server/core/title_store.hpp"

namespace toast::server {

struct TierReadPart {
    std::uint64_t offset = 0;  // in the title
    std::uint64_t length = 0;
    bool local = true;
    std::uint64_t block = 0;  // the block of a remote part (a local part may span several)
    bool operator==(const TierReadPart&) const = default;
};

// The parts of [offset, offset + length) of `title`, in order. A title without a tier is one local part.
// Precondition: the range lies within the title.
std::vector<TierReadPart> plan_tier_read(const TitleInfo& title, std::uint64_t offset, std::uint64_t length);

// Whether this node holds every block that [offset, offset + length) touches.
bool holds_range(const TitleInfo& title, std::uint64_t offset, std::uint64_t length);

}  // namespace toast::server
