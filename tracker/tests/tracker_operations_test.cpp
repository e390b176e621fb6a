// The real executable on 127.0.0.1, run as operators do: paged and restricted /stats, the access log, SIGHUP
// reloads of the configuration.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "tracker/core/udp_protocol.hpp"
#include "tracker_process.hpp"

using namespace toast::tracker;
using toast::tracker::testing::TrackerProcess;
using toast::tracker::testing::url_escape;
using namespace std::chrono_literals;
namespace asio = boost::asio;

using toast::tracker::testing::announce_target;
using toast::tracker::testing::eventually;
using toast::tracker::testing::starts_with;

namespace {

// `count` announces to distinct swarms, pipelined on one connection (the tracker must not rate limit).
void fill_swarms(const TrackerProcess& tracker, int count) {
    std::string pipeline;
    for (int i = 0; i < count; ++i) {
        std::string hash(20, 'h');
        for (int b = 0; b < 4; ++b)
            hash[static_cast<std::size_t>(b)] = static_cast<char>((i >> (8 * b)) & 0xff);
        pipeline += "GET /announce?info_hash=" + url_escape(hash) +
                    "&peer_id=-TT0001-000000000001&port=7001&uploaded=0&downloaded=0&left=5 HTTP/1.1\r\n"
                    "Host: x\r\n" +
                    (i + 1 == count ? "Connection: close\r\n" : "") + "\r\n";
    }
    toast::testing::raw_exchange(tracker.http_port(), pipeline, 30s);
}

}  // namespace

TEST_CASE("/stats is paged and bounded: pages in info-hash order hold every swarm once", "[tracker][stats]") {
    TrackerProcess tracker(false, R"({"rate_limit": {"per_second": 0}, "stats_page_limit": 1000})");
    fill_swarms(tracker, 2500);
    auto first = nlohmann::json::parse(tracker.get("/stats").body);
    CHECK(first["totals"]["swarms"] == 2500);
    CHECK(first["swarms"].size() == 100);  // the default page
    std::set<std::string> seen;
    std::string previous;
    std::string after;
    int pages = 0;
    for (; pages < 10; ++pages) {
        auto res = tracker.get("/stats?limit=1000" + (after.empty() ? "" : "&after=" + after));
        REQUIRE(res.status == 200);
        auto page = nlohmann::json::parse(res.body);
        REQUIRE(page["swarms"].size() <= 1000);
        for (const auto& s : page["swarms"]) {
            const std::string h = s["info_hash"];
            CHECK(h > previous);
            previous = h;
            seen.insert(h);
        }
        if (page["next"].is_null()) break;
        after = page["next"];
    }
    CHECK(pages == 2);  // 1000 + 1000 + 500
    CHECK(seen.size() == 2500);
    CHECK(tracker.get("/stats?limit=1001").status == 400);
    CHECK(tracker.get("/stats?after=xyz").status == 400);
    CHECK(tracker.get("/stats?sort=name").status == 400);
    auto totals_only = nlohmann::json::parse(tracker.get("/stats?limit=0").body);
    CHECK(totals_only["swarms"].empty());
    CHECK(totals_only["totals"]["swarms"] == 2500);
    CHECK(totals_only["next"].is_null());
}

TEST_CASE("announces are answered while /stats pages are being produced", "[tracker][stats]") {
    TrackerProcess tracker(false, R"({"rate_limit": {"per_second": 0}, "stats_page_limit": 2000})");
    fill_swarms(tracker, 6000);
    // One client walks the whole listing in full pages again and again while another announces.
    std::atomic<bool> stop{false};
    std::atomic<int> pages{0};
    std::thread reader([&] {
        std::string after;
        while (!stop) {
            auto res = tracker.get("/stats?limit=2000" + (after.empty() ? "" : "&after=" + after));
            if (res.status != 200) break;
            auto next = nlohmann::json::parse(res.body)["next"];
            after = next.is_null() ? "" : next.get<std::string>();
            ++pages;
        }
    });
    auto slowest = std::chrono::steady_clock::duration::zero();
    int answered = 0;
    for (int i = 0; i < 100 && (i < 20 || pages < 6); ++i) {
        const auto start = std::chrono::steady_clock::now();
        if (tracker.get(announce_target('z', i, 7000 + i, 5)).status == 200) ++answered;
        slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
    }
    stop = true;
    reader.join();
    CHECK(answered >= 20);
    CHECK(pages >= 1);
    // A loose bound: a page is a few milliseconds of work, so no announce waits anywhere near seconds.
    CHECK(slowest < 2s);
}

TEST_CASE("/stats and /metrics are served only to admin_allow addresses", "[tracker][stats]") {
    TrackerProcess local(false);
    CHECK(local.get("/stats").status == 200);
    CHECK(local.get("/metrics").status == 200);
    TrackerProcess elsewhere(false, R"({"admin_allow": ["192.0.2.0/24"]})");
    auto stats = elsewhere.get("/stats");
    CHECK(stats.status == 403);
    CHECK(stats.body.find("/stats is served only to the addresses in admin_allow") != std::string::npos);
    // Forwarding headers are not believed.
    CHECK(toast::testing::http_request(elsewhere.http_port(), "GET", "/metrics",
                                       {{"X-Forwarded-For", "192.0.2.1"}, {"X-Real-IP", "192.0.2.1"}})
              .status == 403);
    CHECK(elsewhere.get(announce_target('a', 1, 7001, 5)).status == 200);
}

