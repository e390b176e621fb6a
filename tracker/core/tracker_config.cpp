#include "tracker/core/tracker_config.hpp"

#include <sstream>

#include "toast/common/config.hpp"
#include "toast/common/log.hpp"
#include "toast/common/units.hpp"

namespace toast::tracker {
namespace {

// ConfigReader::duration converts a JSON number of seconds to nanoseconds, which overflows past about 292
// years; check numbers against the key's bounds first so that such a value is reported, not wrapped.
std::chrono::nanoseconds bounded_duration(ConfigReader& r, std::string_view key,
                                          std::chrono::nanoseconds fallback, std::chrono::nanoseconds min,
                                          std::chrono::nanoseconds max, std::string_view range) {
    std::string shown;
    if (r.has(key)) {  // a null value reads as "is required"
        const auto& raw = r.raw(key);
        shown = raw.is_number() ? raw.dump() + "s" : raw.dump();
        if (raw.is_number()) {
            const double seconds = raw.get<double>();
            if (!(seconds >= std::chrono::duration<double>(min).count() &&
                  seconds <= std::chrono::duration<double>(max).count())) {
                r.fail(key, "value " + shown + " is outside " + std::string(range));
            }
        }
    }
    auto d = r.duration(key, fallback, std::chrono::nanoseconds(0), std::chrono::nanoseconds::max());
    if (d < min || d > max) r.fail(key, "value " + shown + " is outside " + std::string(range));
    return d;
}

AddressSet address_set(ConfigReader& r, std::string_view key, const AddressSet& fallback) {
    if (!r.has(key)) return fallback;
    std::vector<AddressPrefix> prefixes;
    const auto texts = r.strings(key);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        auto p = AddressPrefix::parse(texts[i]);
        if (!p) {
            r.fail(
                std::string(key) + "[" + std::to_string(i) + "]",
                "expected an address or prefix such as \"127.0.0.0/8\" or \"::1\", got \"" + texts[i] + "\"");
        }
        prefixes.push_back(*p);
    }
    return AddressSet(std::move(prefixes));
}

std::chrono::seconds whole_seconds(ConfigReader& r, std::string_view key, std::chrono::seconds fallback,
                                   std::chrono::seconds min) {
    std::string range = "[";
    range += std::to_string(min.count());
    range += "s, 604800s]";
    auto d = bounded_duration(r, key, fallback, min, std::chrono::hours(24 * 7), range);
    auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
    if (s != d) r.fail(key, "must be a whole number of seconds, got " + std::to_string(d.count()) + " ns");
    return s;
}

}  // namespace

AddressSet TrackerConfig::default_admin_allow() {
    return AddressSet({*AddressPrefix::parse("127.0.0.0/8"), *AddressPrefix::parse("::1")});
}

