// The real executable on 127.0.0.1: command line, hostile HTTP and UDP input, connection limits, SIGHUP.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
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
#include "tracker/core/passkeys.hpp"
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

TEST_CASE("toast-tracker --help documents every option with its default", "[tracker][cli]") {
    auto r = toast::testing::run(TOAST_TRACKER_BIN, {"--help"}, 10s);
    CHECK(r.exit_code == 0);
    for (const char* text :
         {"--listen HOST:PORT", "--udp HOST:PORT", "--config CONFIG", "default: no UDP tracker", "\"300s\"",
          "(200)", "SIGHUP re-reads CONFIG", "access_log", "admin_allow", "state_file", "state_save_interval",
          "passkeys", "new-passkey [LABEL...]"}) {
        INFO(text);
        CHECK(r.out.find(text) != std::string::npos);
    }
}

TEST_CASE("new-passkey prints a fresh 32-character key and its label, a line the passkey file takes",
          "[tracker][cli][passkeys]") {
    auto a = toast::testing::run(TOAST_TRACKER_BIN, {"new-passkey", "box-0042", "living", "room"}, 10s);
    auto b = toast::testing::run(TOAST_TRACKER_BIN, {"new-passkey"}, 10s);
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    REQUIRE(a.out.size() == 32 + std::string(" box-0042 living room\n").size());
    CHECK(a.out.substr(32) == " box-0042 living room\n");
    CHECK(b.out.size() == 33);
    CHECK(a.out.substr(0, 32) != b.out.substr(0, 32));
    auto parsed = toast::tracker::parse_passkey_file(a.out + b.out);
    REQUIRE(parsed.ok());
    CHECK(parsed->size() == 2);
    CHECK(parsed->label(a.out.substr(0, 32)) == std::string_view("box-0042 living room"));
}

TEST_CASE("toast-tracker rejects bad command lines with a message and exit code 2", "[tracker][cli]") {
    auto unknown = toast::testing::run(TOAST_TRACKER_BIN, {"--listen", "127.0.0.1:0", "--verbose"}, 10s);
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("unknown option '--verbose'") != std::string::npos);
    auto missing = toast::testing::run(TOAST_TRACKER_BIN, {}, 10s);
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("--listen HOST:PORT is required") != std::string::npos);
    auto bad_ep = toast::testing::run(TOAST_TRACKER_BIN, {"--listen", "127.0.0.1:99999"}, 10s);
    CHECK(bad_ep.exit_code == 2);
    CHECK(bad_ep.err.find("--listen: expected HOST:PORT, got '127.0.0.1:99999'") != std::string::npos);
    auto no_value = toast::testing::run(TOAST_TRACKER_BIN, {"--listen", "127.0.0.1:0", "--udp"}, 10s);
    CHECK(no_value.exit_code == 2);
    CHECK(no_value.err.find("--udp needs a value") != std::string::npos);
}

TEST_CASE("toast-tracker refuses a bad config or whitelist at start-up with exit code 1", "[tracker][cli]") {
    toast::testing::TempDir dir;
    std::ofstream(dir / "bad.json") << R"({"numwant_max": "many"})";
    auto bad = toast::testing::run(TOAST_TRACKER_BIN,
                                   {"--listen", "127.0.0.1:0", "--config", (dir / "bad.json").string()}, 10s);
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("config field 'numwant_max': expected a non-negative integer, got \"many\"") !=
          std::string::npos);

    std::ofstream(dir / "list.txt") << "zz\n";
    std::ofstream(dir / "wl.json") << R"({"whitelist": ")" + (dir / "list.txt").string() + R"("})";
    auto wl = toast::testing::run(TOAST_TRACKER_BIN,
                                  {"--listen", "127.0.0.1:0", "--config", (dir / "wl.json").string()}, 10s);
    CHECK(wl.exit_code == 1);
    CHECK(wl.err.find("line 1: expected a 40- or 64-digit hex info-hash, got \"zz\"") != std::string::npos);

    std::ofstream(dir / "keys") << "aaaaaaaaaaaaaaaa box 1\nnot-a-key box 2\n";
    std::ofstream(dir / "pk.json") << R"({"passkeys": ")" + (dir / "keys").string() + R"("})";
    auto pk = toast::testing::run(TOAST_TRACKER_BIN,
                                  {"--listen", "127.0.0.1:0", "--config", (dir / "pk.json").string()}, 10s);
    CHECK(pk.exit_code == 1);
    CHECK(pk.err.find("passkey file '" + (dir / "keys").string() +
                      "' line 2: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -, got 9 characters") !=
          std::string::npos);

    auto missing = toast::testing::run(
        TOAST_TRACKER_BIN, {"--listen", "127.0.0.1:0", "--config", (dir / "none.json").string()}, 10s);
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("cannot read config file") != std::string::npos);
}

