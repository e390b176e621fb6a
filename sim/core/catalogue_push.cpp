#include "sim/core/catalogue_push.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "client/core/push_fetch_policy.hpp"
#include "sim/core/catalogue_sessions.hpp"
#include "sim/core/scenario_values.hpp"

namespace toast::sim {

namespace {

using nlohmann::json;

constexpr double kMaxNightS = 3600;  // the testbed's longest night

[[noreturn]] void fail(const std::string& key, const std::string& what, const json& raw) {
    throw ScenarioError("scenario field '" + key + "': expected " + what + ", got " + quoted(raw));
}

double number_in(const json& push, const std::string& key, double fallback, double lo, double hi) {
    if (!push.contains(key)) return fallback;
    const auto& v = push.at(key);
    if (!v.is_number() || v.is_boolean() || v.get<double>() < lo || v.get<double>() > hi) {
        char what[96];
        std::snprintf(what, sizeof what, "a number in [%g, %g]", lo, hi);
        fail("push." + key, what, v);
    }
    return v.get<double>();
}

std::uint64_t integer_in(const json& push, const std::string& key, std::uint64_t fallback, std::uint64_t lo,
                         std::uint64_t hi) {
    if (!push.contains(key)) return fallback;
    const auto& v = push.at(key);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < lo || v.get<std::uint64_t>() > hi)
        fail("push." + key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
    return v.get<std::uint64_t>();
}

}  // namespace

std::optional<PushSpec> read_push(const CatalogueScenario& s) {
    const json& raw = s.push;
    if (raw.is_null()) return std::nullopt;
    if (!raw.is_object()) fail("push", "null or an object with \"quota\", \"rate\" and \"window\"", raw);
    for (const char* key : {"quota", "rate", "window"})
        if (!raw.contains(key))
            throw ScenarioError(std::string("scenario field 'push': missing \"") + key + "\"");
    PushSpec p;
    const auto quota = size_value(raw.at("quota"));
    if (!quota || *quota <= 0) fail("push.quota", "a size > 0 such as \"200MiB\"", raw.at("quota"));
    p.quota_bytes = *quota;
    const auto rate = bitrate_value(raw.at("rate"));
    if (!rate || *rate <= 0) fail("push.rate", "a bitrate > 0 such as \"2Mbps\"", raw.at("rate"));
    p.rate_bps = *rate;
    const auto& w = raw.at("window");
    const bool numbers = w.is_array() && w.size() == 2 && std::all_of(w.begin(), w.end(), [](const json& x) {
                             return x.is_number() && !x.is_boolean();
                         });
    if (!numbers || !(-kMaxNightS <= w[0].get<double>() && w[0].get<double>() < w[1].get<double>() &&
                      w[1].get<double>() <= s.evening_seconds)) {
        char what[160];
        std::snprintf(
            what, sizeof what,
            "[start, end] seconds from the evening's start (before it: negative), -%g <= start < end <= %g",
            kMaxNightS, s.evening_seconds);
        fail("push.window", what, w);
    }
    p.window_start_s = w[0].get<double>();
    p.window_end_s = w[1].get<double>();
    // The server's planner fields, with the server's ranges (server/core/push_config) and defaults; the
    // testbed gives the server the scenario's peak_viewers_pct unless the push object names its own.
    auto& ps = p.planner;
    ps.replicas = static_cast<std::uint32_t>(integer_in(raw, "replicas", ps.replicas, 2, 64));
    ps.seed = integer_in(raw, "seed", ps.seed, 0, UINT64_MAX);
    const double pct = number_in(raw, "peak_viewers_pct", s.peak_viewers_pct, 0, 100);
    ps.peak_viewers = raw.contains("peak_viewers") ? number_in(raw, "peak_viewers", 0, 0, 1e9)
                                                   : pct / 100.0 * static_cast<double>(s.boxes);
    ps.headroom = number_in(raw, "headroom", ps.headroom, 0, 10);
    ps.holder_share = number_in(raw, "holder_share", ps.holder_share, 0.01, 1);
    ps.chunk_pieces =
        static_cast<std::uint32_t>(integer_in(raw, "chunk_pieces", ps.chunk_pieces, 1, 1'000'000));
    ps.min_stripes = static_cast<std::uint32_t>(integer_in(raw, "min_stripes", ps.min_stripes, 1, 1'000'000));
    static const std::vector<std::string> kKnown = {
        "quota",    "rate",         "window",       "replicas",   "seed", "peak_viewers", "peak_viewers_pct",
        "headroom", "holder_share", "chunk_pieces", "min_stripes"};
    for (const auto& [key, value] : raw.items())
        if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end()) p.unread.push_back("push." + key);
    return p;
}

std::vector<double> demand_forecast(const CatalogueScenario& s, double lambda_peak) {
    double mean_shape = 0;
    for (std::size_t k = 1; k < s.profile.size(); ++k)
        mean_shape += (s.profile[k].first - s.profile[k - 1].first) *
                      (s.profile[k - 1].second + s.profile[k].second) / 2;
    const double per_hour = lambda_peak * mean_shape * 3600;
    const auto cdf = zipf_cumulative(s.titles, s.zipf_alpha);
    std::vector<double> out;
    for (std::size_t i = 0; i < cdf.size(); ++i) {
        const double share = cdf[i] - (i ? cdf[i - 1] : 0.0);
        out.push_back(std::round(per_hour * share * 1e6) / 1e6);
    }
    return out;
}

std::string box_name(int box) {
    char name[24];
    std::snprintf(name, sizeof name, "box%03d", box);
    return name;
}

