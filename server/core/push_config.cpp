#include "server/core/push_config.hpp"

#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "toast/common/config.hpp"

namespace toast::server {

using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

PushWindow load_window(ConfigReader r) {
    PushWindow w;
    int kinds = 0;
    auto pair = [&](std::string_view key) -> const nlohmann::json& {
        const auto& v = r.raw(key);
        if (!v.is_array() || v.size() != 2) r.fail(key, "expected [start, end]");
        ++kinds;
        return v;
    };
    if (r.has("daily")) {
        const auto& v = pair("daily");
        for (int i = 0; i < 2; ++i) {
            auto t = v[i].is_string() ? parse_time_of_day(v[i].get<std::string>()) : std::nullopt;
            if (!t) r.fail("daily", "expected [\"HH:MM\", \"HH:MM\"] (UTC), got " + v.dump());
            (i == 0 ? w.start : w.end) = *t;
        }
        if (w.start == w.end) r.fail("daily", "start and end are the same time");
        w.kind = PushWindow::Kind::daily;
    }
    if (r.has("after_start")) {
        const auto& v = pair("after_start");
        for (int i = 0; i < 2; ++i) {
            std::optional<std::chrono::nanoseconds> d;
            if (v[i].is_string()) d = parse_duration(v[i].get<std::string>());
            if (v[i].is_number()) d = seconds_to_duration(v[i].get<double>());
            if (!d)
                r.fail("after_start", "expected [start, end] as durations such as \"30s\", got " + v.dump());
            (i == 0 ? w.start : w.end) = std::chrono::duration_cast<std::chrono::seconds>(*d);
        }
        if (w.end <= w.start) r.fail("after_start", "the end must come after the start");
        w.kind = PushWindow::Kind::after_start;
    }
    if (r.has("unix")) {
        const auto& v = pair("unix");
        for (int i = 0; i < 2; ++i) {
            if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0)
                r.fail("unix", "expected [start, end] as unix seconds, got " + v.dump());
            (i == 0 ? w.start : w.end) = std::chrono::seconds(v[i].get<std::int64_t>());
        }
        if (w.end <= w.start) r.fail("unix", "the end must come after the start");
        w.kind = PushWindow::Kind::unix_time;
    }
    if (kinds > 1) r.fail("daily", "give one of daily, after_start and unix");
    r.finish();
    return w;
}

}  // namespace

std::optional<std::chrono::seconds> parse_time_of_day(std::string_view text) {
    int parts[3] = {0, 0, 0};
    int count = 0;
    std::size_t at = 0;
    while (count < 3) {
        if (at + 2 > text.size() || !std::isdigit(static_cast<unsigned char>(text[at])) ||
            !std::isdigit(static_cast<unsigned char>(text[at + 1])))
            return std::nullopt;
        parts[count++] = (text[at] - '0') * 10 + (text[at + 1] - '0');
        at += 2;
        if (at == text.size()) break;
        if (text[at] != ':') return std::nullopt;
        ++at;
    }
    if (at != text.size() || count < 2) return std::nullopt;
    if (parts[1] > 59 || parts[2] > 59) return std::nullopt;
    const auto s = std::chrono::seconds(parts[0] * 3600 + parts[1] * 60 + parts[2]);
    if (s > 24h) return std::nullopt;
    return s;
}

DemandConfig load_demand_config(ConfigReader r) {
    DemandConfig d;
    d.half_life = r.duration("half_life", d.half_life, 1s, 24h * 365);
    if (r.has("forecast")) {
        auto path = r.string("forecast");
        if (path.empty()) r.fail("forecast", "must not be empty (leave it out for no forecast)");
        d.forecast = path;
    }
    r.finish();
    return d;
}

PushConfig load_push_config(ConfigReader r) {
    PushConfig p;
    p.enabled = r.boolean("enabled", true);
    if (r.has("window")) p.window = load_window(r.object("window"));
    p.rate = r.bitrate("rate", p.rate, BitRate(8'000), BitRate(100'000'000'000));
    p.box_quota = r.bytes("box_quota", p.box_quota, Bytes(1), Bytes(1ull << 50));
    p.box_upload = r.bitrate("box_upload", p.box_upload, BitRate(1'000), BitRate(100'000'000'000));
    p.replicas = static_cast<std::uint32_t>(r.uint("replicas", p.replicas, 2, 64));
    p.seed = r.uint("seed", p.seed);
    if (r.has("peak_viewers")) p.peak_viewers = r.number("peak_viewers", std::nullopt, 0.0, 1e9);
    p.peak_viewers_pct = r.number("peak_viewers_pct", p.peak_viewers_pct, 0.0, 100.0);
    p.headroom = r.number("headroom", p.headroom, 0.0, 10.0);
    p.holder_share = r.number("holder_share", p.holder_share, 0.01, 1.0);
    p.chunk_pieces = static_cast<std::uint32_t>(r.uint("chunk_pieces", p.chunk_pieces, 1, 1'000'000));
    p.min_stripes = static_cast<std::uint32_t>(r.uint("min_stripes", p.min_stripes, 1, 1'000'000));
    p.refresh = r.duration("refresh", p.refresh, 1s, 24h);
    p.box_ttl = r.duration("box_ttl", 3 * p.refresh, 1s, 24h * 7);
    if (p.box_ttl < p.refresh)
        r.fail("box_ttl", "must be at least refresh (" + format_duration(p.refresh) + ")");
    p.replan_change = r.number("replan_change", p.replan_change, 0.0, 1.0);
    r.finish();
    return p;
}

WindowTimes window_times(const PushWindow& w, std::int64_t now_ms, std::int64_t server_start_ms) {
    const auto start = std::chrono::duration_cast<std::chrono::milliseconds>(w.start).count();
    const auto end = std::chrono::duration_cast<std::chrono::milliseconds>(w.end).count();
    switch (w.kind) {
        case PushWindow::Kind::after_start:
            return {server_start_ms + start, server_start_ms + end};
        case PushWindow::Kind::unix_time:
            return {start, end};
        case PushWindow::Kind::daily:
            break;
    }
    const auto length = end > start ? end - start : end + kDayMs - start;
    const auto midnight = floor_div(now_ms, kDayMs) * kDayMs;
    // The occurrence that began yesterday may still be open (a window past midnight).
    for (auto day : {midnight - kDayMs, midnight, midnight + kDayMs}) {
        const WindowTimes t{day + start, day + start + length};
        if (now_ms < t.end_ms) return t;
    }
    return {midnight + kDayMs + start, midnight + kDayMs + start + length};
}

std::optional<std::map<std::string, double>> parse_forecast(std::string_view text, std::string* error) {
    auto bad = [error](std::string m) -> std::optional<std::map<std::string, double>> {
        if (error) *error = std::move(m);
        return std::nullopt;
    };
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() != "titles") return bad("unknown field \"" + it.key() + "\"");
    }
    if (!j.contains("titles") || !j["titles"].is_object())
        return bad("\"titles\" must be an object of title name -> sessions per hour");
    std::map<std::string, double> out;
    for (auto it = j["titles"].begin(); it != j["titles"].end(); ++it) {
        if (!it.value().is_number() || !std::isfinite(it.value().get<double>()) ||
            it.value().get<double>() < 0)
            return bad("titles." + it.key() + " must be a non-negative number of sessions per hour");
        out[it.key()] = it.value().get<double>();
    }
    return out;
}

}  // namespace toast::server
