// toast-tracker's one typed configuration, loaded from JSON and validated once at start-up; every bad value
// is reported with its field name. Defaults are the values written here (docs/tracker.md lists them).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracker/core/rate_limiter.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker {

struct HttpLimits {
    std::chrono::milliseconds idle_timeout{15'000};  // header reads and keep-alive waits
    std::size_t header_limit = 8 * 1024;             // request line, then header lines; beyond: 414, 431
    std::size_t max_target_length = 2048;            // request target; beyond: 414
    std::size_t max_connections = 4096;              // beyond: new connections are closed at once
    bool operator==(const HttpLimits&) const = default;
};

// Where one line per request goes (combined log format plus the time taken); no path: no access log.
struct AccessLogConfig {
    std::optional<std::filesystem::path> path;
    bool udp = false;  // UDP packets too (one line each, connects included)
    bool operator==(const AccessLogConfig&) const = default;
};

struct TrackerConfig {
    RegistryPolicy registry;
    std::optional<std::filesystem::path> whitelist;
    // The passkey file (passkeys.hpp); when set, every announce and scrape must carry one of its keys.
    std::optional<std::filesystem::path> passkeys;
    // Announces + scrapes per second per source, and the burst.
    RateLimit rate_limit{
        .per_second = 20, .burst = 100, .max_tracked = 1'000'000, .exempt = {}, .ipv6_prefix = 64};
    std::size_t max_scrape_hashes = 64;
    HttpLimits http;
    // Sources allowed to read /stats and /metrics (nginx's "allow 127.0.0.1; deny all;").
    AddressSet admin_allow = default_admin_allow();
    std::size_t stats_page_limit = 1000;  // most swarms in one /stats page
    AccessLogConfig access_log;
    // Where the swarms are saved for a restart (read once at start-up); no path: nothing is kept.
    std::optional<std::filesystem::path> state_file;
    std::chrono::milliseconds state_save_interval{10'000};
    std::string log_level = "info";

    static AddressSet default_admin_allow();
};

// "key: old -> new" for every key whose value differs, in the order of the config table; for the reload
// log line (SIGHUP).
std::vector<std::string> describe_changes(const TrackerConfig& before, const TrackerConfig& after);

// Throws ConfigError naming the field and the value.
TrackerConfig load_tracker_config(const nlohmann::json& json);
TrackerConfig load_tracker_config_file(const std::filesystem::path& path);

}  // namespace toast::tracker