TEST_CASE("toast-tracker reports an address in use with exit code 1", "[tracker][cli]") {
    TrackerProcess first(false);
    auto second = toast::testing::run(TOAST_TRACKER_BIN,
                                      {"--listen", "127.0.0.1:" + std::to_string(first.http_port())}, 10s);
    CHECK(second.exit_code == 1);
    CHECK(second.err.find("toast-tracker: bind") != std::string::npos);
}

TEST_CASE("malformed HTTP requests get 4xx answers and the tracker keeps serving",
          "[tracker][http][robustness]") {
    // A short idle timeout: raw_exchange's own timeout does not bound its synchronous reads, so a request
    // the server is still waiting to complete ends when the server gives up on it.
    TrackerProcess tracker(false, R"({"http": {"idle_timeout": "500ms"}})");
    const auto port = tracker.http_port();
    CHECK(starts_with(toast::testing::raw_exchange(port, "GARBAGE\r\n\r\n"), "HTTP/1.1 400"));
    CHECK(starts_with(toast::testing::raw_exchange(port, "GET /stats HTTP/1.1\r\nBad Header\r\n\r\n"),
                      "HTTP/1.1 400"));
    // A request line longer than the header limit: URI too long. Many large headers: 431.
    auto long_uri =
        toast::testing::raw_exchange(port, "GET /announce?" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n");
    CHECK(starts_with(long_uri, "HTTP/1.1 414 request target too long\r\n"));
    CHECK(long_uri.find("failure reason") != std::string::npos);
    std::string big_headers = "GET /stats HTTP/1.1\r\n";
    for (int i = 0; i < 100; ++i)
        big_headers += "X-Filler-" + std::to_string(i) + ": " + std::string(100, 'x') + "\r\n";
    CHECK(starts_with(toast::testing::raw_exchange(port, big_headers + "\r\n"),
                      "HTTP/1.1 431 request header too large\r\n"));
    // A target under the header limit but over max_target_length.
    auto r414 = tracker.get("/announce?" + std::string(3000, 'b'));
    CHECK(r414.status == 414);
    // A body is refused; a half request followed by a close is just dropped.
    CHECK(starts_with(
        toast::testing::raw_exchange(port, "GET /announce HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
        "HTTP/1.1 400"));
    CHECK(toast::testing::raw_exchange(port, "GET /annou").empty());
    // Malformed announces: bencoded failure reason, reason phrase says the same.
    auto bad = tracker.get(announce_target('a', 1, 70000, 0));
    CHECK(bad.status == 400);
    CHECK(bad.body ==
          "d14:failure reason35:port must be an integer in 1..65535"
          "8:intervali300e12:min intervali30ee");
    auto raw = toast::testing::raw_exchange(port, "GET /announce?info_hash=x HTTP/1.0\r\n\r\n");
    CHECK(starts_with(raw, "HTTP/1.0 400 info_hash must be exactly 20 bytes\r\n"));
    CHECK(tracker.get("/nope").status == 404);
    CHECK(toast::testing::http_request(port, "POST", "/announce").status == 405);

    REQUIRE(tracker.process().running());
    CHECK(tracker.get(announce_target('a', 1, 7001, 0)).status == 200);
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"bad_port\"}") == 1);
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"header_too_large\"}") == 1);
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"target_too_long\"}") == 2);
}

TEST_CASE("HTTP keep-alive serves several requests on one connection", "[tracker][http]") {
    TrackerProcess tracker(false);
    const std::string req = "GET " + announce_target('k', 1, 7001, 5) + " HTTP/1.1\r\nHost: x\r\n\r\n";
    const std::string last = "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    auto out = toast::testing::raw_exchange(tracker.http_port(), req + req + last);
    std::size_t answers = 0;
    for (std::size_t pos = 0; (pos = out.find("HTTP/1.1 200 OK\r\n", pos)) != std::string::npos; ++pos)
        ++answers;
    CHECK(answers == 3);
    CHECK(out.find("\"announces\":2") != std::string::npos);
}

