#include "sim/core/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "sim/core/py_random.hpp"
#include "sim/core/scenario_values.hpp"

namespace toast::sim {

namespace {

// A piece is a power of two of at least 16 KiB (libtorrent's block), as the testbed's scenarios require.
bool is_piece_size(double v) {
    const auto n = static_cast<std::uint64_t>(v);
    return v >= 16384 && (n & (n - 1)) == 0;
}

using nlohmann::json;

const std::vector<std::string> kPickers = {"rarest", "inorder", "beta", "hybrid", "adaptive"};
const std::vector<std::string> kBehaviors = {"download", "stream", "seed"};
const std::vector<std::string> kChokers = {"tit-for-tat", "seed", "nearest"};
// A box may also run the operator's seed's choker (the client's `leader`).
const std::vector<std::string> kCatalogueChokers = {"nearest", "tit-for-tat", "seed", "leader"};
const std::vector<std::string> kSeedClients = {"stock", "toast"};
const std::vector<std::string> kArrivals = {"uniform", "poisson", "all-at-once"};
const std::vector<std::string> kCaches = {"none", "lru", "popularity"};

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

// Reads the fields of one object with the testbed's error wording.
class Fields {
  public:
    explicit Fields(const json& data) : data_(data) {}

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw ScenarioError("scenario field '" + key + "': expected " + what + ", got " +
                            quoted(data_.at(key)));
    }
    bool has(const std::string& key) const { return data_.contains(key); }
    const json& raw(const std::string& key) const { return data_.at(key); }

    template <class T, class Convert>
    void get(const std::string& key, T& out, Convert convert, const std::function<bool(T)>& check,
             const std::string& what) const {
        if (!has(key)) return;
        std::optional<T> v = convert(raw(key));
        if (!v || (check && !check(*v))) fail(key, what);
        out = *v;
    }
    void number(const std::string& key, double& out, std::optional<double> (*convert)(const json&),
                const std::function<bool(double)>& check, const std::string& what) const {
        get<double>(key, out, convert, check, what);
    }
    void choice(const std::string& key, std::string& out, const std::vector<std::string>& options) const {
        if (!has(key)) return;
        const auto& v = raw(key);
        // str(value) in the testbed: a number is never one of the options.
        if (!v.is_string() ||
            std::find(options.begin(), options.end(), v.get<std::string>()) == options.end())
            fail(key, "one of " + join(options));
        out = v.get<std::string>();
    }
    void integer(const std::string& key, std::int64_t& out, const std::function<bool(std::int64_t)>& check,
                 const std::string& what) const {
        if (!has(key)) return;
        const auto& v = raw(key);
        if (!(v.is_number_integer() || v.is_number_unsigned()) || v.is_boolean()) fail(key, what);
        auto x = v.get<std::int64_t>();
        if (check && !check(x)) fail(key, what);
        out = x;
    }
    void flag(const std::string& key, bool& out) const {
        if (!has(key)) return;
        if (!raw(key).is_boolean()) fail(key, "true or false");
        out = raw(key).get<bool>();
    }
    void strings(const std::string& key, std::vector<std::string>& out,
                 const std::function<bool(const std::vector<std::string>&)>& check,
                 const std::string& what) const {
        if (!has(key)) return;
        const auto& v = raw(key);
        if (!v.is_array()) fail(key, what);
        std::vector<std::string> list;
        for (const auto& x : v) {
            if (!x.is_string()) fail(key, what);
            list.push_back(x.get<std::string>());
        }
        if (check && !check(list)) fail(key, what);
        out = list;
    }

  private:
    const json& data_;
};

std::string name_of(const json& data, const std::string& default_name) {
    if (!data.contains("name")) return default_name;
    const auto& n = data.at("name");
    return n.is_string() ? n.get<std::string>() : n.dump();
}

// The testbed's buffer(): "" / null, "N%" with 0 < N <= 100, or a size.
std::optional<std::string> buffer_text(const json& v) {
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) return std::string();
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    auto b = s.find_first_not_of(" \t\n");
    auto e = s.find_last_not_of(" \t\n");
    s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
    if (!s.empty() && s.back() == '%') {
        try {
            std::size_t used = 0;
            double pct = std::stod(s.substr(0, s.size() - 1), &used);
            if (used != s.size() - 1 || !(pct > 0 && pct <= 100)) return std::nullopt;
        } catch (const std::exception&) {
            return std::nullopt;
        }
        return s;
    }
    if (!size_value(json(s))) return std::nullopt;
    return s;
}

