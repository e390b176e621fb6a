// The HTTP front end as an object: binds its listeners on construction, serves on io_threads threads in
// run() (with SIGTERM/SIGINT/SIGHUP handling for `toast-server serve`), and drains on shutdown().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/core/disk_control.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class TierClient;

class HttpService {
  public:
    // Binds `listen` (and `admin_listen` if set); port 0 picks a free port; opens `access_log` if set; loads
    // `tls` if set (the main listener then speaks HTTPS only; the admin listener stays plain, on loopback).
    // Throws std::runtime_error naming the address or the file if that fails. The references must outlive the
    // service.
    // `tier` (a node of a tier: its client of the other nodes) sends refused paced streams to a node with
    // room.
    HttpService(const ServerConfig& config, TitleStore& store, DiskControl& disks, MetricsRegistry& metrics,
                TierClient* tier = nullptr);
    ~HttpService();
    HttpService(const HttpService&) = delete;
    HttpService& operator=(const HttpService&) = delete;

    std::uint16_t port() const;
    std::optional<std::uint16_t> admin_port() const;

    // Serves until shutdown() has drained every connection (or the drain bound passed); with
    // `handle_signals`, SIGTERM and SIGINT call shutdown() (a second signal stops at once), and SIGHUP calls
    // `on_hangup` (if set) on the service's first event loop.
    void run(bool handle_signals = false, std::function<void()> on_hangup = {});
    // Thread-safe: publishes `config`'s HTTP limits (max_connections, idle_timeout, header_limit,
    // max_pipelined, max_ranges, max_multipart_bytes, time_slice), the signed-URL policy and the telemetry
    // limits to new connections, requests and responses, re-opens the access log (at `config.access_log`,
    // which may have changed): after logrotate moved the file, a new one starts, and re-reads the TLS
    // certificate and key. Returns what it could not do (an access log that does not open, or a certificate
    // that does not load, keeps the previous one).
    std::vector<std::string> reload(const ServerConfig& config);
    // Thread-safe: stop accepting, finish in-flight responses within `drain_limit`, then let run() return.
    void shutdown(std::chrono::milliseconds drain_limit = std::chrono::seconds(5));

    struct Impl;

  private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace toast::server
