#include "server/core/fd_budget.hpp"

#include <algorithm>

namespace toast::server {

std::uint64_t wanted_nofile_limit(std::size_t open_files, std::size_t max_connections, std::uint64_t soft,
                                  std::uint64_t hard) {
    const std::uint64_t need = static_cast<std::uint64_t>(open_files) +
                               static_cast<std::uint64_t>(max_connections) + kReservedDescriptors;
    return std::max(soft, std::min(need, hard));
}

std::size_t open_file_budget(std::size_t open_files, std::size_t max_connections, std::uint64_t limit) {
    const std::uint64_t reserve = static_cast<std::uint64_t>(max_connections) + kReservedDescriptors;
    const std::uint64_t room = limit > reserve ? limit - reserve : 0;
    const std::uint64_t budget = std::max<std::uint64_t>({room, limit / 4, 1});
    return static_cast<std::size_t>(std::min<std::uint64_t>(budget, open_files));
}

}  // namespace toast::server
