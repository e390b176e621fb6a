// The HTTP/1.1 front end of toast-server (Boost.Beast on asio, no thread per connection).
#pragma once

#include "server/core/disk_control.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

// Serves until SIGTERM or SIGINT, then stops accepting, drains in-flight responses (bounded) and returns 0.
// Throws std::runtime_error if the listen address cannot be bound (main reports it and exits non-zero).
int run_http_server(const ServerConfig& config, TitleStore& store, DiskControl& disks,
                    MetricsRegistry& metrics);

}  // namespace toast::server
