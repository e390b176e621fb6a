#include "sim/core/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace toast::sim {

using nlohmann::ordered_json;

std::optional<double> percentile(std::vector<double> values, double pct) {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    const double k = static_cast<double>(values.size() - 1) * pct / 100.0;
    const auto lo = static_cast<std::size_t>(k);
    const auto hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (k - static_cast<double>(lo));
}

std::optional<double> nearest_rank(std::vector<double> values, double pct) {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(pct / 100.0 * static_cast<double>(values.size())));
    return values[std::max<std::size_t>(rank, 1) - 1];
}

std::vector<double> unicast_bins(const RunRecords& r, std::size_t bins) {
    std::vector<double> out(bins, 0.0);
    const double rate = r.bitrate_bps / 8.0;
    for (const auto& s : r.sessions) {
        const double a = s.start_s, b = s.start_s + s.watch_s;
        for (auto i = static_cast<std::size_t>(std::max(0.0, a / r.bin_seconds)); i < bins; ++i) {
            const double lo = static_cast<double>(i) * r.bin_seconds, hi = lo + r.bin_seconds;
            if (lo >= b) break;
            out[i] += rate * std::max(0.0, std::min(b, hi) - std::max(a, lo));
        }
    }
    return out;
}

namespace {

ordered_json opt(const std::optional<double>& v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json session_row(const SessionRecord& s, std::size_t index, bool catalogue) {
    ordered_json row;
    row["client"] = index;
    if (catalogue) {
        row["box"] = s.box;
        row["title"] = s.title;
        row["start_s"] = s.start_s;
        row["watch_s"] = s.watch_s;
    }
    row["completed"] = s.completed;
    row["bytes_from_peers"] = s.bytes_from_peers;
    row["bytes_from_server"] = s.bytes_from_server;
    row["bytes_uploaded"] = s.bytes_uploaded;
    row["bytes_redundant"] = s.bytes_redundant;
    row["bytes_redundant_raced"] = s.bytes_redundant_raced;
    row["bytes_server_wasted"] = s.bytes_server_wasted;
    row["stalls"] = s.stalls;
    row["stall_seconds"] = s.stall_seconds;
    row["startup_ms"] = s.startup_ms ? ordered_json(*s.startup_ms) : ordered_json(nullptr);
    row["summary_written"] = true;
    row["late_pieces"] = s.late_pieces;
    return row;
}

std::string mb(double b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
    return buf;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string ms(const ordered_json& v) {
    return v.is_null() ? "n/a" : fmt("%.0f ms", v.get<double>());
}

}  // namespace

ordered_json make_report(const RunRecords& r, std::optional<double> ceiling_pct) {
    const bool catalogue = r.kind == "catalogue";
    double unicast = 0;
    for (const auto& s : r.sessions)
        unicast += catalogue ? r.bitrate_bps / 8.0 * s.watch_s
                             : static_cast<double>(r.title_bytes.at(static_cast<std::size_t>(s.title)));
    const double server = static_cast<double>(r.vod_bytes + r.seed_bytes + r.tracker_bytes);
    std::vector<double> startups;
    std::uint64_t stalls = 0, redundant = 0, raced = 0, uploaded = 0, from_server = 0, wasted = 0;
    double stall_s = 0, capacity = 0;
    int completed = 0;
    for (const auto& s : r.sessions) {
        stalls += s.stalls;
        stall_s += s.stall_seconds;
        redundant += s.bytes_redundant;
        raced += s.bytes_redundant_raced;
        uploaded += s.bytes_uploaded;
        from_server += s.bytes_from_server;
        wasted += s.bytes_server_wasted;
        completed += s.completed ? 1 : 0;
        capacity += s.upload_cap_bps / 8.0 * std::max(0.0, s.end_s - s.start_s);
        if (s.startup_ms && *s.startup_ms >= 0) startups.push_back(static_cast<double>(*s.startup_ms));
    }
    const double sent_to_viewers = static_cast<double>(from_server + r.server_unreceived_bytes);
    ordered_json j;
    j["scenario"] = r.scenario;
    j["kind"] = "sim";
    j["scenario_type"] = r.kind;
    j["clients"] = r.sessions.size();
    j["completed_clients"] = completed;
    if (!catalogue && !r.title_bytes.empty()) j["title_bytes"] = r.title_bytes.front();
    j["unicast_bytes"] = static_cast<std::uint64_t>(unicast);
    j["server_bytes"] = static_cast<std::uint64_t>(server);
    j["vod_server_bytes"] = r.vod_bytes;
    j["seed_bytes"] = r.seed_bytes;
    j["tracker_bytes"] = r.tracker_bytes;
    j["vod_share_pct"] = server > 0 ? 100.0 * static_cast<double>(r.vod_bytes) / server : 0.0;
    j["seed_share_pct"] = server > 0 ? 100.0 * static_cast<double>(r.seed_bytes) / server : 0.0;
    j["reduction_pct"] =
        unicast > 0 ? 100.0 * (1.0 - (server + static_cast<double>(r.night_bytes)) / unicast) : 0.0;
    j["ceiling_pct"] = opt(ceiling_pct);
    const auto bins = r.server_bins.size();
    const auto uni = unicast_bins(r, bins);
    // A catalogue's peak is the testbed's bill: nearest rank (burstable billing's); a title's, interpolated.
    const auto peak_of = [&](const std::vector<double>& bins) {
        return catalogue ? nearest_rank(bins, 95) : percentile(bins, 95);
    };
    const auto peak_server = peak_of(r.server_bins);
    const auto peak_unicast = peak_of(uni);
    j["peak_bin_seconds"] = r.bin_seconds;
    j["server_peak_bps"] =
        peak_server ? ordered_json(*peak_server * 8 / r.bin_seconds) : ordered_json(nullptr);
    j["unicast_peak_bps"] =
        peak_unicast ? ordered_json(*peak_unicast * 8 / r.bin_seconds) : ordered_json(nullptr);
    j["peak_reduction_pct"] = peak_server && peak_unicast && *peak_unicast > 0
                                  ? ordered_json(100.0 * (1.0 - *peak_server / *peak_unicast))
                                  : ordered_json(nullptr);
    if (catalogue) {
        // The testbed's bound on the bill: every box's uplink over the peak's demand, at most 100% (the most
        // watching and idle boxes can take off the peak by uploading).
        double uplinks = 0;
        for (const auto& b : r.boxes)
            uplinks += b.uplink_bps;
        const double peak_demand = peak_unicast ? *peak_unicast * 8 / r.bin_seconds : 0.0;
        j["peak_bound_pct"] = peak_demand > 0 ? ordered_json(std::min(100.0, 100.0 * uplinks / peak_demand))
                                              : ordered_json(nullptr);
    }
    j["upload_capacity_bytes"] = static_cast<std::uint64_t>(capacity);
    j["upload_used_pct"] =
        capacity > 0 ? ordered_json(100.0 * static_cast<double>(uploaded) / capacity) : ordered_json(nullptr);
    double first_title = r.title_bytes.empty() ? 0 : static_cast<double>(r.title_bytes.front());
    j["upload_bound_pct"] = unicast > 0 && capacity > 0 && !catalogue
                                ? ordered_json(100.0 * std::min(capacity, unicast - first_title) / unicast)
                                : ordered_json(nullptr);
    j["total_traffic_bytes"] = static_cast<std::uint64_t>(server) + uploaded;
    j["redundant_bytes"] = redundant;
    j["redundant_raced_bytes"] = raced;
    j["server_wasted_bytes"] = wasted + r.server_unreceived_bytes;
    j["server_unreceived_bytes"] = r.server_unreceived_bytes;
    j["server_wasted_pct"] =
        sent_to_viewers > 0
            ? 100.0 * static_cast<double>(wasted + r.server_unreceived_bytes) / sent_to_viewers
            : 0.0;
    j["stalls"] = {{"count", stalls}, {"seconds", stall_s}};
    j["startup_ms"] = {{"median", opt(percentile(startups, 50))}, {"p95", opt(percentile(startups, 95))}};
    if (catalogue) {
        auto titles = ordered_json::array();
        const auto n = r.title_names.size();
        std::vector<double> t_unicast(n, 0), t_server(n, 0), t_sessions(n, 0), t_stalls(n, 0);
        for (const auto& s : r.sessions) {
            const auto t = static_cast<std::size_t>(s.title);
            t_unicast[t] += r.bitrate_bps / 8.0 * s.watch_s;
            t_server[t] += static_cast<double>(s.bytes_from_server);
            t_sessions[t] += 1;
            t_stalls[t] += s.stalls;
        }
        for (std::size_t t = 0; t < n; ++t) {
            if (t_sessions[t] == 0) continue;
            titles.push_back(
                {{"title", r.title_names[t]},
                 {"sessions", static_cast<int>(t_sessions[t])},
                 {"unicast_bytes", static_cast<std::uint64_t>(t_unicast[t])},
                 {"server_bytes", static_cast<std::uint64_t>(t_server[t])},
                 {"reduction_pct", t_unicast[t] > 0 ? 100.0 * (1 - t_server[t] / t_unicast[t]) : 0.0},
                 {"stalls", static_cast<int>(t_stalls[t])}});
        }
        j["per_title"] = titles;
        double night_peak = 0;
        for (double b : r.night_bins)
            night_peak = std::max(night_peak, b * 8 / r.bin_seconds);
        j["probe_box_bytes"] = r.seed_bytes;  // the probe box stands where the operator's seed does
        j["night_seconds"] = r.night_seconds;
        j["night_server_bytes"] = r.night_bytes;
        j["night_peak_bps"] = night_peak;
        j["push_bytes"] = r.push_bytes;
        j["push_assigned_bytes"] = r.push_assigned_bytes;
        j["push_titles_placed"] = r.push_titles_placed;
        auto boxes = ordered_json::array();
        for (const auto& b : r.boxes)
            boxes.push_back({{"box", b.box},
                             {"uplink_bps", b.uplink_bps},
                             {"sessions", b.sessions},
                             {"bytes_uploaded", b.uploaded},
                             {"bytes_from_server", b.from_server},
                             {"cached_bytes_end", b.cached_bytes_end}});
        j["per_box"] = boxes;
    }
    auto rows = ordered_json::array();
    for (std::size_t i = 0; i < r.sessions.size(); ++i)
        rows.push_back(session_row(r.sessions[i], i, catalogue));
    j["per_client"] = rows;
    j["server_bins_bytes"] = r.server_bins;
    j["notes"] = r.notes;
    j["simulator"] = {
        {"wall_seconds", r.cost.wall_seconds},
        {"simulated_seconds", r.cost.simulated_seconds},
        {"peak_memory_kb", r.cost.peak_memory_kb},
        {"events", r.cost.events},
        {"events_per_second",
         r.cost.wall_seconds > 0 ? static_cast<double>(r.cost.events) / r.cost.wall_seconds : 0.0},
        {"transfers", r.cost.transfers},
        {"controller_ticks", r.cost.controller_ticks},
        {"tick_ms", r.cost.tick_ms}};
    return j;
}

std::string render_markdown(const ordered_json& r) {
    std::string out = "# Toast simulator report: " + r["scenario"].get<std::string>() + "\n\n";
    for (const auto& n : r["notes"])
        out += "> " + n.get<std::string>() + "\n";
    if (!r["notes"].empty()) out += "\n";
    const auto clients = r["clients"].get<std::size_t>();
    const auto done = r["completed_clients"].get<std::size_t>();
    out += "| metric | value |\n|---|---|\n";
    out += "| sessions (completed) | " + std::to_string(clients) + " (" + std::to_string(done) + ") |\n";
    out += "| unicast bytes | " + mb(r["unicast_bytes"].get<double>()) + " |\n";
    out += "| server bytes (VoD + seed) | " + mb(r["server_bytes"].get<double>()) + " |\n";
    if (r.contains("night_seconds") && r["night_seconds"].get<double>() > 0)
        out += "| the night before the evening (" + fmt("%.0f s", r["night_seconds"].get<double>()) +
               ", push) | " + mb(r["night_server_bytes"].get<double>()) +
               " from the server (in the reduction, not the peak); " +
               mb(r["push_assigned_bytes"].get<double>()) + " assigned, " +
               std::to_string(r["push_titles_placed"].get<int>()) + " titles placed |\n";
    out += "| VoD server / seed share | " + fmt("%.1f%%", r["vod_share_pct"].get<double>()) + " / " +
           fmt("%.1f%%", r["seed_share_pct"].get<double>()) + " |\n";
    out += "| **reduction vs unicast** | **" + fmt("%.1f%%", r["reduction_pct"].get<double>()) + "**" +
           (r["ceiling_pct"].is_null() ? "" : fmt(" (ceiling %.1f%%)", r["ceiling_pct"].get<double>())) +
           " |\n";
    if (!r["peak_reduction_pct"].is_null())
        out += "| server peak (95th percentile of " + fmt("%.0f", r["peak_bin_seconds"].get<double>()) +
               " s bins) | " + fmt("%.2f Mbps", r["server_peak_bps"].get<double>() / 1e6) +
               " against unicast " + fmt("%.2f Mbps", r["unicast_peak_bps"].get<double>() / 1e6) + ": **" +
               fmt("%.1f%%", r["peak_reduction_pct"].get<double>()) + "** lower" +
               (r.contains("peak_bound_pct") && !r["peak_bound_pct"].is_null()
                    ? fmt(" (peak bound %.1f%%: every box's upload over the peak's demand)",
                          r["peak_bound_pct"].get<double>())
                    : std::string()) +
               " |\n";
    if (!r["upload_used_pct"].is_null())
        out += "| viewers' upload used (of cap x time present) | " +
               fmt("%.1f%%", r["upload_used_pct"].get<double>()) + " |\n";
    out += "| redundant bytes (raced) | " + mb(r["redundant_bytes"].get<double>()) + " (" +
           mb(r["redundant_raced_bytes"].get<double>()) + ") |\n";
    out += "| wasted server bytes | " + mb(r["server_wasted_bytes"].get<double>()) + " (" +
           fmt("%.1f%%", r["server_wasted_pct"].get<double>()) + ") |\n";
    out += "| stalls | " + std::to_string(r["stalls"]["count"].get<std::uint64_t>()) + " (" +
           fmt("%.1f s", r["stalls"]["seconds"].get<double>()) + ") |\n";
    out += "| startup median / p95 | " + ms(r["startup_ms"]["median"]) + " / " + ms(r["startup_ms"]["p95"]) +
           " |\n";
    const auto& c = r["simulator"];
    out += "| simulator: wall time, simulated time | " + fmt("%.1f s", c["wall_seconds"].get<double>()) +
           ", " + fmt("%.0f s", c["simulated_seconds"].get<double>()) + " |\n";
    out += "| simulator: peak memory | " + fmt("%.1f MB", c["peak_memory_kb"].get<double>() / 1024) + " |\n";
    out += "| simulator: events, events/s | " + std::to_string(c["events"].get<std::uint64_t>()) + ", " +
           fmt("%.0f", c["events_per_second"].get<double>()) + " |\n\n";
    if (r.contains("per_title")) {
        out +=
            "## Titles (most sessions first, up to 20)\n\n| title | sessions | server | unicast | reduction "
            "| stalls |\n"
            "|---|---|---|---|---|---|\n";
        auto titles = r["per_title"];
        std::vector<ordered_json> v(titles.begin(), titles.end());
        std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
            return a["sessions"].template get<int>() > b["sessions"].template get<int>();
        });
        for (std::size_t i = 0; i < v.size() && i < 20; ++i)
            out += "| " + v[i]["title"].get<std::string>() + " | " +
                   std::to_string(v[i]["sessions"].get<int>()) + " | " +
                   mb(v[i]["server_bytes"].get<double>()) + " | " + mb(v[i]["unicast_bytes"].get<double>()) +
                   " | " + fmt("%.1f%%", v[i]["reduction_pct"].get<double>()) + " | " +
                   std::to_string(v[i]["stalls"].get<int>()) + " |\n";
        out += "\n";
    } else {
        out +=
            "## Clients\n\n| # | done | from peers | from server | uploaded | redundant | stalls | startup "
            "|\n"
            "|---|---|---|---|---|---|---|---|\n";
        for (const auto& row : r["per_client"])
            out +=
                "| " + std::to_string(row["client"].get<int>()) + " | " +
                (row["completed"].get<bool>() ? "yes" : "no") + " | " +
                mb(row["bytes_from_peers"].get<double>()) + " | " +
                mb(row["bytes_from_server"].get<double>()) + " | " + mb(row["bytes_uploaded"].get<double>()) +
                " | " + mb(row["bytes_redundant"].get<double>()) + " | " +
                std::to_string(row["stalls"].get<int>()) + " (" +
                fmt("%.1f s", row["stall_seconds"].get<double>()) + ") | " + ms(row["startup_ms"]) + " |\n";
        out += "\n";
    }
    return out;
}

}  // namespace toast::sim