TEST_CASE("the access log has one line per HTTP request and, when asked, per UDP packet",
          "[tracker][accesslog]") {
    toast::testing::TempDir dir;
    const auto log = dir / "access.log";
    TrackerProcess tracker(true, R"({"access_log": {"path": ")" + log.string() + R"(", "udp": true}})");
    REQUIRE(toast::testing::http_request(tracker.http_port(), "GET", announce_target('a', 1, 7001, 5),
                                         {{"User-Agent", "test\"agent"}})
                .status == 200);
    CHECK(tracker.get("/nope").status == 404);
    CHECK(starts_with(toast::testing::raw_exchange(tracker.http_port(), "GET /stats HTTP/1.1\r\n\r\n"),
                      "HTTP/1.1 400"));
    REQUIRE(tracker.udp_scrape(*InfoHash::from_bytes(std::string(20, 'a'))));
    std::string text;
    REQUIRE(eventually(
        [&] {
            text = toast::testing::read_file(log);
            return std::count(text.begin(), text.end(), '\n') >= 5;
        },
        5s));
    INFO(text);
    CHECK(text.find("127.0.0.1 - - [") == 0);
    CHECK(text.find("\"GET /announce?info_hash=%61%61") != std::string::npos);
    CHECK(text.find(" HTTP/1.1\" 200 ") != std::string::npos);
    CHECK(text.find("\"test\\x22agent\"") != std::string::npos);
    CHECK(text.find("\"GET /nope HTTP/1.1\" 404 ") != std::string::npos);
    CHECK(text.find("\"GET /stats HTTP/1.1\" 400 ") != std::string::npos);  // no Host
    CHECK(text.find("\"CONNECT / UDP\" 200 16 ") != std::string::npos);
    CHECK(text.find("\"SCRAPE /scrape?info_hash=6161616161616161616161616161616161616161 UDP\" 200 20 ") !=
          std::string::npos);
}

TEST_CASE("SIGHUP re-reads the config: limits, log level and access log change, a bad config changes nothing",
          "[tracker][reload]") {
    toast::testing::TempDir dir;
    const auto config = dir / "tracker.json";
    std::ofstream(config) << R"({"rate_limit": {"per_second": 0.001, "burst": 1}, "interval": 300})";
    toast::testing::ChildProcess tracker(
        TOAST_TRACKER_BIN, {"--listen", "127.0.0.1:0", "--config", config.string()}, dir.path());
    std::uint16_t port = 0;
    REQUIRE(eventually(
        [&] {
            const auto out = tracker.stdout_text();
            const auto at = out.find("toast-tracker: http 127.0.0.1:");
            if (at == std::string::npos) return false;
            port = static_cast<std::uint16_t>(std::stoi(out.substr(at + 30)));
            return true;
        },
        10s));
    auto get = [&](const std::string& target) { return toast::testing::http_request(port, "GET", target); };
    REQUIRE(get(announce_target('s', 1, 7001, 5)).status == 200);
    REQUIRE(get(announce_target('s', 1, 7001, 5)).status == 429);

    // A config that does not load changes nothing and says why.
    std::ofstream(config) << R"({"rate_limit": {"per_second": "fast"}})";
    ::kill(tracker.pid(), SIGHUP);
    REQUIRE(eventually(
        [&] { return tracker.stderr_text().find("keeping the running configuration") != std::string::npos; },
        10s));
    CHECK(tracker.stderr_text().find("config field 'rate_limit.per_second'") != std::string::npos);
    CHECK(get(announce_target('s', 1, 7001, 5)).status == 429);

    // A good one applies at once: no limit, a new interval, an access log, debug logging.
    const auto log = dir / "access.log";
    std::ofstream(config) << R"({"rate_limit": {"per_second": 0}, "interval": 600, "log_level": "debug",
                                 "access_log": {"path": ")" +
                                 log.string() + R"("}})";
    ::kill(tracker.pid(), SIGHUP);
    REQUIRE(
        eventually([&] { return tracker.stderr_text().find("SIGHUP: reloaded") != std::string::npos; }, 10s));
    const auto err = tracker.stderr_text();
    CHECK(err.find("interval: 300s -> 600s") != std::string::npos);
    CHECK(err.find("rate_limit.per_second: 0.001 -> 0") != std::string::npos);
    CHECK(err.find("log_level: info -> debug") != std::string::npos);
    auto res = get(announce_target('s', 1, 7001, 5));
    CHECK(res.status == 200);
    CHECK(res.body.find("8:intervali600e") != std::string::npos);
    REQUIRE(eventually(
        [&] { return toast::testing::read_file(log).find("\"GET /announce?") != std::string::npos; }, 5s));

    // Rotation: move the file away, SIGHUP, and new lines go to a new file at the configured path.
    std::filesystem::rename(log, dir / "access.log.1");
    ::kill(tracker.pid(), SIGHUP);
    REQUIRE(eventually(
        [&] {
            get("/stats");
            return std::filesystem::exists(log) &&
                   toast::testing::read_file(log).find("/stats") != std::string::npos;
        },
        10s));
    // What cannot be applied is said and the rest still applies.
    std::ofstream(config) << R"({"rate_limit": {"per_second": 0}, "interval": 900, "whitelist": ")" +
                                 (dir / "missing.txt").string() + R"("})";
    ::kill(tracker.pid(), SIGHUP);
    REQUIRE(eventually(
        [&] {
            return tracker.stderr_text().find("SIGHUP: not applied: cannot read whitelist file") !=
                   std::string::npos;
        },
        10s));
    CHECK(get(announce_target('s', 1, 7001, 5)).body.find("8:intervali900e") != std::string::npos);
    CHECK(get(announce_target('t', 2, 7002, 5)).status == 200);  // the old (absent) whitelist stays in force
    CHECK(tracker.stop(SIGTERM, 5s) == std::optional<int>(0));
}