std::optional<std::string> lookahead_text(const json& v) {
    if (v.is_string() && (v.get<std::string>().empty() || v.get<std::string>() == "none"))
        return v.get<std::string>();
    auto d = duration_value(v);
    if (!d || *d < 1) return std::nullopt;
    return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::uint64_t TitleScenario::title_bytes() const {
    return static_cast<std::uint64_t>(title_seconds * bitrate / 8);
}

std::uint64_t CatalogueScenario::title_bytes() const {
    return static_cast<std::uint64_t>(title_seconds * bitrate / 8);
}

double CatalogueScenario::quota_bytes() const {
    if (disk_quota_bytes) return *disk_quota_bytes;
    return disk_quota_titles.value_or(0) * static_cast<double>(title_bytes());
}

TitleScenario title_scenario_from_json(const json& data, const std::string& default_name) {
    if (!data.is_object()) throw ScenarioError("scenario: expected a JSON object");
    static const std::set<std::string> known = {"name",
                                                "description",
                                                "type",
                                                "clients",
                                                "arrival",
                                                "arrival_interval",
                                                "behavior",
                                                "picker",
                                                "inorder_window",
                                                "lookahead",
                                                "upload_limit",
                                                "download_limit",
                                                "buffer_limit",
                                                "title_seconds",
                                                "bitrate",
                                                "piece_size",
                                                "choker",
                                                "delay_ms",
                                                "shaping",
                                                "seed",
                                                "seed_upload_limit",
                                                "seed_client",
                                                "random_seed",
                                                "time_limit",
                                                "baselines",
                                                "extra_client_args"};
    for (const auto& [key, value] : data.items())
        if (!known.count(key)) throw ScenarioError("scenario field '" + key + "': unknown field");
    TitleScenario s;
    s.name = name_of(data, default_name);
    Fields f(data);
    std::int64_t clients = s.clients;
    f.integer(
        "clients", clients, [](std::int64_t v) { return v >= 1 && v <= 500; }, "an integer from 1 to 500");
    s.clients = static_cast<int>(clients);
    f.choice("arrival", s.arrival, kArrivals);
    f.number("arrival_interval", s.arrival_interval, duration_value, nullptr, "a duration such as \"5s\"");
    f.choice("behavior", s.behavior, kBehaviors);
    f.choice("picker", s.picker, kPickers);
    f.number("inorder_window", s.inorder_window, duration_value, nullptr, "a duration such as \"30s\"");
    f.get<std::string>("lookahead", s.lookahead, lookahead_text, nullptr,
                       "a duration of at least 1s such as \"60s\", or \"none\"");
    f.number(
        "upload_limit", s.upload_limit, bitrate_value, [](double v) { return v > 0; },
        "a bitrate such as \"2Mbps\"");
    f.number("download_limit", s.download_limit, bitrate_value, nullptr, "a bitrate such as \"8Mbps\" or 0");
    f.get<std::string>("buffer_limit", s.buffer_limit, buffer_text, nullptr,
                       "a percentage such as \"50%\" or a size");
    f.number(
        "title_seconds", s.title_seconds, duration_value, [](double v) { return v > 0; },
        "a duration such as \"60s\"");
    f.number(
        "bitrate", s.bitrate, bitrate_value, [](double v) { return v > 0; }, "a bitrate such as \"2Mbps\"");
    f.number("piece_size", s.piece_size, size_value, is_piece_size, "a power of two of at least 16KiB");
    f.choice("choker", s.choker, kChokers);
    if (f.has("delay_ms")) {
        const auto& v = f.raw("delay_ms");
        if (!v.is_number() || v.is_boolean() || v.get<double>() < 0 || v.get<double>() > 1000)
            f.fail("delay_ms", "milliseconds from 0 to 1000");
        s.delay_ms = v.get<double>();
    }
    f.flag("shaping", s.shaping);
    f.flag("seed", s.seed);
    f.number("seed_upload_limit", s.seed_upload_limit, bitrate_value, nullptr, "a bitrate or 0");
    f.choice("seed_client", s.seed_client, kSeedClients);
    f.integer(
        "random_seed", s.random_seed, [](std::int64_t v) { return v >= 0; }, "a non-negative integer");
    f.number("time_limit", s.time_limit, duration_value, nullptr, "a duration");
    f.strings(
        "baselines", s.baselines,
        [](const std::vector<std::string>& v) {
            return std::all_of(v.begin(), v.end(),
                               [](const auto& x) { return x == "unicast" || x == "stock"; });
        },
        "a list of \"unicast\" and \"stock\"");
    f.strings("extra_client_args", s.extra_client_args, nullptr, "a list of strings");
    if (static_cast<double>(s.title_bytes()) < s.piece_size)
        throw ScenarioError("scenario: the title (title_seconds x bitrate) is smaller than one piece");
    return s;
}

CatalogueScenario catalogue_scenario_from_json(const json& data, const std::string& default_name) {
    if (!data.is_object()) throw ScenarioError("scenario: expected a JSON object");
    static const std::set<std::string> read = {"name",
                                               "description",
                                               "type",
                                               "boxes",
                                               "titles",
                                               "zipf_alpha",
                                               "title_seconds",
                                               "bitrate",
                                               "piece_size",
                                               "uplink",
                                               "uplink_mix",
                                               "evening",
                                               "peak_viewers_pct",
                                               "abandon",
                                               "disk_quota",
                                               "warm_titles",
                                               "cache",
                                               "push",
                                               "picker",
                                               "choker",
                                               "upload_limit",
                                               "random_seed",
                                               "time_limit",
                                               "probe_box"};
    CatalogueScenario s;
    s.name = name_of(data, default_name);
    for (const auto& [key, value] : data.items())
        if (!read.count(key)) s.unread_fields.push_back(key);
    Fields f(data);
    std::int64_t n = s.boxes;
    f.integer(
        "boxes", n, [](std::int64_t v) { return v >= 1 && v <= 10'000'000; }, "a positive integer");
    s.boxes = static_cast<int>(n);
    n = s.titles;
    f.integer(
        "titles", n, [](std::int64_t v) { return v >= 1 && v <= 10'000'000; }, "a positive integer");
    s.titles = static_cast<int>(n);
    if (f.has("zipf_alpha")) {
        const auto& v = f.raw("zipf_alpha");
        if (!v.is_number() || v.is_boolean() || v.get<double>() < 0) f.fail("zipf_alpha", "a number >= 0");
        s.zipf_alpha = v.get<double>();
    }
    f.number(
        "title_seconds", s.title_seconds, duration_value, [](double v) { return v > 0; },
        "a duration such as \"120s\"");
    f.number(
        "bitrate", s.bitrate, bitrate_value, [](double v) { return v > 0; }, "a bitrate such as \"4Mbps\"");
    f.number("piece_size", s.piece_size, size_value, is_piece_size, "a power of two of at least 16KiB");
    f.number(
        "uplink", s.uplink, bitrate_value, [](double v) { return v > 0; }, "a bitrate such as \"1Mbps\"");
    if (f.has("uplink_mix")) {
        const auto& v = f.raw("uplink_mix");
        const std::string what = "a list of {\"share\": S, \"factor\": F} with shares summing to 1";
        if (!v.is_array() || v.empty()) f.fail("uplink_mix", what);
        s.uplink_mix.clear();
        double total = 0;
        for (const auto& e : v) {
            if (!e.is_object() || !e.contains("share") || !e.contains("factor") || !e["share"].is_number() ||
                !e["factor"].is_number() || e["share"].get<double>() < 0 || e["factor"].get<double>() <= 0)
                f.fail("uplink_mix", what);
            s.uplink_mix.push_back({e["share"].get<double>(), e["factor"].get<double>()});
            total += e["share"].get<double>();
        }
        if (std::abs(total - 1.0) > 1e-6) f.fail("uplink_mix", what);
    }
    if (f.has("evening")) {
        const auto& v = f.raw("evening");
        const std::string what =
            "{\"seconds\": S, \"profile\": [[fraction, rate], ...]} from fraction 0 to 1";
        if (!v.is_object()) f.fail("evening", what);
        if (v.contains("seconds")) {
            auto d = duration_value(v["seconds"]);
            if (!d || *d <= 0) f.fail("evening", what);
            s.evening_seconds = *d;
        }
        if (v.contains("profile")) {
            const auto& p = v["profile"];
            if (!p.is_array() || p.size() < 2) f.fail("evening", what);
            s.profile.clear();
            for (const auto& pt : p) {
                if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number())
                    f.fail("evening", what);
                double x = pt[0].get<double>(), y = pt[1].get<double>();
                if (y < 0 || (!s.profile.empty() && x <= s.profile.back().first)) f.fail("evening", what);
                s.profile.emplace_back(x, y);
            }
            if (s.profile.front().first != 0 || s.profile.back().first != 1) f.fail("evening", what);
        }
    }
    if (f.has("peak_viewers_pct")) {
        const auto& v = f.raw("peak_viewers_pct");
        if (!v.is_number() || v.is_boolean() || v.get<double>() <= 0 || v.get<double>() > 100)
            f.fail("peak_viewers_pct", "a percentage above 0 and at most 100");
        s.peak_viewers_pct = v.get<double>();
    }
    if (f.has("abandon")) {
        const auto& v = f.raw("abandon");
        const std::string what = "{\"pct\": P, \"watched\": [lo, hi]} with 0 <= P <= 100, 0 <= lo <= hi <= 1";
        if (!v.is_object()) f.fail("abandon", what);
        if (v.contains("pct")) {
            if (!v["pct"].is_number() || v["pct"].get<double>() < 0 || v["pct"].get<double>() > 100)
                f.fail("abandon", what);
            s.abandon_pct = v["pct"].get<double>();
        }
        if (v.contains("watched")) {
            const auto& w = v["watched"];
            if (!w.is_array() || w.size() != 2 || !w[0].is_number() || !w[1].is_number())
                f.fail("abandon", what);
            s.abandon_lo = w[0].get<double>();
            s.abandon_hi = w[1].get<double>();
            if (!(0 <= s.abandon_lo && s.abandon_lo <= s.abandon_hi && s.abandon_hi <= 1))
                f.fail("abandon", what);
        }
    }
    if (f.has("disk_quota")) {
        const auto& v = f.raw("disk_quota");
        const std::string what = "a size such as \"100MiB\" or \"N titles\"";
        std::string text = v.is_string() ? v.get<std::string>() : "";
        const auto pos = text.find("title");
        if (pos != std::string::npos) {
            try {
                std::size_t used = 0;
                double t = std::stod(text.substr(0, pos), &used);
                if (t < 0) f.fail("disk_quota", what);
                s.disk_quota_titles = t;
                s.disk_quota_bytes.reset();
            } catch (const std::exception&) {
                f.fail("disk_quota", what);
            }
        } else {
            auto b = size_value(v);
            if (!b) f.fail("disk_quota", what);
            s.disk_quota_bytes = *b;
            s.disk_quota_titles.reset();
        }
    }
    std::int64_t warm = s.warm_titles;
    f.integer(
        "warm_titles", warm, [](std::int64_t v) { return v >= 0; }, "a non-negative integer");
    s.warm_titles = static_cast<int>(warm);
    f.choice("cache", s.cache, kCaches);
    if (f.has("push")) s.push = f.raw("push");
    f.choice("picker", s.picker, kPickers);
    f.choice("choker", s.choker, kCatalogueChokers);
    f.flag("probe_box", s.probe_box);
    if (f.has("upload_limit")) {
        double u = 0;
        f.number(
            "upload_limit", u, bitrate_value, [](double v) { return v > 0; }, "a bitrate such as \"1Mbps\"");
        s.upload_limit = u;
    }
    f.integer(
        "random_seed", s.random_seed, [](std::int64_t v) { return v >= 0; }, "a non-negative integer");
    f.number("time_limit", s.time_limit, duration_value, nullptr, "a duration");
    if (static_cast<double>(s.title_bytes()) < s.piece_size)
        throw ScenarioError("scenario: the title (title_seconds x bitrate) is smaller than one piece");
    return s;
}

