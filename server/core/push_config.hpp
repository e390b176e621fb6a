// The server's configuration of catalogue demand and pre-placement (config sections "demand" and "push";
// docs/server-catalogue.md describes every field), and the off-peak window's times. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "toast/common/units.hpp"

namespace toast {
class ConfigReader;
}

namespace toast::server {

struct DemandConfig {
    std::chrono::nanoseconds half_life = std::chrono::hours(1);
    // {"titles": {"NAME": sessions per hour, ...}}: each title's demand before any box has reported a start.
    std::optional<std::filesystem::path> forecast;
};

// When boxes may fetch their assignment: every day between two UTC times of day (`end` before `start`
// wraps past midnight), once between two offsets from the server's start, or once between two unix times.
struct PushWindow {
    enum class Kind { daily, after_start, unix_time };
    Kind kind = Kind::daily;
    std::chrono::seconds start = std::chrono::hours(2);
    std::chrono::seconds end = std::chrono::hours(6);
};

struct PushConfig {
    bool enabled = false;
    PushWindow window;
    BitRate rate{2'000'000};             // a box fetches its assignment at most this fast
    Bytes box_quota{2ull << 30};         // a box's push quota when it does not send one
    BitRate box_upload{1'000'000};       // a box's upload when it does not send one
    std::uint32_t replicas = 2;          // holders of each stripe, at least (>= 2)
    std::uint64_t seed = 1;              // the planner's random placement
    std::optional<double> peak_viewers;  // concurrent viewers expected at the peak
    double peak_viewers_pct = 20;        // else this % of the registered boxes
    double headroom = 1.0;               // PlannerSettings::headroom
    double holder_share = 0.5;           // PlannerSettings::holder_share
    std::uint32_t chunk_pieces = 8;      // PlannerSettings::chunk_pieces
    std::uint32_t min_stripes = 4;       // PlannerSettings::min_stripes
    std::chrono::nanoseconds refresh = std::chrono::minutes(5);  // boxes ask again this often
    std::chrono::nanoseconds box_ttl{
        0};                      // a box not heard from for this long leaves the plan; 0: 3 x refresh
    double replan_change = 0.1;  // demand shares moved this far (half the L1 distance): plan again
    bool operator==(const PushConfig&) const = default;
};

// Reads the "demand" and "push" objects; throws ConfigError naming the field.
DemandConfig load_demand_config(ConfigReader reader);
PushConfig load_push_config(ConfigReader reader);

// The window's occurrence that contains `now`, else the next one, as unix milliseconds [start, end). A
// one-off window that has passed is returned as it was.
struct WindowTimes {
    std::int64_t start_ms = 0;
    std::int64_t end_ms = 0;
    bool operator==(const WindowTimes&) const = default;
};
WindowTimes window_times(const PushWindow& window, std::int64_t now_ms, std::int64_t server_start_ms);

// "HH:MM" or "HH:MM:SS" as seconds after midnight; nullopt when malformed or past 24:00.
std::optional<std::chrono::seconds> parse_time_of_day(std::string_view text);

// The forecast file's text as title -> sessions per hour, or nullopt with `error` naming what is wrong.
std::optional<std::map<std::string, double>> parse_forecast(std::string_view text, std::string* error);

}  // namespace toast::server
