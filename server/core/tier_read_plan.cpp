#include "server/core/tier_read_plan.hpp"

#include "server/core/block_math.hpp"

namespace toast::server {

std::vector<TierReadPart> plan_tier_read(const TitleInfo& title, std::uint64_t offset, std::uint64_t length) {
    if (length == 0) return {};
    if (!title.tier) return {TierReadPart{offset, length, true, 0}};
    std::vector<TierReadPart> parts;
    for (const auto& piece : split_range(offset, length, title.size, title.block_size)) {
        const auto at = piece.block * title.block_size + piece.offset;
        const bool local = title.tier->holds(piece.block);
        if (local && !parts.empty() && parts.back().local) {
            parts.back().length += piece.length;
            continue;
        }
        parts.push_back(TierReadPart{at, piece.length, local, piece.block});
    }
    return parts;
}

bool holds_range(const TitleInfo& title, std::uint64_t offset, std::uint64_t length) {
    if (!title.tier) return true;
    for (const auto& piece : split_range(offset, length, title.size, title.block_size))
        if (!title.tier->holds(piece.block)) return false;
    return true;
}

}  // namespace toast::server