Scenario scenario_from_json(const json& data, const std::string& default_name) {
    if (!data.is_object()) throw ScenarioError("scenario: expected a JSON object");
    if (data.contains("type")) {
        const auto& t = data.at("type");
        if (t == "catalogue") return catalogue_scenario_from_json(data, default_name);
        if (t != "title")
            throw ScenarioError("scenario field 'type': expected one of title, catalogue, got " + quoted(t));
    }
    return title_scenario_from_json(data, default_name);
}

std::vector<double> arrival_times(const TitleScenario& s) {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(s.clients));
    if (s.arrival == "all-at-once") return std::vector<double>(static_cast<std::size_t>(s.clients), 0.0);
    if (s.arrival == "uniform") {
        for (int i = 0; i < s.clients; ++i)
            out.push_back(i * s.arrival_interval);
        return out;
    }
    PyRandom rng(static_cast<std::uint64_t>(s.random_seed));
    double t = 0;
    for (int i = 0; i < s.clients; ++i) {
        out.push_back(t);
        t += s.arrival_interval > 0 ? rng.expovariate(1.0 / s.arrival_interval) : 0.0;
    }
    return out;
}

int watching_at_once(const TitleScenario& s) {
    const auto arrivals = arrival_times(s);
    int best = 0;
    std::size_t j = 0;
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
        while (arrivals[j] + s.title_seconds <= arrivals[i])
            ++j;
        best = std::max(best, static_cast<int>(i - j + 1));
    }
    return best;
}

}  // namespace toast::sim
