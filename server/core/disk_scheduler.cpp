#include "server/core/disk_scheduler.hpp"

#include <algorithm>

namespace toast::server {

std::uint64_t disk_address(std::string_view version, std::uint64_t block, std::uint64_t block_size,
                           std::uint64_t offset) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the version id and the block number
    for (char c : version) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    for (int i = 0; i < 8; ++i) {
        h ^= (block >> (8 * i)) & 0xff;
        h *= 1099511628211ull;
    }
    // A 64-bit finaliser (splitmix64) so neighbouring blocks land far apart.
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    // The start leaves room for the whole block below the end of the space.
    const std::uint64_t room = kDiskAddressSpace - std::min(block_size, kDiskAddressSpace / 2);
    return h % room + std::min(offset, kDiskAddressSpace - 1 - h % room);
}

}  // namespace toast::server
