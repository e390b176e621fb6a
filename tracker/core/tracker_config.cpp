#include "tracker/core/tracker_config.hpp"

#include "toast/common/config.hpp"
#include "toast/common/log.hpp"

namespace toast::tracker {
namespace {

std::chrono::seconds whole_seconds(ConfigReader& r, std::string_view key, std::chrono::seconds fallback,
                                   std::chrono::seconds min) {
    auto d = r.duration(key, fallback);
    auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
    if (s != d) r.fail(key, "must be a whole number of seconds, got " + std::to_string(d.count()) + " ns");
    if (s < min || s > std::chrono::hours(24 * 7)) {
        r.fail(key, "value " + std::to_string(s.count()) + "s is outside [" + std::to_string(min.count()) +
                        "s, 604800s]");
    }
    return s;
}

}  // namespace

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

    auto rl = r.object("rate_limit");
    c.rate_limit.per_second = rl.number("per_second", c.rate_limit.per_second, 0.0, 1e9);
    c.rate_limit.burst = rl.number("burst", c.rate_limit.burst, 1.0, 1e9);
    c.rate_limit.max_tracked = rl.uint("max_tracked", c.rate_limit.max_tracked, 1, 100'000'000);
    c.rate_limit.exempt_loopback = rl.boolean("exempt_loopback", c.rate_limit.exempt_loopback);
    rl.finish();

    c.max_scrape_hashes = r.uint("max_scrape_hashes", c.max_scrape_hashes, 1, 1000);

    auto h = r.object("http");
    auto idle = h.duration("idle_timeout", c.http.idle_timeout);
    if (idle < std::chrono::milliseconds(10) || idle > std::chrono::hours(1)) {
        h.fail("idle_timeout", "value " + std::to_string(idle.count()) + " ns is outside [10ms, 1h]");
    }
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

TrackerConfig load_tracker_config_file(const std::filesystem::path& path) {
    return load_tracker_config(load_json_file(path));
}

}  // namespace toast::tracker
