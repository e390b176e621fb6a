// Byte offsets to blocks: a title is cut into fixed-size blocks (the last may be short); a byte range is
// served as one piece per block it touches.
#pragma once

#include <cstdint>
#include <vector>

namespace toast::server {

struct BlockPiece {
    std::uint64_t block = 0;
    std::uint64_t offset = 0;  // within the block
    std::uint64_t length = 0;
    bool operator==(const BlockPiece&) const = default;
};

// Number of blocks of a title of `size` bytes (0 for an empty title). Precondition: block_size > 0.
std::uint64_t block_count(std::uint64_t size, std::uint64_t block_size);

// Length of block `block` (block_size except for a short last block).
std::uint64_t block_length(std::uint64_t block, std::uint64_t size, std::uint64_t block_size);

// [offset, offset + length) split at block boundaries, clipped to `size`. Empty when nothing remains.
std::vector<BlockPiece> split_range(std::uint64_t offset, std::uint64_t length, std::uint64_t size,
                                    std::uint64_t block_size);

}  // namespace toast::server