TEST_CASE("idle HTTP connections are closed after the idle timeout", "[tracker][http]") {
    TrackerProcess tracker(false, R"({"http": {"idle_timeout": "300ms"}})");
    const auto start = std::chrono::steady_clock::now();
    auto out = toast::testing::raw_exchange(tracker.http_port(), "", 10s);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK(out.empty());
    CHECK(elapsed >= 250ms);
    CHECK(elapsed < 5s);
}

TEST_CASE("connections beyond max_connections are closed at once and counted", "[tracker][http]") {
    TrackerProcess tracker(false, R"({"http": {"max_connections": 2, "idle_timeout": "20s"}})");
    asio::io_context ioc;
    const asio::ip::tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), tracker.http_port());
    // Two idle connections take both slots (the server accepts in order, so they are sessions 1 and 2).
    asio::ip::tcp::socket a(ioc), b(ioc), c(ioc);
    a.connect(ep);
    b.connect(ep);
    c.connect(ep);
    char byte;
    boost::system::error_code ec;
    asio::read(c, asio::buffer(&byte, 1), ec);
    CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));
    // Once a slot is free again, requests are served and the refusal shows in the metrics.
    a.close();
    double refused = -1;
    REQUIRE(eventually(
        [&] {
            try {
                refused = tracker.metric("toast_tracker_http_connections_refused_total");
                return true;
            } catch (const std::exception&) {
                return false;  // the slot is not free yet
            }
        },
        5s));
    CHECK(refused >= 1);  // c, plus any probe made before a's slot was freed
}

TEST_CASE("malformed UDP packets are dropped and counted and the tracker keeps serving",
          "[tracker][udp][robustness]") {
    TrackerProcess tracker(true);
    std::mt19937_64 rng(12345);
    const int random_packets = 200;
    for (int i = 0; i < random_packets; ++i) {
        std::vector<std::uint8_t> p(static_cast<std::size_t>(rng() % 300));
        for (auto& b : p)
            b = static_cast<std::uint8_t>(rng());
        toast::tracker::testing::udp_send(tracker.udp_port(), p);
        // In batches, so the socket's receive buffer cannot overflow and drop packets uncounted.
        if (i % 20 == 19) {
            REQUIRE(eventually([&] { return tracker.metric("toast_tracker_udp_malformed_total") == i + 1; },
                               10s));
        }
    }
    toast::tracker::testing::udp_send(tracker.udp_port(), {});  // empty datagram
    toast::tracker::testing::udp_send(tracker.udp_port(), std::vector<std::uint8_t>(65507, 0x41));  // largest
    auto bad_scrape = udp::write_scrape_request(1, 1, {});
    toast::tracker::testing::udp_send(tracker.udp_port(), bad_scrape);
    const double expected = random_packets + 3;
    REQUIRE(eventually([&] { return tracker.metric("toast_tracker_udp_malformed_total") == expected; }, 10s));

    // An announce with a forged connection id gets no answer and is counted.
    AnnounceRequest r;
    r.info_hash = *InfoHash::from_bytes(std::string(20, 'u'));
    r.peer_id = *PeerId::from_bytes(std::string(20, 'p'));
    r.port = 7001;
    CHECK_FALSE(toast::tracker::testing::udp_exchange(tracker.udp_port(),
                                                      udp::write_announce_request(42, 1, r, 0, -1), 500ms));
    CHECK(tracker.metric("toast_tracker_udp_bad_connection_id_total") == 1);

    REQUIRE(tracker.process().running());
    auto connect =
        toast::tracker::testing::udp_exchange(tracker.udp_port(), udp::write_connect_request(99), 2s);
    REQUIRE(connect);
    CHECK(connect->size() == 16);
    CHECK((*connect)[7] == 99);
    CHECK(tracker.udp_scrape(r.info_hash) == std::optional<SwarmCounts>(SwarmCounts{}));
}

