// TrackerService's state file: restoring the swarms at start-up and saving them (docs/tracker.md,
// "Restarts"); the rest of the service is in tracker_service.cpp.
#include <cstdio>

#include "tracker/io/state_file.hpp"
#include "tracker/io/tracker_service.hpp"

namespace toast::tracker {

namespace {

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string seconds_text(std::chrono::milliseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
    return buf;
}

// "; left out: 2 swarms not whitelisted, 4 peers in them, ..." or "" when nothing was.
std::string left_out(const ImportCounts& c) {
    std::string out;
    auto add = [&](std::size_t n, std::string_view what) {
        if (n == 0) return;
        out += (out.empty() ? "; left out: " : ", ") + std::to_string(n) + " " + std::string(what);
    };
    add(c.swarms_not_whitelisted, "swarms not whitelisted");
    add(c.swarms_over_limit, "swarms beyond max_swarms");
    add(c.peers_refused, "peers in them");
    add(c.swarms_expired, "swarms idle past peer_expiry");
    add(c.peers_expired, "peers silent past peer_expiry");
    add(c.peers_duplicate, "duplicate peers");
    return out;
}

}  // namespace

TrackerService::StateOutcome TrackerService::restore_state(TimePoint now,
                                                           std::chrono::system_clock::time_point wall_now) {
    if (!config_.state_file) return {};
    const auto& path = *config_.state_file;
    auto content = read_state_file(path);
    std::optional<std::string> problem;
    if (!content) {
        problem = content.error();
    } else if (!content->exists) {
        return {true, "state: no state file at " + path.string() + " yet; starting empty"};
    } else if (auto decoded = decode_state(content->bytes); !decoded) {
        problem = "state file '" + path.string() + "' is not usable: " + decoded.error();
    } else {
        // Wall-clock time, since the steady clock starts afresh with the process; a clock set back reads as
        // no time at all.
        const auto down_for = std::chrono::milliseconds(
            std::max<std::int64_t>(0, unix_ms(wall_now) - decoded->saved_at_unix_ms));
        const ImportCounts c = registry_.import_state(decoded->state, now, down_for);
        update_gauges();
        return {true, "state: restored " + std::to_string(c.swarms) + " swarms, " + std::to_string(c.peers) +
                          " peers from " + path.string() + " (saved " + seconds_text(down_for) + " ago)" +
                          left_out(c)};
    }
    auto moved = move_aside(path);
    if (!moved) {
        state_saves_off_ = true;
        return {false, "state: " + *problem + "; " + moved.error() +
                           ", so saving is off until state_file changes (SIGHUP); starting empty"};
    }
    return {false, "state: " + *problem + "; moved it to " + moved->string() + " and starting empty"};
}

TrackerService::StateOutcome TrackerService::save_state(TimePoint now,
                                                        std::chrono::system_clock::time_point wall_now) {
    auto snapshot = snapshot_state(now, wall_now);
    if (!snapshot) return {};
    const auto started = std::chrono::steady_clock::now();
    auto error = write_state_file(snapshot->path, snapshot->bytes);
    return record_save(*snapshot, error, std::chrono::steady_clock::now() - started);
}

std::optional<TrackerService::StateSnapshot> TrackerService::snapshot_state(
    TimePoint now, std::chrono::system_clock::time_point wall_now) {
    if (!config_.state_file || state_saves_off_) return std::nullopt;
    const auto started = std::chrono::steady_clock::now();
    StateSnapshot s;
    s.path = *config_.state_file;
    s.bytes = encode_state(registry_.export_state(now), unix_ms(wall_now));
    const auto t = registry_.totals();
    s.swarms = t.swarms;
    s.peers = t.seeders + t.leechers;
    s.encoding = std::chrono::steady_clock::now() - started;
    return s;
}

TrackerService::StateOutcome TrackerService::record_save(const StateSnapshot& snapshot,
                                                         const std::optional<std::string>& error,
                                                         std::chrono::steady_clock::duration writing) {
    const std::chrono::duration<double> took = snapshot.encoding + writing;
    service_.state_save_seconds.set(took.count());
    if (error) {
        service_.state_saves_failed.inc();
        return {false, "state: " + *error + "; the previous state file stays"};
    }
    service_.state_saves_ok.inc();
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f ms", took.count() * 1000);
    return {true, "state: saved " + std::to_string(snapshot.swarms) + " swarms, " +
                      std::to_string(snapshot.peers) + " peers to " + snapshot.path.string() + " in " + ms};
}

}  // namespace toast::tracker
