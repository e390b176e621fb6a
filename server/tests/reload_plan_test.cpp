#include <catch2/catch.hpp>

#include <algorithm>

#include "server/core/reload_plan.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;

namespace {

ServerConfig config(nlohmann::json extra = {}) {
    nlohmann::json j = {
        {"listen", "127.0.0.1:8080"},
        {"disks", {"/srv/d0", {{"path", "/srv/d1"}, {"emulate", {{"t_a", "8ms"}, {"r_d", "400Mbps"}}}}}}};
    for (auto& [k, v] : extra.items())
        j[k] = v;
    return load_server_config(j);
}

bool has(const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return l == text; });
}

}  // namespace

TEST_CASE("an unchanged file reloads nothing", "[server][reload]") {
    auto plan = plan_reload(config(), config());
    CHECK(plan.applied.empty());
    CHECK(plan.not_applied.empty());
    CHECK_FALSE(plan.log_level);
    CHECK_FALSE(plan.http_limits);
    CHECK_FALSE(plan.access_log);
    CHECK(plan.faults.empty());
}

TEST_CASE("log level, limits, time slice and access log apply at once", "[server][reload]") {
    auto running = config();
    auto loaded = config({{"log_level", "debug"},
                          {"idle_timeout", "5s"},
                          {"max_connections", 10},
                          {"max_ranges", 4},
                          {"max_multipart_bytes", "1MiB"},
                          {"header_limit", 4096},
                          {"max_pipelined", 2},
                          {"time_slice", "2s"},
                          {"access_log", {{"path", "/var/log/toast/server/access.log"}}}});
    auto plan = plan_reload(running, loaded);
    CHECK(plan.log_level);
    CHECK(plan.http_limits);
    CHECK(plan.access_log);
    CHECK(plan.not_applied.empty());
    CHECK(has(plan.applied, "log_level: info -> debug"));
    CHECK(has(plan.applied, "idle_timeout: 30s -> 5s"));
    CHECK(has(plan.applied, "max_connections: 1024 -> 10"));
    CHECK(has(plan.applied, "max_ranges: 16 -> 4"));
    CHECK(has(plan.applied, "max_multipart_bytes: 67108864 -> 1048576"));
    CHECK(has(plan.applied, "header_limit: 8192 -> 4096"));
    CHECK(has(plan.applied, "max_pipelined: 16 -> 2"));
    CHECK(has(plan.applied, "time_slice: 5s -> 2s"));
    CHECK(has(plan.applied, "access_log.path: (none) -> /var/log/toast/server/access.log"));
    CHECK(plan.applied.size() == 9);
    const auto& c = plan.in_force;
    CHECK(c.log_level == "debug");
    CHECK(c.idle_timeout == std::chrono::seconds(5));
    CHECK(c.max_connections == 10);
    CHECK(c.max_ranges == 4);
    CHECK(c.max_multipart_bytes.value() == 1024 * 1024);
    CHECK(c.header_limit == 4096);
    CHECK(c.max_pipelined == 2);
    CHECK(c.time_slice == std::chrono::seconds(2));
    CHECK(c.access_log == std::filesystem::path("/var/log/toast/server/access.log"));
    // Reloading the same file again changes nothing more.
    auto again = plan_reload(plan.in_force, loaded);
    CHECK(again.applied.empty());
    CHECK(again.not_applied.empty());
}

TEST_CASE("a disk's fault applies when the file changes it", "[server][reload]") {
    auto running = config();
    auto loaded = config({{"disks",
                           {"/srv/d0",
                            {{"path", "/srv/d1"},
                             {"emulate", {{"t_a", "8ms"}, {"r_d", "400Mbps"}}},
                             {"fault", {{"stutter_pct", 50}, {"offline", true}}}}}}});
    auto plan = plan_reload(running, loaded);
    CHECK(plan.faults == std::vector<std::size_t>{1});
    CHECK(plan.in_force.disks[1].fault.stutter_pct == 50);
    CHECK(plan.in_force.disks[1].fault.offline);
    CHECK(has(plan.applied,
              "disks[1].fault: {stutter_pct 0, added_latency 0s, offline false} -> {stutter_pct "
              "50, added_latency 0s, offline true}"));
    CHECK(plan.not_applied.empty());
}