TEST_CASE("SIGHUP reloads the whitelist without dropping swarms, a bad file keeps the old list",
          "[tracker][whitelist]") {
    toast::testing::TempDir dir;
    const auto list = dir / "whitelist.txt";
    const std::string a_hex(40, '6');                                      // 0x66 = 'f'
    const std::string b_hex = "6767676767676767676767676767676767676767";  // 'g'
    std::ofstream(list) << a_hex << "\n";
    TrackerProcess tracker(false,
                           R"({"whitelist": ")" + list.string() + R"(", "rate_limit": {"per_second": 0}})");
    REQUIRE(tracker.get(announce_target('f', 1, 7001, 10)).status == 200);
    auto refused = tracker.get(announce_target('g', 2, 7002, 10));
    CHECK(refused.status == 403);
    CHECK(refused.body.find("info_hash is not served by this tracker") != std::string::npos);

    std::ofstream(list) << a_hex << "\n" << b_hex << "\n";
    ::kill(tracker.process().pid(), SIGHUP);
    REQUIRE(eventually([&] { return tracker.get(announce_target('g', 2, 7002, 10)).status == 200; }, 10s));
    auto stats = nlohmann::json::parse(tracker.stats());
    REQUIRE(stats["swarms"].size() == 2);
    CHECK(stats["swarms"][0]["info_hash"] == a_hex);
    CHECK(stats["swarms"][0]["leechers"] == 1);  // the swarm from before the reload is still there
    CHECK(stats["whitelist"]["entries"] == 2);

    std::ofstream(list) << "garbage\n";
    ::kill(tracker.process().pid(), SIGHUP);
    REQUIRE(eventually(
        [&] { return tracker.metric("toast_tracker_whitelist_reloads_total{result=\"failed\"}") == 1; },
        10s));
    CHECK(tracker.get(announce_target('g', 3, 7003, 10)).status == 200);
    CHECK(tracker.process().running());
    CHECK(tracker.process().stderr_text().find("keeping the previous whitelist") != std::string::npos);
}

