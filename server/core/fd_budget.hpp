// How many file descriptors toast-server wants and how many block files its store may keep open under the
// process's RLIMIT_NOFILE. Sockets (one per connection, up to max_connections) and a fixed reserve (stdio,
// listeners, epoll, timers, manifest scans, logs) come first; the open-file cache gets the rest, up to
// the config's `open_files`. Pure arithmetic; `toast-server serve` applies it at start-up.
#pragma once

#include <cstddef>
#include <cstdint>

namespace toast::server {

// Descriptors kept free besides connections and cached block files.
constexpr std::uint64_t kReservedDescriptors = 64;

// The soft RLIMIT_NOFILE to ask for: enough for `open_files` cached files, `max_connections` sockets and
// the reserve, never above `hard` and never below the current `soft` limit.
std::uint64_t wanted_nofile_limit(std::size_t open_files, std::size_t max_connections, std::uint64_t soft,
                                  std::uint64_t hard);

// Block files the store may keep open under a soft limit of `limit` descriptors: `open_files`, or less so
// that connections and the reserve still fit. Never below a quarter of the limit (a low limit with many
// allowed connections would otherwise leave nothing; then connections are what runs short and accept() backs
// off), and at least 1.
std::size_t open_file_budget(std::size_t open_files, std::size_t max_connections, std::uint64_t limit);

}  // namespace toast::server
