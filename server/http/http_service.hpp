// The HTTP front end as an object: binds its listeners on construction, serves on io_threads threads in
// run(), and drains on shutdown(). run_http_server() wraps it with SIGTERM/SIGINT handling; tests use it
// directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "server/core/disk_control.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class HttpService {
  public:
    // Binds `listen` (and `admin_listen` if set); port 0 picks a free port. Throws std::runtime_error naming
    // the address if binding fails. The references must outlive the service.
    HttpService(const ServerConfig& config, TitleStore& store, DiskControl& disks, MetricsRegistry& metrics);
    ~HttpService();
    HttpService(const HttpService&) = delete;
    HttpService& operator=(const HttpService&) = delete;

    std::uint16_t port() const;
    std::optional<std::uint16_t> admin_port() const;

    // Serves until shutdown() has drained every connection (or the drain bound passed); with
    // `handle_signals`, SIGTERM and SIGINT call shutdown() (a second signal stops at once).
    void run(bool handle_signals = false);
    // Thread-safe: stop accepting, finish in-flight responses within `drain_limit`, then let run() return.
    void shutdown(std::chrono::milliseconds drain_limit = std::chrono::seconds(5));

    struct Impl;

  private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace toast::server