TEST_CASE("what a running server cannot change is reported and kept", "[server][reload]") {
    auto running = config();
    auto loaded = config({{"listen", "0.0.0.0:9090"},
                          {"admin_listen", "127.0.0.1:9091"},
                          {"io_threads", 4},
                          {"open_files", 100},
                          {"service_model_half_life", "20s"},
                          {"log_level", "warn"},
                          {"disk_order", "cscan"},
                          {"admission", {{"disk_share", 0.5}}},
                          {"disks", {"/srv/other", "/srv/d1", "/srv/d2"}}});
    auto plan = plan_reload(running, loaded);
    CHECK(has(plan.not_applied, "listen: 127.0.0.1:8080 -> 0.0.0.0:9090 (needs a restart)"));
    CHECK(has(plan.not_applied, "admin_listen: (none) -> 127.0.0.1:9091 (needs a restart)"));
    CHECK(has(plan.not_applied, "io_threads: 1 -> 4 (needs a restart)"));
    CHECK(has(plan.not_applied, "open_files: 4096 -> 100 (needs a restart)"));
    CHECK(has(plan.not_applied, "service_model_half_life: 10s -> 20s (needs a restart)"));
    CHECK(has(plan.not_applied, "disks: 2 -> 3 disks (needs a restart)"));
    CHECK(has(plan.not_applied, "disks[0].path: /srv/d0 -> /srv/other (needs a restart)"));
    CHECK(has(plan.not_applied, "disks[1].emulate changed (needs a restart)"));
    CHECK(has(plan.not_applied, "disk_order: fifo -> cscan (needs a restart)"));
    CHECK(has(plan.not_applied, "admission changed (needs a restart)"));
    CHECK(plan.not_applied.size() == 10);
    // What can change still does; what cannot keeps its running value, so the next reload says so again.
    CHECK(has(plan.applied, "log_level: info -> warn"));
    CHECK(plan.in_force.listen.to_string() == "127.0.0.1:8080");
    CHECK(plan.in_force.disks.size() == 2);
    CHECK(plan.in_force.io_threads == 1);
    CHECK(plan.in_force.disk_order == toast::server::QueueOrder::fifo);
    CHECK(plan.in_force.admission == running.admission);
    CHECK(plan_reload(plan.in_force, loaded).not_applied.size() == 10);
}

TEST_CASE("settings only ingest reads are not the running server's business", "[server][reload]") {
    auto plan = plan_reload(config(), config({{"policy", "raid0"},
                                              {"placement_seed", 9},
                                              {"block_size", "1MiB"},
                                              {"default_bitrate", "4Mbps"},
                                              {"piece_size", "1MiB"},
                                              {"public_url", "http://vod.example"}}));
    CHECK(plan.applied.empty());
    CHECK(plan.not_applied.empty());
}

TEST_CASE("joining or changing a tier needs a restart", "[server][reload][tier]") {
    const nlohmann::json tier = {
        {"self", "a"},
        {"nodes",
         {{{"id", "a"}, {"url", "http://127.0.0.1:8080"}}, {{"id", "b"}, {"url", "http://127.0.0.1:8081"}}}}};
    auto plan = plan_reload(config(), config({{"tier", tier}}));
    CHECK(plan.not_applied == std::vector<std::string>{"tier changed (needs a restart)"});
    CHECK_FALSE(plan.in_force.tier);
    auto same = config({{"tier", tier}});
    CHECK(plan_reload(same, config({{"tier", tier}})).not_applied.empty());
}
