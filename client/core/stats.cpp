#include "client/core/stats.hpp"

#include <chrono>
#include <limits>

namespace toast::client {

namespace {

double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

}  // namespace

const std::vector<std::string_view>& stats_keys() {
    static const std::vector<std::string_view> keys = {"event",
                                                       "t_ms",
                                                       "bytes_from_peers",
                                                       "bytes_from_server",
                                                       "bytes_server_useful",
                                                       "bytes_server_wasted",
                                                       "bytes_uploaded",
                                                       "bytes_redundant",
                                                       "bytes_redundant_raced",
                                                       "stalls",
                                                       "stall_seconds",
                                                       "longest_stall",
                                                       "startup_ms",
                                                       "session_ms",
                                                       "tracker_ms",
                                                       "first_piece_ms",
                                                       "playhead",
                                                       "pieces_had",
                                                       "buffer_bytes",
                                                       "pieces_fetched_ahead",
                                                       "fidelity",
                                                       "completed",
                                                       "peers",
                                                       "buffer_ahead_s",
                                                       "player_url",
                                                       "first_byte_ms",
                                                       "seeks",
                                                       "seek_ms",
                                                       "urgent_fetches",
                                                       "server_late_answers",
                                                       "inorder_window",
                                                       "late_pieces",
                                                       "pieces_mixed",
                                                       "blocks_awaited",
                                                       "blocks_awaited_late",
                                                       "adaptive_share",
                                                       "adaptive_peer_ratio",
                                                       "bytes_from_operator"};
    return keys;
}

nlohmann::ordered_json to_json(const StatsRecord& r) {
    nlohmann::ordered_json j;
    j["event"] = r.event;
    j["t_ms"] = r.t_ms;
    j["bytes_from_peers"] = r.bytes_from_peers;
    j["bytes_from_server"] = r.bytes_from_server;
    j["bytes_server_useful"] = r.bytes_server_useful;
    j["bytes_server_wasted"] = r.bytes_server_wasted;
    j["bytes_uploaded"] = r.bytes_uploaded;
    j["bytes_redundant"] = r.bytes_redundant;
    j["bytes_redundant_raced"] = r.bytes_redundant_raced;
    j["stalls"] = r.stalls;
    j["stall_seconds"] = r.stall_seconds;
    j["longest_stall"] = r.longest_stall;
    auto nullable = [](const auto& v) {
        return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    j["startup_ms"] = nullable(r.startup_ms);
    j["session_ms"] = nullable(r.session_ms);
    j["tracker_ms"] = nullable(r.tracker_ms);
    j["first_piece_ms"] = nullable(r.first_piece_ms);
    j["playhead"] = r.playhead;
    j["pieces_had"] = r.pieces_had;
    j["buffer_bytes"] = r.buffer_bytes;
    j["pieces_fetched_ahead"] = r.pieces_fetched_ahead;
    j["fidelity"] = nullable(r.fidelity);
    j["completed"] = r.completed;
    j["peers"] = r.peers;
    j["buffer_ahead_s"] = r.buffer_ahead_s;
    j["player_url"] = nullable(r.player_url);
    j["first_byte_ms"] = nullable(r.first_byte_ms);
    j["seeks"] = r.seeks;
    j["seek_ms"] = r.seek_ms;
    j["urgent_fetches"] = r.urgent_fetches;
    j["server_late_answers"] = r.server_late_answers;
    j["inorder_window"] =
        r.inorder_window ? nlohmann::ordered_json::array({r.inorder_window->first, r.inorder_window->second})
                         : nlohmann::ordered_json(nullptr);
    j["late_pieces"] = r.late_pieces;
    j["pieces_mixed"] = r.pieces_mixed;
    j["blocks_awaited"] = r.blocks_awaited;
    j["blocks_awaited_late"] = r.blocks_awaited_late;
    j["adaptive_share"] = nullable(r.adaptive_share);
    j["adaptive_peer_ratio"] = nullable(r.adaptive_peer_ratio);
    j["bytes_from_operator"] = r.bytes_from_operator;
    return j;
}

std::string to_json_line(const StatsRecord& r) {
    return to_json(r).dump() + "\n";
}

std::optional<StatsRecord> stats_from_json(const nlohmann::json& j, std::string* error) {
    auto fail = [&](std::string_view key, std::string_view problem) -> std::optional<StatsRecord> {
        if (error) *error = std::string(key) + ": " + std::string(problem);
        return std::nullopt;
    };
    if (!j.is_object()) return fail("record", "not a JSON object");
    for (const auto& [key, value] : j.items()) {
        bool known = false;
        for (auto k : stats_keys())
            known = known || k == key;
        if (!known) return fail(key, "unknown key");
    }
    for (auto k : stats_keys())
        if (!j.contains(k)) return fail(k, "missing");

    StatsRecord r;
    auto uint = [&](std::string_view k, std::uint64_t& out) {
        const auto& v = j.at(k);
        if (!v.is_number_unsigned()) return false;
        out = v.get<std::uint64_t>();
        return true;
    };
    auto real = [&](std::string_view k, double& out) {
        const auto& v = j.at(k);
        if (!v.is_number() || v.get<double>() < 0) return false;
        out = v.get<double>();
        return true;
    };
    // Null, or a number in [0, max].
    auto optional_real = [&](std::string_view k, std::optional<double>& out, double max) {
        const auto& v = j.at(k);
        if (v.is_null()) return true;
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > max) return false;
        out = v.get<double>();
        return true;
    };
    const auto& event = j.at("event");
    if (!event.is_string() || (event != "stats" && event != "summary"))
        return fail("event", "not \"stats\" or \"summary\"");
    r.event = event.get<std::string>();
    if (!j.at("t_ms").is_number_integer()) return fail("t_ms", "not an integer");
    r.t_ms = j.at("t_ms").get<std::int64_t>();
    for (auto [k, field] :
         {std::pair{"bytes_from_peers", &r.bytes_from_peers},
          std::pair{"bytes_from_server", &r.bytes_from_server},
          std::pair{"bytes_server_useful", &r.bytes_server_useful},
          std::pair{"bytes_server_wasted", &r.bytes_server_wasted},
          std::pair{"bytes_uploaded", &r.bytes_uploaded}, std::pair{"bytes_redundant", &r.bytes_redundant},
          std::pair{"bytes_redundant_raced", &r.bytes_redundant_raced}, std::pair{"playhead", &r.playhead},
          std::pair{"buffer_bytes", &r.buffer_bytes},
          std::pair{"pieces_fetched_ahead", &r.pieces_fetched_ahead}})
        if (!uint(k, *field)) return fail(k, "not a non-negative integer");
    std::uint64_t small = 0;
    if (!uint("stalls", small) || small > UINT32_MAX) return fail("stalls", "not a non-negative integer");
    r.stalls = static_cast<std::uint32_t>(small);
    if (!uint("pieces_had", small) || small > UINT32_MAX)
        return fail("pieces_had", "not a non-negative integer");
    r.pieces_had = static_cast<std::uint32_t>(small);
    if (!real("stall_seconds", r.stall_seconds)) return fail("stall_seconds", "not a non-negative number");
    if (!real("longest_stall", r.longest_stall)) return fail("longest_stall", "not a non-negative number");
    for (auto [k, field] :
         {std::pair{"startup_ms", &r.startup_ms}, std::pair{"session_ms", &r.session_ms},
          std::pair{"tracker_ms", &r.tracker_ms}, std::pair{"first_piece_ms", &r.first_piece_ms}}) {
        const auto& v = j.at(k);
        if (v.is_null()) continue;
        if (!v.is_number_integer()) return fail(k, "not an integer or null");
        *field = v.get<std::int64_t>();
    }
    if (!optional_real("fidelity", r.fidelity, 1)) return fail("fidelity", "not a number in [0, 1] or null");
    if (!j.at("completed").is_boolean()) return fail("completed", "not a boolean");
    r.completed = j.at("completed").get<bool>();
    if (!uint("peers", small) || small > UINT32_MAX) return fail("peers", "not a non-negative integer");
    r.peers = static_cast<std::uint32_t>(small);
    if (!real("buffer_ahead_s", r.buffer_ahead_s)) return fail("buffer_ahead_s", "not a non-negative number");
    const auto& url = j.at("player_url");
    if (!url.is_null()) {
        if (!url.is_string()) return fail("player_url", "not a string or null");
        r.player_url = url.get<std::string>();
    }
    const auto& first_byte = j.at("first_byte_ms");
    if (!first_byte.is_null()) {
        if (!first_byte.is_number_unsigned())
            return fail("first_byte_ms", "not a non-negative integer or null");
        r.first_byte_ms = first_byte.get<std::int64_t>();
    }
    if (!uint("seeks", small) || small > UINT32_MAX) return fail("seeks", "not a non-negative integer");
    r.seeks = static_cast<std::uint32_t>(small);
    const auto& seek_ms = j.at("seek_ms");
    if (!seek_ms.is_array()) return fail("seek_ms", "not an array of non-negative integers");
    for (const auto& v : seek_ms) {
        if (!v.is_number_unsigned()) return fail("seek_ms", "not an array of non-negative integers");
        r.seek_ms.push_back(v.get<std::int64_t>());
    }
    if (!uint("urgent_fetches", r.urgent_fetches))
        return fail("urgent_fetches", "not a non-negative integer");
    if (!uint("server_late_answers", r.server_late_answers))
        return fail("server_late_answers", "not a non-negative integer");
    const auto& window = j.at("inorder_window");
    if (!window.is_null()) {
        if (!window.is_array() || window.size() != 2 || !window[0].is_number_unsigned() ||
            !window[1].is_number_unsigned() ||
            window[0].get<std::int64_t>() > window[1].get<std::int64_t>() ||
            window[1].get<std::int64_t>() > INT32_MAX)
            return fail("inorder_window", "not [first, last] piece indices or null");
        r.inorder_window = std::pair{window[0].get<std::int32_t>(), window[1].get<std::int32_t>()};
    }
    if (!uint("late_pieces", r.late_pieces)) return fail("late_pieces", "not a non-negative integer");
    if (!uint("pieces_mixed", r.pieces_mixed)) return fail("pieces_mixed", "not a non-negative integer");
    if (!uint("blocks_awaited", r.blocks_awaited))
        return fail("blocks_awaited", "not a non-negative integer");
    if (!uint("blocks_awaited_late", r.blocks_awaited_late))
        return fail("blocks_awaited_late", "not a non-negative integer");
    if (!optional_real("adaptive_share", r.adaptive_share, 1))
        return fail("adaptive_share", "not a number in [0, 1] or null");
    if (!optional_real("adaptive_peer_ratio", r.adaptive_peer_ratio, std::numeric_limits<double>::infinity()))
        return fail("adaptive_peer_ratio", "not a non-negative number or null");
    if (!uint("bytes_from_operator", r.bytes_from_operator))
        return fail("bytes_from_operator", "not a non-negative integer");
    return r;
}

void fill_playback(StatsRecord& r, const StreamWatcher& watcher, SteadyTime now) {
    auto s = watcher.stalls(now);
    r.stalls = s.count;
    r.stall_seconds = seconds(s.total);
    r.longest_stall = seconds(s.longest);
    if (auto d = watcher.startup_delay())
        r.startup_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d).count();
    else
        r.startup_ms.reset();
    r.playhead = watcher.playhead().value();
    r.buffer_ahead_s = seconds(watcher.buffer_ahead());
    r.seeks = watcher.seeks();
    r.completed = r.completed || watcher.reached_end();
}

}  // namespace toast::client
