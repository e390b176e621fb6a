// The real toast-server as an operator runs it: the title catalogue and the store's torrents over HTTP,
// SIGHUP reloading the config file, and the access log (with logrotate's rename-then-SIGHUP).
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <regex>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <libtorrent/torrent_info.hpp>
#include <nlohmann/json.hpp>

#include "operated_server.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
namespace tt = toast::testing;
using toast::server::testing::Operated;

namespace {

std::string hex(const lt::sha1_hash& h) {
    std::ostringstream s;
    s << h;
    return s.str();
}

}  // namespace

TEST_CASE("the catalogue lists the titles and serves each one's torrent, named with its container",
          "[server][integration][catalog]") {
    Operated op;
    auto cat = tt::http_request(op.port(), "GET", "/catalog");
    REQUIRE(cat.status == 200);
    CHECK(cat.header("content-type") == "application/json");
    CHECK(cat.header("cache-control") == "no-cache");
    auto j = nlohmann::json::parse(cat.body);
    REQUIRE(j["titles"].size() == 1);
    const auto& movie = j["titles"][0];
    CHECK(movie["name"] == "movie");
    CHECK(movie["file"] == "movie.mp4");
    CHECK(movie["size"] == 300'000);
    CHECK(movie["url"] == "/titles/movie");
    CHECK(movie["torrent"] == "/torrents/movie.torrent");

    // Unchanged, a poll costs a 304.
    const auto etag = cat.header("etag");
    REQUIRE_FALSE(etag.empty());
    CHECK(tt::http_request(op.port(), "GET", "/catalog", {{"If-None-Match", etag}}).status == 304);

    auto t = tt::http_request(op.port(), "GET", "/torrents/movie.torrent");
    REQUIRE(t.status == 200);
    CHECK(t.header("content-type") == "application/x-bittorrent");
    lt::error_code ec;
    lt::torrent_info ti(t.body.data(), static_cast<int>(t.body.size()), ec);
    REQUIRE_FALSE(ec);
    CHECK(ti.files().file_name(lt::file_index_t(0)) == "movie.mp4");
    CHECK(ti.total_size() == 300'000);
    CHECK(hex(ti.info_hashes().v1) == movie["info_hash"].get<std::string>());
    CHECK(t.header("etag") == movie["etag"].get<std::string>());
    CHECK(tt::http_request(op.port(), "HEAD", "/torrents/movie.torrent").header("content-length") ==
          std::to_string(t.body.size()));

    // The web seed a stock client derives from the torrent's file name serves the title too.
    auto by_file = tt::http_request(op.port(), "GET", "/titles/movie.mp4", {{"Range", "bytes=0-99"}});
    CHECK(by_file.status == 206);
    CHECK(by_file.body == op.source().substr(0, 100));

    auto missing = tt::http_request(op.port(), "GET", "/torrents/nothing.torrent");
    CHECK(missing.status == 404);
    CHECK_THAT(missing.body, Contains("no title named 'nothing'"));
    CHECK(tt::http_request(op.port(), "GET", "/torrents/movie").status == 404);
    CHECK(tt::http_request(op.port(), "GET", "/torrents/..%2Fconfig.json.torrent").status == 400);
    CHECK(tt::http_request(op.port(), "POST", "/catalog").status == 405);

    // A title ingested while the server runs joins the catalogue at the next SIGHUP.
    op.ingest("clip", "clip.ts.bin", 100'000, 6);
    op.reload(1);
    auto after = nlohmann::json::parse(tt::http_request(op.port(), "GET", "/catalog").body);
    REQUIRE(after["titles"].size() == 2);
    CHECK(after["titles"][0]["name"] == "clip");
    CHECK(tt::http_request(op.port(), "GET", "/catalog", {{"If-None-Match", etag}}).status == 200);
    CHECK(op.server().stop(SIGTERM, 10s) == std::optional<int>(0));
}

TEST_CASE(
    "SIGHUP applies what can change while serving, names what cannot, and keeps the config in force "
    "when the file is broken",
    "[server][integration][reload]") {
    Operated op;
    boost::asio::io_context io;
    auto connect = [&] {
        boost::asio::ip::tcp::socket s(io);
        s.connect({boost::asio::ip::make_address("127.0.0.1"), op.port()});
        return s;
    };

    op.config()["max_connections"] = 1;
    op.config()["log_level"] = "debug";
    op.config()["listen"] = "127.0.0.1:" + std::to_string(tt::free_tcp_port());
    op.write_config();
    op.reload(1);
    const auto err = op.server().stderr_text();
    CHECK_THAT(err, Contains("max_connections: 1024 -> 1"));
    CHECK_THAT(err, Contains("log_level: info -> debug"));
    CHECK_THAT(err, Contains("reload: not applied: listen"));

    // The connection limit is 1 now: with one connection held open, the next one is refused.
    {
        auto held = connect();
        std::this_thread::sleep_for(100ms);
        auto refused = tt::http_request(op.port(), "GET", "/titles/movie", {{"Range", "bytes=0-9"}});
        CHECK(refused.status == 503);
        CHECK_THAT(refused.body, Contains("connection limit of 1 reached"));
    }

    // A broken file changes nothing.
    std::ofstream(op.config_path()) << "{\"listen\": ";
    op.reload(2);
    CHECK_THAT(op.server().stderr_text(), Contains("not applied, nothing changed"));
    std::this_thread::sleep_for(100ms);  // the held connection's close reaches the server
    auto served = tt::http_request(op.port(), "GET", "/titles/movie", {{"Range", "bytes=0-9"}});
    CHECK(served.status == 206);
    CHECK(served.body == op.source().substr(0, 10));
    auto metrics = tt::http_request(op.port(), "GET", "/metrics").body;
    CHECK_THAT(metrics, Contains("toast_server_config_reloads_total{result=\"failed\"} 2"));
    CHECK(op.server().stop(SIGTERM, 10s) == std::optional<int>(0));
}

TEST_CASE(
    "the access log has one combined-format line per request with its time and range, and a new file "
    "after logrotate's SIGHUP",
    "[server][integration][access_log]") {
    Operated op(true);
    const auto log = op.path("access.log");

    auto r = tt::http_request(op.port(), "GET", "/titles/movie",
                              {{"Range", "bytes=100-199"}, {"User-Agent", "box \"7\" \xc3\xa9"}});
    REQUIRE(r.status == 206);
    CHECK(tt::http_request(op.port(), "GET", "/titles/none").status == 404);
    auto lines_of = [](const std::filesystem::path& p) {
        std::vector<std::string> lines;
        std::ifstream in(p);
        for (std::string l; std::getline(in, l);)
            lines.push_back(l);
        return lines;
    };
    std::vector<std::string> lines;
    for (int i = 0; i < 50 && lines.size() < 2; ++i) {
        std::this_thread::sleep_for(20ms);
        lines = lines_of(log);
    }
    REQUIRE(lines.size() == 2);
    const std::regex line(
        R"re(127\.0\.0\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET /titles/movie HTTP/1\.1" 206 100 "-" "box \\x227\\x22 \\xC3\\xA9" \d+\.\d{3} "bytes=100-199")re");
    INFO(lines[0]);
    CHECK(std::regex_match(lines[0], line));
    CHECK_THAT(lines[1], Contains("\"GET /titles/none HTTP/1.1\" 404 "));
    CHECK_THAT(lines[1], Contains(" \"-\""));  // no Range

    // logrotate moves the file away and sends SIGHUP: the next line goes to a new file at the path.
    std::filesystem::rename(log, op.path("access.log.1"));
    op.reload(1);
    CHECK(tt::http_request(op.port(), "HEAD", "/titles/movie").status == 200);
    for (int i = 0; i < 50 && !std::filesystem::exists(log); ++i)
        std::this_thread::sleep_for(20ms);
    std::vector<std::string> fresh;
    for (int i = 0; i < 50 && fresh.empty(); ++i) {
        fresh = lines_of(log);
        if (fresh.empty()) std::this_thread::sleep_for(20ms);
    }
    REQUIRE(fresh.size() == 1);
    CHECK_THAT(fresh[0], Contains("\"HEAD /titles/movie HTTP/1.1\" 200 0 "));
    CHECK(lines_of(op.path("access.log.1")).size() == 2);
    CHECK(op.server().stop(SIGTERM, 10s) == std::optional<int>(0));
}
