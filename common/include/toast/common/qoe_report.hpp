// A box's QoE report to the operator (POST /telemetry): the wire format the client writes and the server
// reads, so both sides share one definition. JSON, one object:
//
//   {"v": 1, "session": "3f9c0a7d5e21b864", "seq": 0, "title": "movie", "final": false,
//    "startup_s": 1.25, "stall_count": 2, "stall_s": 3.5, "stall_durations_s": [0.5, 3.0], "seeks": 1,
//    "played_s": 60.0, "bytes_peers": 1048576, "bytes_server": 524288, "bytes_uploaded": 2097152}
//
// Counts, seconds and bytes are what happened since the session's previous report (seq - 1), so the server
// adds them up without keeping state per session. startup_s is in the one report after playback started
// (absent otherwise); "final" marks the session's last report. Every field is required but startup_s.
//
// The parser is for network input: it never throws, refuses a body over its size bound, nesting deeper than
// 2, unknown keys, wrong types and values outside the bounds below, and says which field is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toast {

struct QoeReport {
    std::string session;  // the box's id for this session: 8-64 characters of [A-Za-z0-9_-]
    std::uint64_t sequence = 0;
    std::string title;  // the title's name (as the catalogue names it)
    bool final = false;
    std::optional<double> startup_seconds;
    std::uint64_t stall_count = 0;
    double stall_seconds = 0;
    std::vector<double> stall_durations;  // at most kMaxStallDurations of the stalls counted
    std::uint64_t seeks = 0;
    double played_seconds = 0;
    std::uint64_t bytes_from_peers = 0;
    std::uint64_t bytes_from_server = 0;
    std::uint64_t bytes_uploaded = 0;
    bool operator==(const QoeReport&) const = default;
};

inline constexpr std::size_t kMaxStallDurations = 64;
inline constexpr double kMaxReportSeconds = 7 * 24 * 3600.0;  // any duration field
inline constexpr std::uint64_t kMaxReportBytes = 1ull << 50;  // any byte count (1 PiB)
inline constexpr std::uint64_t kMaxReportCount = 1'000'000;   // stall_count, seeks
inline constexpr std::uint64_t kMaxReportSequence = 1'000'000'000;

struct QoeParse {
    std::optional<QoeReport> report;
    std::string error;  // names the field and what is wrong
};

QoeParse parse_qoe_report(std::string_view body, std::size_t max_body);
// Compact JSON as above (startup_s only when set).
std::string format_qoe_report(const QoeReport& report);

}  // namespace toast
