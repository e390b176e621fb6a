// A simulation's results in the testbed's report format (testbed/toastbed/report.py: the same fields,
// computed the same way), plus what the testbed cannot give at this scale: the server's peak rate (the 95th
// percentile of 10 s bins, what an operator is billed for), per-title rows and the simulator's own cost.
// Pure: records in, JSON and Markdown out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toast::sim {

// One viewing session (a single-title scenario's client, or a catalogue session).
struct SessionRecord {
    int box = 0;
    int title = 0;
    double start_s = 0;
    double end_s = 0;        // when it left (summary time)
    double watch_s = 0;      // playback it was to watch (the title's length, or the catalogue's watch_s)
    bool completed = false;  // every piece had, or playback reached the end (catalogue: its watch_s)
    std::uint64_t bytes_from_peers = 0;
    std::uint64_t bytes_from_server = 0;
    std::uint64_t bytes_server_wasted = 0;
    std::uint64_t bytes_uploaded = 0;  // while the session ran
    std::uint64_t bytes_redundant = 0;
    std::uint64_t bytes_redundant_raced = 0;
    std::uint32_t stalls = 0;
    double stall_seconds = 0;
    std::optional<std::int64_t> startup_ms;
    double upload_cap_bps = 0;
    std::uint64_t late_pieces = 0;
    std::uint64_t pieces_from_server = 0;
};

// One box over the whole run (catalogue: its uploads while idle count too).
struct BoxRecord {
    int box = 0;
    double uplink_bps = 0;
    int sessions = 0;
    std::uint64_t uploaded = 0;
    std::uint64_t from_server = 0;
    std::uint64_t cached_bytes_end = 0;
};

struct SimCost {
    double wall_seconds = 0;
    double simulated_seconds = 0;
    std::uint64_t peak_memory_kb = 0;
    std::uint64_t events = 0;  // actor wake-ups: ticks, finished transfers, timers
    std::uint64_t transfers = 0;
    std::uint64_t controller_ticks = 0;
    double tick_ms = 0;
};

struct RunRecords {
    std::string scenario;
    std::string kind;  // "title" or "catalogue"
    std::vector<SessionRecord> sessions;
    std::vector<BoxRecord> boxes;
    std::vector<std::string> title_names;
    std::vector<std::uint64_t> title_bytes;
    double bitrate_bps = 0;
    std::uint64_t vod_bytes = 0;
    std::uint64_t seed_bytes = 0;
    std::uint64_t tracker_bytes = 0;
    std::uint64_t server_unreceived_bytes = 0;  // sent for fetches stopped before they arrived
    double bin_seconds = 10;
    std::vector<double> server_bins;  // VoD server + seed bytes sent in each bin
    // Push: the night before the evening (its server bytes count in the bytes, not in the evening's peak).
    double night_seconds = 0;
    std::uint64_t night_bytes = 0;
    std::vector<double> night_bins;
    std::uint64_t push_bytes = 0;           // fetched by assignment
    std::uint64_t push_assigned_bytes = 0;  // every box's assignment
    int push_titles_placed = 0;
    std::vector<std::string> notes;
    SimCost cost;
};

// Linear interpolation between closest ranks, as the testbed's percentile().
std::optional<double> percentile(std::vector<double> values, double pct);

// The pct-th percentile by nearest rank (sorted ascending, the ceil(pct/100 x n)-th), as the testbed bills a
// catalogue's peak.
std::optional<double> nearest_rank(std::vector<double> values, double pct);

// Bytes per bin a unicast server would send: each session's bitrate over [start, start + watch_s).
std::vector<double> unicast_bins(const RunRecords& r, std::size_t bins);

// The report; `ceiling_pct` is the testbed's ceiling for a single-title scenario (absent for a catalogue).
nlohmann::ordered_json make_report(const RunRecords& r, std::optional<double> ceiling_pct);
std::string render_markdown(const nlohmann::ordered_json& report);

}  // namespace toast::sim