TEST_CASE("a dual-stack tracker gives IPv4 peers in peers and IPv6 peers in peers6, over HTTP and UDP",
          "[tracker][ipv6]") {
    if (!toast::tracker::testing::ipv6_loopback_available()) {
        WARN("IPv6 loopback is not available on this host; nothing to test");
        return;
    }
    const auto http_port = toast::testing::free_tcp_port();
    const auto udp_port = toast::testing::free_udp_port();
    toast::testing::TempDir logs;
    toast::testing::ChildProcess tracker(
        TOAST_TRACKER_BIN,
        {"--listen", "[::]:" + std::to_string(http_port), "--udp", "[::]:" + std::to_string(udp_port)},
        logs.path());
    REQUIRE(toast::testing::wait_for_tcp_port(http_port, 10s));
    // Peer 1 over IPv4 (seen as 127.0.0.1, not ::ffff:127.0.0.1), peer 2 over IPv6.
    REQUIRE(toast::testing::http_request(http_port, "GET", announce_target('6', 1, 0x1111, 0)).status == 200);
    REQUIRE(!toast::tracker::testing::http_get_v6(http_port, announce_target('6', 2, 0x2222, 0)).empty());
    auto v4_view = toast::testing::http_request(http_port, "GET", announce_target('6', 3, 0x3333, 10)).body;
    const std::string loopback6("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
    CHECK(v4_view.find("5:peers6:" + std::string("\x7f\0\0\x01\x11\x11", 6)) != std::string::npos);
    CHECK(v4_view.find("6:peers618:" + loopback6 + "\x22\x22") != std::string::npos);

    // UDP answers carry only the family of the socket the request came on: 18-byte entries over IPv6.
    auto connect = toast::tracker::testing::udp_exchange(udp_port, udp::write_connect_request(5), 2s, true);
    REQUIRE(connect);
    REQUIRE(connect->size() == 16);
    std::uint64_t cid = 0;
    for (std::size_t i = 8; i < 16; ++i)
        cid = (cid << 8) | (*connect)[i];
    AnnounceRequest r;
    r.info_hash = *InfoHash::from_bytes(std::string(20, '6'));
    r.peer_id = *PeerId::from_bytes("-TT0001-100000000004");
    r.port = 0x4444;
    r.left = 10;
    // The connect above came from another socket (port) of the same address, which is allowed.
    auto reply = toast::tracker::testing::udp_exchange(
        udp_port, udp::write_announce_request(cid, 6, r, 0, -1), 2s, true);
    REQUIRE(reply);
    REQUIRE(reply->size() == 20 + 18);
    CHECK(std::string(reply->begin() + 20, reply->end()) == loopback6 + "\x22\x22");
}

TEST_CASE("the per-IP rate limit answers 429 over HTTP and an error packet over UDP",
          "[tracker][ratelimit]") {
    TrackerProcess tracker(true, R"({"rate_limit": {"per_second": 0.001, "burst": 2}})");
    CHECK(tracker.get(announce_target('r', 1, 7001, 5)).status == 200);
    CHECK(tracker.get(announce_target('r', 1, 7001, 5)).status == 200);
    auto limited = tracker.get(announce_target('r', 1, 7001, 5));
    CHECK(limited.status == 429);
    CHECK(limited.header("retry-after") == "1");
    CHECK(limited.body.find("14:failure reason47:rate limit exceeded for your address; slow down") !=
          std::string::npos);
    // The same address over UDP shares the bucket: the announce gets an error packet.
    auto connect =
        toast::tracker::testing::udp_exchange(tracker.udp_port(), udp::write_connect_request(1), 2s);
    REQUIRE(connect);
    std::uint64_t cid = 0;
    for (std::size_t i = 8; i < 16; ++i)
        cid = (cid << 8) | (*connect)[i];
    AnnounceRequest r;
    r.info_hash = *InfoHash::from_bytes(std::string(20, 'r'));
    r.peer_id = *PeerId::from_bytes(std::string(20, 'p'));
    r.port = 7002;
    auto reply = toast::tracker::testing::udp_exchange(tracker.udp_port(),
                                                       udp::write_announce_request(cid, 77, r, 0, -1), 2s);
    REQUIRE(reply);
    CHECK(*reply == udp::write_error(77, "rate limit exceeded for your address; slow down"));
    CHECK(tracker.metric("toast_tracker_refused_total{transport=\"http\",reason=\"rate_limited\"}") == 1);
    CHECK(tracker.metric("toast_tracker_refused_total{transport=\"udp\",reason=\"rate_limited\"}") == 1);
}

TEST_CASE("loopback is rate limited by default and exempt only when configured", "[tracker][ratelimit]") {
    // Behind a same-host proxy every client arrives from loopback, so exempting it is a choice (a testbed
    // with every client on 127.0.0.1 makes it), not a default.
    TrackerProcess limited(false, R"({"rate_limit": {"per_second": 0.001, "burst": 5}})");
    for (int i = 0; i < 5; ++i)
        REQUIRE(limited.get(announce_target('l', i, 7000 + i, 5)).status == 200);
    CHECK(limited.get(announce_target('l', 5, 7005, 5)).status == 429);

    TrackerProcess exempt(false,
                          R"({"rate_limit": {"per_second": 0.001, "burst": 5, "exempt": ["127.0.0.0/8"]}})");
    for (int i = 0; i < 20; ++i)
        REQUIRE(exempt.get(announce_target('l', i, 7000 + i, 5)).status == 200);
}

TEST_CASE("SIGTERM stops the tracker cleanly", "[tracker][cli]") {
    TrackerProcess tracker(true);
    // With a keep-alive connection still open, whose session outlives the server objects until the
    // io_context goes.
    asio::io_context ioc;
    asio::ip::tcp::socket open(ioc);
    open.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), tracker.http_port()));
    const std::string req = "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n";
    asio::write(open, asio::buffer(req));
    char buf[64];
    REQUIRE(open.read_some(asio::buffer(buf)) > 0);
    CHECK(tracker.process().stop(SIGTERM, 5s) == std::optional<int>(0));
}

TEST_CASE("toast-tracker counts the bytes it sends over HTTP and UDP", "[tracker][process][metrics]") {
    TrackerProcess tracker(true);
    auto res = tracker.get(announce_target('b', 1, 6881, 100));
    REQUIRE(res.status == 200);
    // Bytes are counted when a write completes; the response has been read, so the count is there.
    double http_sent = -1;
    REQUIRE(eventually(
        [&] {
            http_sent = tracker.metric("toast_tracker_bytes_sent_total{transport=\"http\"}");
            return http_sent > 0;
        },
        5s));
    // At least the announce's body, and less than everything sent so far could be (headers are small).
    CHECK(http_sent >= static_cast<double>(res.body.size()));
    CHECK(http_sent < static_cast<double>(res.body.size()) + 1024);

    InfoHash hash{};
    REQUIRE(tracker.udp_scrape(hash));
    // A connect reply is 16 bytes and a one-hash scrape reply 8 + 12 bytes.
    CHECK(tracker.metric("toast_tracker_bytes_sent_total{transport=\"udp\"}") == 16 + 20);
}

