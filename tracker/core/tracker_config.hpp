// toast-tracker's one typed configuration, loaded from JSON and validated once at start-up; every bad value
// is reported with its field name. Defaults are the values written here (docs/tracker.md lists them).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tracker/core/rate_limiter.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker {

struct HttpLimits {
    std::chrono::milliseconds idle_timeout{15'000};  // header reads and keep-alive waits
    std::size_t header_limit = 8 * 1024;             // request line + headers; beyond: 431 (or 414)
    std::size_t max_target_length = 2048;            // request target; beyond: 414
    std::size_t max_connections = 4096;              // beyond: new connections are closed at once
};

struct TrackerConfig {
    RegistryPolicy registry;
    std::optional<std::filesystem::path> whitelist;
    RateLimit rate_limit{20, 100, 1'000'000, true};  // announces + scrapes per second per IP, burst
    std::size_t max_scrape_hashes = 64;
    HttpLimits http;
    std::string log_level = "info";
};

// Throws ConfigError naming the field and the value.
TrackerConfig load_tracker_config(const nlohmann::json& json);
TrackerConfig load_tracker_config_file(const std::filesystem::path& path);

}  // namespace toast::tracker