TrackerConfig load_tracker_config(const nlohmann::json& json) {
    ConfigReader r(json);
    TrackerConfig c;
    auto& p = c.registry;
    p.interval = whole_seconds(r, "interval", p.interval, std::chrono::seconds(1));
    p.min_interval = whole_seconds(r, "min_interval", p.min_interval, std::chrono::seconds(0));
    if (p.min_interval > p.interval) {
        r.fail("min_interval", "value " + std::to_string(p.min_interval.count()) +
                                   "s is greater than interval (" + std::to_string(p.interval.count()) +
                                   "s)");
    }
    // Default expiry: two missed intervals plus a minute of slack.
    auto default_expiry = 2 * p.interval + std::chrono::seconds(60);
    p.peer_expiry = whole_seconds(r, "peer_expiry", default_expiry, std::chrono::seconds(1));
    if (p.peer_expiry <= p.interval) {
        r.fail("peer_expiry", "value " + std::to_string(p.peer_expiry.count()) +
                                  "s must be greater than interval (" + std::to_string(p.interval.count()) +
                                  "s), or every peer expires between its announces");
    }
    p.numwant_max = static_cast<std::uint32_t>(r.uint("numwant_max", p.numwant_max, 0, 10'000));
    p.numwant_default = static_cast<std::uint32_t>(r.uint("numwant_default", p.numwant_default, 0, 10'000));
    if (p.numwant_default > p.numwant_max) {
        r.fail("numwant_default", "value " + std::to_string(p.numwant_default) +
                                      " is greater than numwant_max (" + std::to_string(p.numwant_max) + ")");
    }
    p.max_swarms = r.uint("max_swarms", p.max_swarms, 1, 100'000'000);

    if (r.has("whitelist")) {
        auto path = r.string("whitelist");
        if (path.empty()) r.fail("whitelist", "must not be empty (leave it out to serve every info-hash)");
        c.whitelist = path;
    }
    if (r.has("passkeys")) {
        auto path = r.string("passkeys");
        if (path.empty())
            r.fail("passkeys", "must not be empty (leave it out to admit announces without one)");
        c.passkeys = path;
    }

    auto rl = r.object("rate_limit");
    c.rate_limit.per_second = rl.number("per_second", c.rate_limit.per_second, 0.0, 1e9);
    c.rate_limit.burst = rl.number("burst", c.rate_limit.burst, 1.0, 1e9);
    c.rate_limit.max_tracked = rl.uint("max_tracked", c.rate_limit.max_tracked, 1, 100'000'000);
    c.rate_limit.exempt = address_set(rl, "exempt", c.rate_limit.exempt);
    c.rate_limit.ipv6_prefix =
        static_cast<unsigned>(rl.uint("ipv6_prefix", c.rate_limit.ipv6_prefix, 32, 128));
    rl.finish();
    p.ip_param_from = address_set(r, "ip_param_from", p.ip_param_from);
    c.admin_allow = address_set(r, "admin_allow", c.admin_allow);
    c.stats_page_limit = r.uint("stats_page_limit", c.stats_page_limit, 1, 100'000);

    auto log = r.object("access_log");
    if (log.has("path")) {
        auto path = log.string("path");
        if (path.empty()) log.fail("path", "must not be empty (leave access_log out for no access log)");
        c.access_log.path = path;
    }
    c.access_log.udp = log.boolean("udp", c.access_log.udp);
    log.finish();

    c.max_scrape_hashes = r.uint("max_scrape_hashes", c.max_scrape_hashes, 1, 1000);

    if (r.has("state_file")) {
        auto path = r.string("state_file");
        if (path.empty()) r.fail("state_file", "must not be empty (leave it out to keep no state)");
        c.state_file = path;
    }
    c.state_save_interval = std::chrono::duration_cast<std::chrono::milliseconds>(
        bounded_duration(r, "state_save_interval", c.state_save_interval, std::chrono::seconds(1),
                         std::chrono::hours(1), "[1s, 1h]"));

    auto h = r.object("http");
    auto idle = bounded_duration(h, "idle_timeout", c.http.idle_timeout, std::chrono::milliseconds(10),
                                 std::chrono::hours(1), "[10ms, 1h]");
    c.http.idle_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(idle);
    c.http.header_limit = h.uint("header_limit", c.http.header_limit, 512, 1024 * 1024);
    c.http.max_target_length = h.uint("max_target_length", c.http.max_target_length, 64, 1024 * 1024);
    if (c.http.max_target_length >= c.http.header_limit) {
        h.fail("max_target_length", "value " + std::to_string(c.http.max_target_length) +
                                        " must be below http.header_limit (" +
                                        std::to_string(c.http.header_limit) + ")");
    }
    c.http.max_connections = h.uint("max_connections", c.http.max_connections, 1, 1'000'000);
    h.finish();

    c.log_level = r.string("log_level", c.log_level);
    if (!parse_log_level(c.log_level)) {
        r.fail("log_level", "expected trace, debug, info, warn, error or off, got \"" + c.log_level + "\"");
    }
    r.finish();
    return c;
}

std::vector<std::string> describe_changes(const TrackerConfig& a, const TrackerConfig& b) {
    std::vector<std::string> out;
    auto note = [&](std::string_view key, const std::string& before, const std::string& after) {
        if (before != after) out.push_back(std::string(key) + ": " + before + " -> " + after);
    };
    auto secs = [](std::chrono::seconds s) { return std::to_string(s.count()) + "s"; };
    auto num = [](double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    };
    auto path = [](const std::optional<std::filesystem::path>& p) { return p ? p->string() : "(none)"; };
    note("interval", secs(a.registry.interval), secs(b.registry.interval));
    note("min_interval", secs(a.registry.min_interval), secs(b.registry.min_interval));
    note("peer_expiry", secs(a.registry.peer_expiry), secs(b.registry.peer_expiry));
    note("numwant_default", std::to_string(a.registry.numwant_default),
         std::to_string(b.registry.numwant_default));
    note("numwant_max", std::to_string(a.registry.numwant_max), std::to_string(b.registry.numwant_max));
    note("max_swarms", std::to_string(a.registry.max_swarms), std::to_string(b.registry.max_swarms));
    note("whitelist", path(a.whitelist), path(b.whitelist));
    note("passkeys", path(a.passkeys), path(b.passkeys));
    note("rate_limit.per_second", num(a.rate_limit.per_second), num(b.rate_limit.per_second));
    note("rate_limit.burst", num(a.rate_limit.burst), num(b.rate_limit.burst));
    note("rate_limit.max_tracked", std::to_string(a.rate_limit.max_tracked),
         std::to_string(b.rate_limit.max_tracked));
    note("rate_limit.exempt", a.rate_limit.exempt.to_string(), b.rate_limit.exempt.to_string());
    note("rate_limit.ipv6_prefix", std::to_string(a.rate_limit.ipv6_prefix),
         std::to_string(b.rate_limit.ipv6_prefix));
    note("ip_param_from", a.registry.ip_param_from.to_string(), b.registry.ip_param_from.to_string());
    note("admin_allow", a.admin_allow.to_string(), b.admin_allow.to_string());
    note("stats_page_limit", std::to_string(a.stats_page_limit), std::to_string(b.stats_page_limit));
    note("access_log.path", path(a.access_log.path), path(b.access_log.path));
    note("access_log.udp", a.access_log.udp ? "true" : "false", b.access_log.udp ? "true" : "false");
    note("max_scrape_hashes", std::to_string(a.max_scrape_hashes), std::to_string(b.max_scrape_hashes));
    note("http.idle_timeout", std::to_string(a.http.idle_timeout.count()) + "ms",
         std::to_string(b.http.idle_timeout.count()) + "ms");
    note("http.header_limit", std::to_string(a.http.header_limit), std::to_string(b.http.header_limit));
    note("http.max_target_length", std::to_string(a.http.max_target_length),
         std::to_string(b.http.max_target_length));
    note("http.max_connections", std::to_string(a.http.max_connections),
         std::to_string(b.http.max_connections));
    // The state file is read at start-up only; a new path is just where the next save goes.
    if (a.state_file != b.state_file)
        out.push_back("state_file: " + path(a.state_file) + " -> " + path(b.state_file) +
                      " (not read; the next save writes there)");
    note("state_save_interval", format_duration(a.state_save_interval),
         format_duration(b.state_save_interval));
    note("log_level", a.log_level, b.log_level);
    return out;
}

TrackerConfig load_tracker_config_file(const std::filesystem::path& path) {
    return load_tracker_config(load_json_file(path));
}

}  // namespace toast::tracker
