// Test helpers around a real toast-tracker process on 127.0.0.1: start it on free ports, query it over
// HTTP (announce, scrape, stats) and UDP (BEP 15), so integration tests read as scenarios.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tracker/core/ids.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker::testing {

// A running toast-tracker; stopped (SIGTERM, then SIGKILL) when destroyed.
class TrackerProcess {
  public:
    // `config_json` is written to a file and passed with --config when not empty.
    explicit TrackerProcess(bool with_udp, const std::string& config_json = "",
                            const std::vector<std::string>& extra_args = {});
    std::uint16_t http_port() const { return http_port_; }
    std::uint16_t udp_port() const { return udp_port_; }
    toast::testing::ChildProcess& process() { return *process_; }
    const std::filesystem::path& dir() const { return dir_.path(); }

    toast::testing::HttpResponse get(const std::string& target) const;
    // Scrape over HTTP (BEP 48); nullopt if the hash is not in "files".
    std::optional<SwarmCounts> http_scrape(const InfoHash& hash) const;
    // Connect + scrape over UDP (BEP 15); nullopt on no answer within the timeout.
    std::optional<SwarmCounts> udp_scrape(const InfoHash& hash) const;
    // Totals and per-swarm counts from GET /stats.
    std::string stats() const;
    // The value of one metric line ("name{labels}") in GET /metrics, or -1 if absent.
    double metric(const std::string& series) const;

  private:
    toast::testing::TempDir dir_;
    std::uint16_t http_port_ = 0;
    std::uint16_t udp_port_ = 0;
    std::unique_ptr<toast::testing::ChildProcess> process_;
};

// GET over IPv6 loopback ([::1]:port); the body, or throws on connection errors.
std::string http_get_v6(std::uint16_t port, const std::string& target);
// True when this host can bind ::1 (IPv6 loopback enabled).
bool ipv6_loopback_available();

// One request/response over UDP from a fresh socket on 127.0.0.1 (or ::1); nullopt after `timeout`.
std::optional<std::vector<std::uint8_t>> udp_exchange(std::uint16_t port,
                                                      const std::vector<std::uint8_t>& packet,
                                                      std::chrono::milliseconds timeout, bool v6 = false);
void udp_send(std::uint16_t port, const std::vector<std::uint8_t>& packet);

// "%XX" for every byte.
std::string url_escape(std::string_view bytes);

// An HTTP announce target: info-hash of 20 `hash` bytes, a peer id made from `peer`.
std::string announce_target(char hash, int peer, int port, int left);
bool starts_with(const std::string& s, const std::string& prefix);
// Polls `cond` every 20 ms for at most `timeout`.
bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout);

}  // namespace toast::tracker::testing