namespace {

// A box's fetch of its assigned pieces (in the assignment's order) over the night, as the client's
// PushFetchPolicy paces it; a fetch completes within its step (the server's NIC and the box's downlink are
// many times the push rate).
std::vector<PushHolding> fetch_in_night(const std::vector<std::pair<int, std::vector<int>>>& assigned,
                                        const PushSpec& spec, std::uint64_t title_bytes,
                                        std::uint64_t piece_size, std::vector<double>& bins, double bin_s,
                                        std::uint64_t& fetched) {
    std::vector<client::PushPiece> order;
    for (std::size_t h = 0; h < assigned.size(); ++h)
        for (int p : assigned[h].second) {
            const auto from = static_cast<std::uint64_t>(p) * piece_size;
            order.push_back({h, client::PieceIndex(p), Bytes(std::min(piece_size, title_bytes - from))});
        }
    std::vector<PushHolding> held;
    for (const auto& [title, pieces] : assigned)
        held.push_back({title, {}});
    const double night = spec.night_s();
    const double end = std::min(spec.window_end_s, 0.0);
    if (night <= 0 || order.empty()) return held;
    client::PushFetchPolicy policy({BitRate(static_cast<std::uint64_t>(spec.rate_bps)),
                                    Bytes(static_cast<std::uint64_t>(spec.quota_bytes)), 2});
    const double step = std::max(1.0, static_cast<double>(piece_size) * 8 / spec.rate_bps / 2);
    std::size_t next = 0;
    std::uint64_t held_bytes = 0;
    const auto ms = [](double t) { return static_cast<std::int64_t>(std::llround(t * 1000)); };
    for (double t = -night; t < end && next < order.size(); t += step) {
        client::PushFetchInput in;
        in.assigned = true;
        in.unix_ms = ms(t);
        in.window_start_ms = ms(-night);
        in.window_end_ms = ms(end);
        in.held = Bytes(held_bytes);
        for (std::size_t k = next; k < order.size() && k < next + 4; ++k)
            in.missing.push_back(order[k]);
        const auto now =
            client::PushFetchPolicy::Time(std::chrono::milliseconds(in.unix_ms + ms(kMaxNightS)));
        const auto decision = policy.decide(in, now);
        for (const auto& piece : decision.start) {
            held[piece.title].pieces.push_back(static_cast<int>(piece.piece.value()));
            held_bytes += piece.size.value();
            fetched += piece.size.value();
            const auto bin = static_cast<std::size_t>((t + night) / bin_s);
            if (bin < bins.size()) bins[bin] += static_cast<double>(piece.size.value());
            ++next;
        }
    }
    for (auto& h : held)
        std::sort(h.pieces.begin(), h.pieces.end());
    return held;
}

}  // namespace

PushPlacement place_push(const CatalogueScenario& s, const PushSpec& spec,
                         const std::vector<double>& forecast, const std::vector<double>& uplink_bps,
                         double bin_s, const std::vector<std::vector<int>>& warm) {
    const std::uint64_t title_bytes = s.title_bytes();
    const auto piece_size = static_cast<std::uint64_t>(s.piece_size);
    std::vector<server::PlanTitle> titles;
    for (int t = 0; t < s.titles; ++t) {
        char hash[41];
        std::snprintf(hash, sizeof hash, "%040x", t + 1);
        titles.push_back({.name = title_name(t),
                          .info_hash = hash,
                          .size = Bytes(title_bytes),
                          .piece_size = Bytes(piece_size),
                          .bitrate = BitRate(static_cast<std::uint64_t>(s.bitrate)),
                          .demand = forecast.at(static_cast<std::size_t>(t))});
    }
    // The coordinator keeps its boxes by id: the planner sees them in that order.
    std::vector<server::PlanBox> boxes;
    for (int b = 0; b < s.boxes; ++b)
        boxes.push_back({box_name(b),
                         BitRate(static_cast<std::uint64_t>(uplink_bps.at(static_cast<std::size_t>(b)))),
                         Bytes(static_cast<std::uint64_t>(spec.quota_bytes))});
    std::sort(boxes.begin(), boxes.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    PushPlacement out;
    out.plan = server::plan_push(titles, boxes, spec.planner);
    out.held.resize(static_cast<std::size_t>(s.boxes));
    out.night_bins.assign(static_cast<std::size_t>(std::ceil(spec.night_s() / bin_s)), 0.0);
    for (const auto& t : out.plan.titles)
        out.titles_placed += t.stripes > 0 ? 1 : 0;
    for (const auto& bp : out.plan.boxes) {
        const int box = std::stoi(bp.id.substr(3));
        std::vector<std::pair<int, std::vector<int>>> assigned;
        const auto* held_warm =
            static_cast<std::size_t>(box) < warm.size() ? &warm[static_cast<std::size_t>(box)] : nullptr;
        for (const auto& h : bp.holdings) {
            const int title = std::stoi(out.plan.titles[h.title].name.substr(1)) - 1;
            if (held_warm && std::find(held_warm->begin(), held_warm->end(), title) != held_warm->end())
                continue;  // held already: the push agent leaves it to the cache
            std::vector<int> pieces;
            for (const auto& span : h.pieces)
                for (auto p = span.first; p <= span.last; ++p)
                    pieces.push_back(static_cast<int>(p));
            assigned.emplace_back(title, std::move(pieces));
        }
        out.assigned_bytes += bp.bytes.value();
        out.held[static_cast<std::size_t>(box)] =
            fetch_in_night(assigned, spec, title_bytes, piece_size, out.night_bins, bin_s, out.night_bytes);
    }
    return out;
}

}  // namespace toast::sim
