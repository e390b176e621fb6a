#include "server/core/disk_scheduler.hpp"

namespace toast::server {

std::uint64_t disk_address(std::string_view version, std::uint64_t block, std::uint64_t block_size,
                           std::uint64_t offset) {
    constexpr std::uint64_t kSpace = 1ull << 48;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the version id
    for (char c : version) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return (h % kSpace + block * block_size + offset) % kSpace;
}

}  // namespace toast::server
