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

namespace {

// Strict reading of one record: each step reads some of the keys into the record and returns the first
// problem, as "key: problem", or nothing.
class RecordReader {
  public:
    RecordReader(const nlohmann::json& j, StatsRecord& r) : j_(j), r_(r) {}

    // Every key known, none missing.
    std::optional<std::string> keys() const {
        if (!j_.is_object()) return fail("record", "not a JSON object");
        for (const auto& [key, value] : j_.items()) {
            bool known = false;
            for (auto k : stats_keys())
                known = known || k == key;
            if (!known) return fail(key, "unknown key");
        }
        for (auto k : stats_keys())
            if (!j_.contains(k)) return fail(k, "missing");
        return std::nullopt;
    }

    // event, t_ms and every count.
    std::optional<std::string> totals() {
        const auto& event = j_.at("event");
        if (!event.is_string() || (event != "stats" && event != "summary"))
            return fail("event", "not \"stats\" or \"summary\"");
        r_.event = event.get<std::string>();
        if (!j_.at("t_ms").is_number_integer()) return fail("t_ms", "not an integer");
        r_.t_ms = j_.at("t_ms").get<std::int64_t>();
        for (auto [k, field] :
             {std::pair{"bytes_from_peers", &r_.bytes_from_peers},
              std::pair{"bytes_from_server", &r_.bytes_from_server},
              std::pair{"bytes_server_useful", &r_.bytes_server_useful},
              std::pair{"bytes_server_wasted", &r_.bytes_server_wasted},
              std::pair{"bytes_uploaded", &r_.bytes_uploaded},
              std::pair{"bytes_redundant", &r_.bytes_redundant},
              std::pair{"bytes_redundant_raced", &r_.bytes_redundant_raced},
              std::pair{"playhead", &r_.playhead}, std::pair{"buffer_bytes", &r_.buffer_bytes},
              std::pair{"pieces_fetched_ahead", &r_.pieces_fetched_ahead},
              std::pair{"urgent_fetches", &r_.urgent_fetches},
              std::pair{"server_late_answers", &r_.server_late_answers},
              std::pair{"late_pieces", &r_.late_pieces}, std::pair{"pieces_mixed", &r_.pieces_mixed},
              std::pair{"blocks_awaited", &r_.blocks_awaited},
              std::pair{"blocks_awaited_late", &r_.blocks_awaited_late},
              std::pair{"bytes_from_operator", &r_.bytes_from_operator}})
            if (!uint(k, *field)) return fail(k, "not a non-negative integer");
        for (auto [k, field] : {std::pair{"stalls", &r_.stalls}, std::pair{"pieces_had", &r_.pieces_had},
                                std::pair{"peers", &r_.peers}, std::pair{"seeks", &r_.seeks}}) {
            std::uint64_t v = 0;
            if (!uint(k, v) || v > UINT32_MAX) return fail(k, "not a non-negative integer");
            *field = static_cast<std::uint32_t>(v);
        }
        return std::nullopt;
    }

    // Stalls, startup and its breakdown, fidelity, completion, the buffer ahead.
    std::optional<std::string> playback() {
        if (!real("stall_seconds", r_.stall_seconds))
            return fail("stall_seconds", "not a non-negative number");
        if (!real("longest_stall", r_.longest_stall))
            return fail("longest_stall", "not a non-negative number");
        for (auto [k, field] :
             {std::pair{"startup_ms", &r_.startup_ms}, std::pair{"session_ms", &r_.session_ms},
              std::pair{"tracker_ms", &r_.tracker_ms}, std::pair{"first_piece_ms", &r_.first_piece_ms}}) {
            const auto& v = j_.at(k);
            if (v.is_null()) continue;
            if (!v.is_number_integer()) return fail(k, "not an integer or null");
            *field = v.get<std::int64_t>();
        }
        if (!optional_real("fidelity", r_.fidelity, 1))
            return fail("fidelity", "not a number in [0, 1] or null");
        if (!j_.at("completed").is_boolean()) return fail("completed", "not a boolean");
        r_.completed = j_.at("completed").get<bool>();
        if (!real("buffer_ahead_s", r_.buffer_ahead_s))
            return fail("buffer_ahead_s", "not a non-negative number");
        return std::nullopt;
    }

    // The player's URL, first byte and seeks.
    std::optional<std::string> player() {
        const auto& url = j_.at("player_url");
        if (!url.is_null()) {
            if (!url.is_string()) return fail("player_url", "not a string or null");
            r_.player_url = url.get<std::string>();
        }
        const auto& first_byte = j_.at("first_byte_ms");
        if (!first_byte.is_null()) {
            if (!first_byte.is_number_unsigned())
                return fail("first_byte_ms", "not a non-negative integer or null");
            r_.first_byte_ms = first_byte.get<std::int64_t>();
        }
        const auto& seek_ms = j_.at("seek_ms");
        if (!seek_ms.is_array()) return fail("seek_ms", "not an array of non-negative integers");
        for (const auto& v : seek_ms) {
            if (!v.is_number_unsigned()) return fail("seek_ms", "not an array of non-negative integers");
            r_.seek_ms.push_back(v.get<std::int64_t>());
        }
        return std::nullopt;
    }

    // The in-order window and the adaptive picker's figures.
    std::optional<std::string> picker() {
        const auto& window = j_.at("inorder_window");
        if (!window.is_null()) {
            if (!window.is_array() || window.size() != 2 || !window[0].is_number_unsigned() ||
                !window[1].is_number_unsigned() ||
                window[0].get<std::int64_t>() > window[1].get<std::int64_t>() ||
                window[1].get<std::int64_t>() > INT32_MAX)
                return fail("inorder_window", "not [first, last] piece indices or null");
            r_.inorder_window = std::pair{window[0].get<std::int32_t>(), window[1].get<std::int32_t>()};
        }
        if (!optional_real("adaptive_share", r_.adaptive_share, 1))
            return fail("adaptive_share", "not a number in [0, 1] or null");
        if (!optional_real("adaptive_peer_ratio", r_.adaptive_peer_ratio,
                           std::numeric_limits<double>::infinity()))
            return fail("adaptive_peer_ratio", "not a non-negative number or null");
        return std::nullopt;
    }

  private:
    static std::string fail(std::string_view key, std::string_view problem) {
        return std::string(key) + ": " + std::string(problem);
    }
    bool uint(std::string_view k, std::uint64_t& out) const {
        const auto& v = j_.at(k);
        if (!v.is_number_unsigned()) return false;
        out = v.get<std::uint64_t>();
        return true;
    }
    bool real(std::string_view k, double& out) const {
        const auto& v = j_.at(k);
        if (!v.is_number() || v.get<double>() < 0) return false;
        out = v.get<double>();
        return true;
    }
    // Null, or a number in [0, max].
    bool optional_real(std::string_view k, std::optional<double>& out, double max) const {
        const auto& v = j_.at(k);
        if (v.is_null()) return true;
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > max) return false;
        out = v.get<double>();
        return true;
    }

    const nlohmann::json& j_;
    StatsRecord& r_;
};

}  // namespace

std::optional<StatsRecord> stats_from_json(const nlohmann::json& j, std::string* error) {
    StatsRecord r;
    RecordReader read(j, r);
    std::optional<std::string> problem = read.keys();
    if (!problem) problem = read.totals();
    if (!problem) problem = read.playback();
    if (!problem) problem = read.player();
    if (!problem) problem = read.picker();
    if (!problem) return r;
    if (error) *error = *problem;
    return std::nullopt;
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
