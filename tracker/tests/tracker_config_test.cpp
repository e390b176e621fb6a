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
    CHECK(c.rate_limit.per_second == 20);
    CHECK(c.rate_limit.burst == 100);
    CHECK(c.rate_limit.exempt_loopback);
    CHECK(c.max_scrape_hashes == 64);
    CHECK(c.http.idle_timeout == 15s);
    CHECK(c.http.header_limit == 8192);
    CHECK(c.http.max_target_length == 2048);
    CHECK(c.http.max_connections == 4096);
    CHECK(c.log_level == "info");
}

TEST_CASE("every tracker config field is read", "[tracker][config]") {
    auto c = load_tracker_config(json::parse(R"({
        "interval": "60s", "min_interval": 10, "peer_expiry": "3min",
        "numwant_default": 5, "numwant_max": 9, "max_swarms": 7,
        "whitelist": "/etc/toast/whitelist.txt",
        "rate_limit": {"per_second": 0.5, "burst": 3, "max_tracked": 10, "exempt_loopback": false},
        "max_scrape_hashes": 4,
        "http": {"idle_timeout": "250ms", "header_limit": 4096, "max_target_length": 1000, "max_connections": 3},
        "log_level": "debug"})"));
    CHECK(c.registry.interval == 60s);
    CHECK(c.registry.min_interval == 10s);
    CHECK(c.registry.peer_expiry == 180s);
    CHECK(c.registry.numwant_default == 5);
    CHECK(c.registry.numwant_max == 9);
    CHECK(c.registry.max_swarms == 7);
    CHECK(c.whitelist == std::filesystem::path("/etc/toast/whitelist.txt"));
    CHECK(c.rate_limit.per_second == 0.5);
    CHECK(c.rate_limit.burst == 3);
    CHECK(c.rate_limit.max_tracked == 10);
    CHECK_FALSE(c.rate_limit.exempt_loopback);
    CHECK(c.max_scrape_hashes == 4);
    CHECK(c.http.idle_timeout == 250ms);
    CHECK(c.http.header_limit == 4096);
    CHECK(c.http.max_target_length == 1000);
    CHECK(c.http.max_connections == 3);
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
    CHECK(error_of(json{{"rate_limit", {{"burst", 0.5}}}}) ==
          "config field 'rate_limit.burst': value 0.5 is outside [1, 1e+09]");
    CHECK(error_of(json{{"rate_limit", {{"per_secnd", 1}}}}) ==
          "config field 'rate_limit.per_secnd': unknown field (value 1)");
    CHECK(error_of(json::parse(R"({"http": {"max_target_length": 9000}})")) ==
          "config field 'http.max_target_length': value 9000 must be below http.header_limit (8192)");
    CHECK(error_of(json{{"log_level", "loud"}}) ==
          "config field 'log_level': expected trace, debug, info, warn, error or off, got \"loud\"");
    CHECK(error_of(json{{"intervall", 5}}).find("intervall") != std::string::npos);
}
