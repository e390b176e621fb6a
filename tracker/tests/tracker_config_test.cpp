#include <catch2/catch.hpp>

#include <string>

#include "toast/common/config.hpp"
#include "tracker/core/tracker_config.hpp"

using namespace toast::tracker;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// The ConfigError message for `j`, or "" if it loads.
std::string error_of(const json& j) {
    try {
        load_tracker_config(j);
    } catch (const toast::ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("an empty tracker config gives the documented defaults", "[tracker][config]") {
    auto c = load_tracker_config(json::object());
    CHECK(c.registry.interval == 300s);
    CHECK(c.registry.min_interval == 30s);
    CHECK(c.registry.peer_expiry == 660s);
    CHECK(c.registry.numwant_default == 50);
    CHECK(c.registry.numwant_max == 200);
    CHECK(c.registry.max_swarms == 1'000'000);
    CHECK_FALSE(c.whitelist.has_value());
    CHECK_FALSE(c.passkeys.has_value());
    CHECK(c.rate_limit.per_second == 20);
    CHECK(c.rate_limit.burst == 100);
    CHECK(c.rate_limit.exempt.empty());  // not even loopback: behind a same-host proxy, that is everyone
    CHECK(c.rate_limit.ipv6_prefix == 64);
    CHECK(c.registry.ip_param_from.empty());
    CHECK(c.admin_allow.to_string() == "[127.0.0.0/8, ::1/128]");
    CHECK(c.stats_page_limit == 1000);
    CHECK_FALSE(c.access_log.path.has_value());
    CHECK_FALSE(c.access_log.udp);
    CHECK(c.max_scrape_hashes == 64);
    CHECK(c.http.idle_timeout == 15s);
    CHECK(c.http.header_limit == 8192);
    CHECK(c.http.max_target_length == 2048);
    CHECK(c.http.max_connections == 4096);
    CHECK_FALSE(c.state_file.has_value());
    CHECK(c.state_save_interval == 10s);
    CHECK(c.log_level == "info");
}

TEST_CASE("every tracker config field is read", "[tracker][config]") {
    auto c = load_tracker_config(json::parse(R"({
        "interval": "60s", "min_interval": 10, "peer_expiry": "3min",
        "numwant_default": 5, "numwant_max": 9, "max_swarms": 7,
        "whitelist": "/etc/toast/whitelist.txt", "passkeys": "/etc/toast/passkeys",
        "rate_limit": {"per_second": 0.5, "burst": 3, "max_tracked": 10, "exempt": ["127.0.0.1"],
                       "ipv6_prefix": 56},
        "ip_param_from": ["10.0.0.0/8", "fd00::/8"], "admin_allow": ["192.0.2.1"], "stats_page_limit": 50,
        "access_log": {"path": "/var/log/toast/tracker-access.log", "udp": true},
        "max_scrape_hashes": 4,
        "http": {"idle_timeout": "250ms", "header_limit": 4096, "max_target_length": 1000, "max_connections": 3},
        "state_file": "/var/lib/toast/tracker.state", "state_save_interval": "1min",
        "log_level": "debug"})"));
    CHECK(c.registry.interval == 60s);
    CHECK(c.registry.min_interval == 10s);
    CHECK(c.registry.peer_expiry == 180s);
    CHECK(c.registry.numwant_default == 5);
    CHECK(c.registry.numwant_max == 9);
    CHECK(c.registry.max_swarms == 7);
    CHECK(c.whitelist == std::filesystem::path("/etc/toast/whitelist.txt"));
    CHECK(c.passkeys == std::filesystem::path("/etc/toast/passkeys"));
    CHECK(c.rate_limit.per_second == 0.5);
    CHECK(c.rate_limit.burst == 3);
    CHECK(c.rate_limit.max_tracked == 10);
    CHECK(c.rate_limit.exempt.to_string() == "[127.0.0.1/32]");
    CHECK(c.rate_limit.ipv6_prefix == 56);
    CHECK(c.registry.ip_param_from.to_string() == "[10.0.0.0/8, fd00::/8]");
    CHECK(c.admin_allow.to_string() == "[192.0.2.1/32]");
    CHECK(c.stats_page_limit == 50);
    CHECK(c.access_log.path == std::filesystem::path("/var/log/toast/tracker-access.log"));
    CHECK(c.access_log.udp);
    CHECK(c.max_scrape_hashes == 4);
    CHECK(c.http.idle_timeout == 250ms);
    CHECK(c.http.header_limit == 4096);
    CHECK(c.http.max_target_length == 1000);
    CHECK(c.http.max_connections == 3);
    CHECK(c.state_file == std::filesystem::path("/var/lib/toast/tracker.state"));
    CHECK(c.state_save_interval == 60s);
    CHECK(c.log_level == "debug");
}

TEST_CASE("peer expiry defaults to two intervals plus a minute", "[tracker][config]") {
    CHECK(load_tracker_config(json::parse(R"({"interval": 100})")).registry.peer_expiry == 260s);
}

TEST_CASE("bad tracker config values are reported with field and value", "[tracker][config]") {
    CHECK(
        error_of(json{{"interval", "soon"}}) ==
        "config field 'interval': expected a duration such as \"8ms\" or a number of seconds, got \"soon\"");
    CHECK(error_of(json{{"interval", "1500ms"}}) ==
          "config field 'interval': must be a whole number of seconds, got 1500000000 ns");
    CHECK(error_of(json{{"interval", 0}}) == "config field 'interval': value 0s is outside [1s, 604800s]");
    CHECK(error_of(json{{"interval", 60}, {"min_interval", 61}}) ==
          "config field 'min_interval': value 61s is greater than interval (60s)");
    CHECK(error_of(json{{"interval", 60}, {"peer_expiry", 60}}) ==
          "config field 'peer_expiry': value 60s must be greater than interval (60s), or every peer expires "
          "between its announces");
    CHECK(error_of(json::parse(R"({"numwant_default": 300})")) ==
          "config field 'numwant_default': value 300 is greater than numwant_max (200)");
    CHECK(error_of(json{{"numwant_max", -1}}) ==
          "config field 'numwant_max': expected a non-negative integer, got -1");
    CHECK(error_of(json{{"whitelist", ""}}) ==
          "config field 'whitelist': must not be empty (leave it out to serve every info-hash)");
    CHECK(error_of(json{{"passkeys", ""}}) ==
          "config field 'passkeys': must not be empty (leave it out to admit announces without one)");
    CHECK(error_of(json{{"rate_limit", {{"burst", 0.5}}}}) ==
          "config field 'rate_limit.burst': value 0.5 is outside [1, 1e+09]");
    CHECK(error_of(json{{"rate_limit", {{"per_secnd", 1}}}}) ==
          "config field 'rate_limit.per_secnd': unknown field (value 1)");
    CHECK(error_of(json::parse(R"({"http": {"max_target_length": 9000}})")) ==
          "config field 'http.max_target_length': value 9000 must be below http.header_limit (8192)");
    CHECK(error_of(json{{"log_level", "loud"}}) ==
          "config field 'log_level': expected trace, debug, info, warn, error or off, got \"loud\"");
    CHECK(error_of(json{{"intervall", 5}}).find("intervall") != std::string::npos);
    CHECK(error_of(json::parse(R"({"rate_limit": {"exempt": ["127.0.0.1", "localhost"]}})")) ==
          "config field 'rate_limit.exempt[1]': expected an address or prefix such as \"127.0.0.0/8\" or "
          "\"::1\", got \"localhost\"");
    CHECK(error_of(json::parse(R"({"admin_allow": "127.0.0.1"})")) ==
          "config field 'admin_allow': expected an array of strings, got \"127.0.0.1\"");
    CHECK(error_of(json::parse(R"({"rate_limit": {"ipv6_prefix": 16}})")) ==
          "config field 'rate_limit.ipv6_prefix': value 16 is outside [32, 128]");
    CHECK(error_of(json::parse(R"({"access_log": {"path": ""}})")) ==
          "config field 'access_log.path': must not be empty (leave access_log out for no access log)");
    CHECK(error_of(json::parse(R"({"stats_page_limit": 0})")) ==
          "config field 'stats_page_limit': value 0 is outside [1, 100000]");
}

TEST_CASE("every duration is bounded before it is converted, so huge numbers cannot wrap",
          "[tracker][config]") {
    // 1e10 s is about 317 years: in nanoseconds it overflows a 64-bit count and used to wrap negative.
    CHECK(error_of(json::parse(R"({"interval": 1e10})")) ==
          "config field 'interval': value 10000000000.0s is outside [1s, 604800s]");
    CHECK(error_of(json::parse(R"({"peer_expiry": 1e300})")) ==
          "config field 'peer_expiry': value 1e+300s is outside [1s, 604800s]");
    CHECK(error_of(json::parse(R"({"http": {"idle_timeout": 1e10}})")) ==
          "config field 'http.idle_timeout': value 10000000000.0s is outside [10ms, 1h]");
    CHECK(error_of(json::parse(R"({"http": {"idle_timeout": 0}})")) ==
          "config field 'http.idle_timeout': value 0s is outside [10ms, 1h]");
    CHECK(error_of(json::parse(R"({"http": {"idle_timeout": "2h"}})")) ==
          "config field 'http.idle_timeout': value \"2h\" is outside [10ms, 1h]");
    CHECK(error_of(json::parse(R"({"min_interval": -1})")) ==
          "config field 'min_interval': value -1s is outside [0s, 604800s]");
    // Sizes and counts have bounds too.
    CHECK(error_of(json::parse(R"({"http": {"header_limit": 100000000}})")) ==
          "config field 'http.header_limit': value 100000000 is outside [512, 1048576]");
    CHECK(error_of(json::parse(R"({"max_swarms": 0})")) ==
          "config field 'max_swarms': value 0 is outside [1, 100000000]");
    CHECK(error_of(json::parse(R"({"rate_limit": {"max_tracked": 1e12}})")).find("rate_limit.max_tracked") !=
          std::string::npos);
}

TEST_CASE("the state keys are bounded and a reload says what changes for them", "[tracker][config]") {
    CHECK(error_of(json{{"state_file", ""}}) ==
          "config field 'state_file': must not be empty (leave it out to keep no state)");
    CHECK(error_of(json{{"state_save_interval", 0.5}}) ==
          "config field 'state_save_interval': value 0.5s is outside [1s, 1h]");
    CHECK(error_of(json{{"state_save_interval", "2h"}}) ==
          "config field 'state_save_interval': value \"2h\" is outside [1s, 1h]");
    CHECK(error_of(json::parse(R"({"state_save_interval": 1e10})")) ==
          "config field 'state_save_interval': value 10000000000.0s is outside [1s, 1h]");
    CHECK(load_tracker_config(json{{"state_save_interval", 3600}}).state_save_interval == 1h);

    auto before = load_tracker_config(json::object());
    auto after =
        load_tracker_config(json{{"state_file", "/var/lib/toast/t.state"}, {"state_save_interval", 2}});
    CHECK(describe_changes(before, after) ==
          std::vector<std::string>{
              "state_file: (none) -> /var/lib/toast/t.state (not read; the next save writes there)",
              "state_save_interval: 10s -> 2s"});
    CHECK(describe_changes(after, after).empty());
}
