#include "server/core/block_math.hpp"

#include <algorithm>

namespace toast::server {

std::uint64_t block_count(std::uint64_t size, std::uint64_t block_size) {
    return size / block_size + (size % block_size != 0 ? 1 : 0);
}

std::uint64_t block_length(std::uint64_t block, std::uint64_t size, std::uint64_t block_size) {
    const std::uint64_t start = block * block_size;
    if (start >= size) return 0;
    return std::min(block_size, size - start);
}

std::vector<BlockPiece> split_range(std::uint64_t offset, std::uint64_t length, std::uint64_t size,
                                    std::uint64_t block_size) {
    std::vector<BlockPiece> pieces;
    if (offset >= size) return pieces;
    // Written to avoid offset + length overflowing when a caller passes a huge length.
    std::uint64_t remaining = std::min(length, size - offset);
    while (remaining > 0) {
        const std::uint64_t block = offset / block_size;
        const std::uint64_t in_block = offset % block_size;
        const std::uint64_t n = std::min(remaining, block_size - in_block);
        pieces.push_back({block, in_block, n});
        offset += n;
        remaining -= n;
    }
    return pieces;
}

}  // namespace toast::server
