// The client's JSON-lines stats: one record per second and a final summary, with the
// schema documented in common/docs/client-stats.md. The testbed reads these lines, so the keys are a
// contract: every record has every key, in the order of stats_keys().
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/core/stream_counters.hpp"
#include "client/core/stream_watcher.hpp"

namespace toast::client {

// Invariants: bytes_from_server == bytes_server_useful + bytes_server_wasted; bytes_redundant_raced <=
// bytes_redundant; bytes_from_operator <= bytes_from_peers; longest_stall <= stall_seconds;
// fidelity, when present, is in [0, 1]; event is "stats" or "summary". The controller's counters
// (bytes_server_useful, bytes_server_wasted, urgent_fetches, late_pieces, pieces_mixed) come from
// RecordedCounters.
struct StatsRecord : RecordedCounters {
    std::string event = "stats";
    std::int64_t t_ms = 0;  // since the client started
    std::uint64_t bytes_from_peers = 0;
    std::uint64_t bytes_from_server = 0;
    std::uint64_t bytes_uploaded = 0;
    std::uint64_t bytes_redundant = 0;  // payload received for pieces already had (duplicate blocks)
    // Of bytes_redundant: peers' blocks of pieces the server had already delivered (it raced the peers).
    std::uint64_t bytes_redundant_raced = 0;
    std::uint32_t stalls = 0;
    double stall_seconds = 0;
    double longest_stall = 0;                // seconds
    std::optional<std::int64_t> startup_ms;  // null until playback starts
    // Startup's breakdown, each from launch, null until it happened: the torrent ready in a running session,
    // the tracker's first answer, the first piece had.
    std::optional<std::int64_t> session_ms;
    std::optional<std::int64_t> tracker_ms;
    std::optional<std::int64_t> first_piece_ms;
    std::uint64_t playhead = 0;  // byte offset
    std::uint32_t pieces_had = 0;
    std::uint64_t buffer_bytes = 0;          // bytes in local storage now
    std::uint64_t pieces_fetched_ahead = 0;  // server fetches started ahead of need
    std::optional<double> fidelity;          // null until a piece arrives from a peer
    bool completed = false;                  // every piece had, or playback reached the end
    // Playback; stream mode leaves the player fields empty.
    std::uint32_t peers = 0;                    // BitTorrent peers connected now
    double buffer_ahead_s = 0;                  // media seconds present contiguously from the playhead
    std::optional<std::string> player_url;      // the local URL a player reads (play), else null
    std::optional<std::int64_t> first_byte_ms;  // player's first request to its first body byte
    std::uint32_t seeks = 0;                    // player reads far from the read frontier
    std::vector<std::int64_t> seek_ms;          // per seek: the seeking request to its first body byte
    std::uint64_t server_late_answers = 0;      // server answers marked Toast-Late (its disks were behind)
    // Pieces [first, last] the policy picks in order now (inorder, hybrid, adaptive), else null.
    std::optional<std::pair<std::int32_t, std::int32_t>> inorder_window;
    // Blocks server fetches left to the peers sending them (arriving_blocks), and of those the ones that had
    // not arrived by the next tick, which the server then sent too.
    std::uint64_t blocks_awaited = 0;
    std::uint64_t blocks_awaited_late = 0;
    std::optional<double>
        adaptive_share;  // the adaptive picker's share of its window (AdaptiveTuner), else null
    // The adaptive picker's smoothed peer rate over the bitrate (AdaptiveTuner), else null.
    std::optional<double> adaptive_peer_ratio;
    // Of bytes_from_peers: what the operator's peers (its seed beside the VoD server) sent.
    std::uint64_t bytes_from_operator = 0;
    bool operator==(const StatsRecord&) const = default;
};

// The keys of every record, in output order.
const std::vector<std::string_view>& stats_keys();

nlohmann::ordered_json to_json(const StatsRecord& r);
// One line: compact JSON and a newline.
std::string to_json_line(const StatsRecord& r);
// Strict reading (for tests and tools): every key present with the right type, no other key. On failure
// `error` names the key and the problem.
std::optional<StatsRecord> stats_from_json(const nlohmann::json& j, std::string* error = nullptr);

// Fills the playback fields (stalls, startup, playhead, completed from reaching the end) from a watcher.
void fill_playback(StatsRecord& r, const StreamWatcher& watcher, SteadyTime now);

}  // namespace toast::client