TEST_CASE("a single long header line is 431, not 414, a long request line is 414",
          "[tracker][http][robustness]") {
    TrackerProcess tracker(false, R"({"http": {"idle_timeout": "500ms"}})");
    const auto port = tracker.http_port();
    // One header line longer than max_target_length (2048) and the header limit (8192) together.
    auto one_long = toast::testing::raw_exchange(
        port, "GET /stats HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(10000, 'a') + "\r\n\r\n");
    CHECK(starts_with(one_long, "HTTP/1.1 431 request header too large\r\n"));
    // The same when the request line arrives in a read of its own (Beast then waits for the whole header).
    asio::io_context ioc;
    asio::ip::tcp::socket s(ioc);
    s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    asio::write(s, asio::buffer(std::string("GET /stats HT")));
    std::this_thread::sleep_for(100ms);
    asio::write(s, asio::buffer("TP/1.1\r\nHost: x\r\nX-Long: " + std::string(10000, 'a') + "\r\n\r\n"));
    std::string answer(64, '\0');
    boost::system::error_code ec;
    answer.resize(asio::read(s, asio::buffer(answer), asio::transfer_at_least(40), ec));
    CHECK(starts_with(answer, "HTTP/1.1 431 request header too large\r\n"));
    // A request line alone over the header limit stays 414.
    CHECK(starts_with(toast::testing::raw_exchange(
                          port, "GET /announce?" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"),
                      "HTTP/1.1 414 request target too long\r\n"));
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"header_too_large\"}") == 2);
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"target_too_long\"}") == 1);
}

TEST_CASE("HTTP/1.1 without Host, two Host lines or a Transfer-Encoding other than chunked get 400",
          "[tracker][http][robustness]") {
    TrackerProcess tracker(false, R"({"http": {"idle_timeout": "500ms"}})");
    const auto port = tracker.http_port();
    auto status_line = [&](const std::string& head) {
        auto out = toast::testing::raw_exchange(port, head);
        return out.substr(0, out.find("\r\n"));
    };
    CHECK(status_line("GET /stats HTTP/1.1\r\n\r\n") == "HTTP/1.1 400 HTTP/1.1 request without Host");
    CHECK(status_line("GET /stats HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") ==
          "HTTP/1.1 400 more than one Host header");
    CHECK(status_line("GET /stats HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n") ==
          "HTTP/1.1 400 more than one Host header");
    CHECK(status_line("GET /stats HTTP/1.1\r\nHost: a b\r\n\r\n") == "HTTP/1.1 400 invalid Host header");
    CHECK(status_line("GET /stats HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n") ==
          "HTTP/1.1 400 unsupported Transfer-Encoding (only chunked)");
    CHECK(
        status_line("GET /stats HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n") ==
        "HTTP/1.1 400 unsupported Transfer-Encoding (only chunked)");
    CHECK(status_line("GET /stats HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") ==
          "HTTP/1.1 400 Transfer-Encoding in an HTTP/1.0 request");
    // What stays fine: HTTP/1.0 without Host, an empty chunked body, a Host with a port or an IPv6 literal.
    CHECK(status_line("GET /stats HTTP/1.0\r\n\r\n") == "HTTP/1.0 200 OK");
    CHECK(status_line(
              "GET /stats HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
              "0\r\n\r\n") == "HTTP/1.1 200 OK");
    CHECK(status_line("GET /stats HTTP/1.1\r\nHost: tracker.example:6969\r\nConnection: close\r\n\r\n") ==
          "HTTP/1.1 200 OK");
    CHECK(status_line("GET /stats HTTP/1.1\r\nHost: [::1]:6969\r\nConnection: close\r\n\r\n") ==
          "HTTP/1.1 200 OK");
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"bad_host\"}") == 4);
    CHECK(tracker.metric("toast_tracker_http_malformed_total{reason=\"bad_transfer_encoding\"}") == 3);
}

TEST_CASE("a Connection: close request and a refused one are both answered whole and then closed",
          "[tracker][http]") {
    TrackerProcess tracker(false);
    const auto port = tracker.http_port();
    // raw_exchange keeps its side open and reads until the server closes: both answers arrive complete.
    auto out =
        toast::testing::raw_exchange(port, "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5s);
    CHECK(starts_with(out, "HTTP/1.1 200 OK\r\n"));
    CHECK(out.find("\"totals\"") != std::string::npos);
    out = toast::testing::raw_exchange(
        port, "GET /stats HTTP/1.1\r\nTransfer-Encoding: gzip\r\nHost: x\r\n\r\n", 5s);
    CHECK(starts_with(out, "HTTP/1.1 400"));
}
