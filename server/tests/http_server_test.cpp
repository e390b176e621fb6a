// The Beast server in-process, on 127.0.0.1 and a free port, over a fake store made of maps: ranges,
// connections, limits, metrics, the admin listener and shutdown (paced /stream: http_stream_test.cpp).
#include <catch2/catch.hpp>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <future>
#include <regex>
#include <sstream>
#include <thread>

#include "http_fixture.hpp"
#include "server/http/http_service.hpp"
#include "test_support.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using namespace toast::server::testing;
namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

struct Response {
    unsigned status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? "" : it->second;
    }
};

// One client connection that can send raw bytes and read responses one by one.
class Conn {
  public:
    explicit Conn(std::uint16_t port) : stream_(ioc_) {
        stream_.expires_after(10s);
        stream_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    }
    void send(const std::string& bytes) {
        stream_.expires_after(10s);
        asio::write(stream_, asio::buffer(bytes));
    }
    void get(const std::string& target, const std::string& extra = "", const std::string& method = "GET") {
        send(method + " " + target + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n");
    }
    Response read(bool head = false) {
        stream_.expires_after(10s);
        http::response_parser<http::string_body> parser;
        parser.body_limit(1ull << 32);
        parser.skip(head);
        http::read(stream_, buffer_, parser);
        Response r;
        r.status = parser.get().result_int();
        for (const auto& f : parser.get())
            r.headers[std::string(f.name_string())] = std::string(f.value());
        r.body = parser.get().body();
        return r;
    }
    // True when the server closed the connection (EOF) within `timeout`.
    bool closed_within(std::chrono::milliseconds timeout) {
        stream_.expires_after(timeout);
        char c;
        beast::error_code ec;
        if (buffer_.size() > 0) return false;
        stream_.read_some(asio::buffer(&c, 1), ec);
        return ec == asio::error::eof || ec == asio::error::connection_reset;
    }

  private:
    asio::io_context ioc_;
    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
};

}  // namespace

TEST_CASE("the server answers 200, 206 and 416 byte-exactly from memory and from files", "[server][http]") {
    Server s;
    auto whole = toast::testing::http_request(s.port(), "GET", "/titles/small");
    CHECK(whole.status == 200);
    CHECK(whole.body == s.small);
    CHECK(whole.header("accept-ranges") == "bytes");
    CHECK(whole.header("content-length") == "10000");

    auto part =
        toast::testing::http_request(s.port(), "GET", "/titles/big", {{"Range", "bytes=1000000-1999999"}});
    CHECK(part.status == 206);
    CHECK(part.header("content-range") == "bytes 1000000-1999999/" + std::to_string(s.big.size()));
    CHECK(part.body == s.big.substr(1000000, 1000000));

    auto tail = toast::testing::http_request(s.port(), "GET", "/titles/big", {{"Range", "bytes=-100"}});
    CHECK(tail.body == s.big.substr(s.big.size() - 100));

    auto bad = toast::testing::http_request(s.port(), "GET", "/titles/big", {{"Range", "bytes=20000000-"}});
    CHECK(bad.status == 416);
    CHECK(bad.header("content-range") == "bytes */" + std::to_string(s.big.size()));
}

TEST_CASE("a whole large title is sent byte-identically in bounded store reads", "[server][http]") {
    Server s;
    auto r = toast::testing::http_request(s.port(), "GET", "/titles/big");
    CHECK(r.status == 200);
    CHECK(r.body.size() == s.big.size());
    CHECK(r.body == s.big);
    CHECK(s.store.max_read() <= 4 * 1024 * 1024);
    CHECK(s.store.reads() >= 3);
}

TEST_CASE("multipart/byteranges bodies are exact on the wire", "[server][http]") {
    Server s;
    auto r = toast::testing::http_request(s.port(), "GET", "/titles/big",
                                          {{"Range", "bytes=5-9,5000000-5000003"}});
    REQUIRE(r.status == 206);
    std::smatch m;
    auto ct = r.header("content-type");
    REQUIRE(std::regex_match(ct, m, std::regex("multipart/byteranges; boundary=(.+)")));
    std::string b = m[1];
    auto len = std::to_string(s.big.size());
    std::string expected =
        "--" + b + "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 5-9/" + len +
        "\r\n\r\n" + s.big.substr(5, 5) + "\r\n--" + b +
        "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 5000000-5000003/" + len +
        "\r\n\r\n" + s.big.substr(5000000, 4) + "\r\n--" + b + "--\r\n";
    CHECK(r.body == expected);
    CHECK(r.header("content-length") == std::to_string(expected.size()));
}

TEST_CASE("keep-alive serves several requests on one connection", "[server][http]") {
    Server s;
    Conn c(s.port());
    for (int i = 0; i < 5; ++i) {
        c.get("/titles/small",
              "Range: bytes=" + std::to_string(i * 100) + "-" + std::to_string(i * 100 + 9) + "\r\n");
        auto r = c.read();
        CHECK(r.status == 206);
        CHECK(r.body == s.small.substr(i * 100, 10));
        CHECK(r.header("Connection") == "keep-alive");
    }
    c.get("/healthz", "Connection: close\r\n");
    auto last = c.read();
    CHECK(last.body == "ok\n");
    CHECK(last.header("Connection") == "close");
    CHECK(c.closed_within(2s));
}

TEST_CASE("pipelined requests are answered in order, HEAD without a body", "[server][http]") {
    Server s;
    s.store.set_read_delay(20ms);  // the first answer is the slowest to read
    Conn c(s.port());
    std::string batch;
    batch += "GET /titles/big HTTP/1.1\r\nHost: t\r\nRange: bytes=0-99999\r\n\r\n";
    batch += "HEAD /titles/small HTTP/1.1\r\nHost: t\r\n\r\n";
    batch += "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
    batch += "GET /titles/small HTTP/1.1\r\nHost: t\r\nRange: bytes=10-19\r\n\r\n";
    batch += "GET /titles/missing HTTP/1.1\r\nHost: t\r\n\r\n";
    c.send(batch);
    auto r1 = c.read();
    CHECK(r1.status == 206);
    CHECK(r1.body == s.big.substr(0, 100000));
    auto r2 = c.read(/*head=*/true);
    CHECK(r2.status == 200);
    CHECK(r2.header("Content-Length") == "10000");
    auto r3 = c.read();
    CHECK(r3.body == "ok\n");
    auto r4 = c.read();
    CHECK(r4.body == s.small.substr(10, 10));
    auto r5 = c.read();
    CHECK(r5.status == 404);
}

TEST_CASE("more pipelined requests than max_pipelined are all answered, in order", "[server][http]") {
    Server s([](ServerConfig& c) { c.max_pipelined = 2; });
    Conn c(s.port());
    std::string batch;
    for (int i = 0; i < 20; ++i)
        batch += "GET /titles/small HTTP/1.1\r\nHost: t\r\nRange: bytes=" + std::to_string(i) + "-" +
                 std::to_string(i) + "\r\n\r\n";
    c.send(batch);
    for (int i = 0; i < 20; ++i) {
        auto r = c.read();
        CHECK(r.body == s.small.substr(i, 1));
    }
}

TEST_CASE("oversized headers get 431 and the server keeps serving", "[server][http]") {
    Server s([](ServerConfig& c) { c.header_limit = 1024; });
    std::string req =
        "GET /titles/small HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(4000, 'x') + "\r\n\r\n";
    auto out = toast::testing::raw_exchange(s.port(), req);
    CHECK_THAT(out, Contains("HTTP/1.1 431 Request Header Fields Too Large"));
    CHECK_THAT(out, Contains("Connection: close"));
    CHECK(toast::testing::http_request(s.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("junk bytes get 400 and the server keeps serving", "[server][http]") {
    Server s;
    // A TLS ClientHello's first bytes (NULs included, so the length comes from the array, not strlen).
    static constexpr char tls_hello[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n";
    for (std::string junk : {std::string(tls_hello, sizeof tls_hello - 1),
                             std::string("GET / HTTP/9.9\r\n\r\n"), std::string("NOT HTTP AT ALL\r\n\r\n"),
                             std::string("GET /titles/small HTTP/1.1\r\nBad Header\r\n\r\n"),
                             std::string("GET /titles/small HTTP/1.1\r\nContent-Length: -1\r\n\r\n")}) {
        auto out = toast::testing::raw_exchange(s.port(), junk);
        INFO(junk);
        CHECK(out.rfind("HTTP/1.1 400 Bad Request", 0) == 0);
    }
    auto body = toast::testing::raw_exchange(
        s.port(), "POST /admin/disks/0/fault HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" +
                      std::string(1000, 'x'));
    CHECK(body.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(toast::testing::http_request(s.port(), "GET", "/titles/small").body == s.small);
}

TEST_CASE("traversal attempts over the wire get 4xx and never reach the store", "[server][http]") {
    Server s;
    for (const char* t : {"/titles/..%2f..%2fetc%2fpasswd", "/titles/../../etc/passwd", "/titles/%2e%2e",
                          "/titles/a%00", "/../titles/small"}) {
        INFO(t);
        auto r = toast::testing::http_request(s.port(), "GET", t);
        CHECK(r.status >= 400);
        CHECK(r.status < 500);
    }
    CHECK(s.store.finds().empty());
}

TEST_CASE("connections beyond max_connections get 503 until one closes", "[server][http]") {
    Server s([](ServerConfig& c) { c.max_connections = 2; });
    auto a = std::make_unique<Conn>(s.port());
    auto b = std::make_unique<Conn>(s.port());
    a->get("/healthz");
    CHECK(a->read().status == 200);
    b->get("/healthz");
    CHECK(b->read().status == 200);
    auto out = toast::testing::raw_exchange(s.port(), "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    CHECK(out.rfind("HTTP/1.1 503 Service Unavailable", 0) == 0);
    CHECK_THAT(out, Contains("Retry-After: 1"));
    a.reset();
    // The server notices the close asynchronously; bounded retry.
    int status = 0;
    for (int i = 0; i < 100 && status != 200; ++i) {
        status = toast::testing::http_request(s.port(), "GET", "/healthz").status;
        if (status != 200) std::this_thread::sleep_for(20ms);
    }
    CHECK(status == 200);
    auto m = toast::testing::http_request(s.port(), "GET", "/metrics").body;
    CHECK(metric(m, "toast_http_rejected_connections_total") >= 1);
}

TEST_CASE("idle and trickling connections are closed after idle_timeout", "[server][http]") {
    Server s([](ServerConfig& c) { c.idle_timeout = 300ms; });
    Conn idle(s.port());
    auto t0 = std::chrono::steady_clock::now();
    CHECK(idle.closed_within(3s));
    CHECK(std::chrono::steady_clock::now() - t0 >= 250ms);

    // A slow client that sends a header byte every 100 ms never completes a request in time.
    Conn slow(s.port());
    bool closed = false;
    std::string req = "GET /titles/small HTTP/1.1\r\nHost: t\r\n";
    for (std::size_t i = 0; i < req.size() && !closed; ++i) {
        try {
            slow.send(std::string(1, req[i]));
        } catch (const std::exception&) {
            closed = true;
        }
        std::this_thread::sleep_for(100ms);
        if (std::chrono::steady_clock::now() - t0 > 10s) break;
    }
    CHECK((closed || slow.closed_within(2s)));

    // Keep-alive connections that are used stay open.
    Conn busy(s.port());
    for (int i = 0; i < 6; ++i) {
        busy.get("/healthz");
        CHECK(busy.read().status == 200);
        std::this_thread::sleep_for(100ms);
    }
}

TEST_CASE("/metrics counts responses by status and bytes by title", "[server][http]") {
    Server s;
    for (int i = 0; i < 3; ++i)
        toast::testing::http_request(s.port(), "GET", "/titles/small", {{"Range", "bytes=0-99"}});
    toast::testing::http_request(s.port(), "GET", "/titles/small");
    toast::testing::http_request(s.port(), "GET", "/titles/none");
    auto m = toast::testing::http_request(s.port(), "GET", "/metrics").body;
    CHECK(metric(m, "toast_http_requests_total{status=\"206\"}") == 3);
    CHECK(metric(m, "toast_http_requests_total{status=\"200\"}") == 1);
    CHECK(metric(m, "toast_http_requests_total{status=\"404\"}") == 1);
    CHECK(metric(m, "toast_http_bytes_sent_total{title=\"small\"}") == 3 * 100 + 10000);
    CHECK(metric(m, "toast_http_open_connections") == 1);
    CHECK(metric(m, "toast_http_response_seconds_count") == 5);
}

TEST_CASE("an unavailable block gets 503 naming the title and range, the rest is served", "[server][http]") {
    Server s;
    s.store.fail_range("big", 4 * 1024 * 1024, 5 * 1024 * 1024, ReadStatus::unavailable);
    s.store.fail_range("small", 0, 0, ReadStatus::io_error);
    auto r =
        toast::testing::http_request(s.port(), "GET", "/titles/big", {{"Range", "bytes=4194304-4194400"}});
    CHECK(r.status == 503);
    CHECK_THAT(r.body, Contains("big") && Contains("4194304"));
    CHECK(toast::testing::http_request(s.port(), "GET", "/titles/big", {{"Range", "bytes=0-999"}}).body ==
          s.big.substr(0, 1000));
    CHECK(toast::testing::http_request(s.port(), "GET", "/titles/small").status == 500);

    // A whole-title GET fails after the head went out: the connection closes short of Content-Length.
    Conn c(s.port());
    c.get("/titles/big");
    CHECK_THROWS(c.read());
    // The server is still fine.
    CHECK(toast::testing::http_request(s.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("shutdown lets in-flight responses finish, then run() returns", "[server][http]") {
    Server s;
    s.store.set_read_delay(300ms);
    auto pending = std::async(std::launch::async, [&] {
        return toast::testing::http_request(s.port(), "GET", "/titles/small", {{"Range", "bytes=0-9"}});
    });
    std::this_thread::sleep_for(100ms);
    auto t0 = std::chrono::steady_clock::now();
    s.service->shutdown(5s);
    auto r = pending.get();
    CHECK(r.status == 206);
    CHECK(r.body == s.small.substr(0, 10));
    s.thread.join();
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);
    CHECK_THROWS(toast::testing::http_request(s.port(), "GET", "/healthz", {}, 1s));
}

TEST_CASE("several io threads serve concurrent clients correctly", "[server][http]") {
    Server s([](ServerConfig& c) { c.io_threads = 3; });
    std::vector<std::future<bool>> clients;
    for (int t = 0; t < 6; ++t) {
        clients.push_back(std::async(std::launch::async, [&, t] {
            Conn c(s.port());
            for (int i = 0; i < 20; ++i) {
                std::uint64_t first = static_cast<std::uint64_t>((t * 7919 + i * 104729) % 10'000'000);
                c.get("/titles/big",
                      "Range: bytes=" + std::to_string(first) + "-" + std::to_string(first + 65535) + "\r\n");
                if (c.read().body != s.big.substr(first, 65536)) return false;
            }
            return true;
        }));
    }
    for (auto& f : clients)
        CHECK(f.get());
}

TEST_CASE("the admin listener serves the admin routes, the main one does not", "[server][http][admin]") {
    Server s([](ServerConfig& c) { c.admin_listen = Endpoint{"127.0.0.1", 0}; });
    REQUIRE(s.service->admin_port());
    auto admin = *s.service->admin_port();
    CHECK(toast::testing::http_request(s.port(), "GET", "/admin/disks").status == 404);
    auto r =
        toast::testing::raw_exchange(admin,
                                     "POST /admin/disks/1/fault HTTP/1.1\r\nHost: t\r\nContent-Length: 16\r\n"
                                     "Content-Type: application/json\r\n"
                                     "Connection: close\r\n\r\n{\"offline\":true}");
    CHECK(r.rfind("HTTP/1.1 200 OK", 0) == 0);
    CHECK(s.disks.disk_status()[1].fault.offline);
    auto foreign = toast::testing::raw_exchange(
        admin,
        "POST /admin/disks/0/fault HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n"
        "Content-Type: application/json\r\nContent-Length: 16\r\nConnection: close\r\n\r\n"
        "{\"offline\":true}");
    CHECK(foreign.rfind("HTTP/1.1 403 Forbidden", 0) == 0);
    auto form = toast::testing::raw_exchange(
        admin,
        "POST /admin/disks/0/fault HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n"
        "Content-Length: 16\r\nConnection: close\r\n\r\n{\"offline\":true}");
    CHECK(form.rfind("HTTP/1.1 415 Unsupported Media Type", 0) == 0);
    CHECK_FALSE(s.disks.disk_status()[0].fault.offline);
    CHECK(toast::testing::http_request(admin, "GET", "/admin/disks").status == 200);
    CHECK(toast::testing::http_request(admin, "GET", "/titles/small").status == 404);
}

TEST_CASE("a port that is taken is reported by address", "[server][http]") {
    Server s;
    ServerConfig c;
    c.listen = Endpoint{"127.0.0.1", s.port()};
    FakeStore store;
    FakeDisks disks(1);
    MetricsRegistry m;
    CHECK_THROWS_WITH(HttpService(c, store, disks, m), Contains("127.0.0.1:" + std::to_string(s.port())));
}

TEST_CASE(
    "HTTP/1.1 without exactly one valid Host, or with a non-chunked Transfer-Encoding, gets 400 and a close",
    "[server][http][rfc9112]") {
    Server s;
    for (std::string bad : {std::string("GET /healthz HTTP/1.1\r\n\r\n"),
                            std::string("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
                            std::string("GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n"),
                            std::string("GET /healthz HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n")}) {
        INFO(bad);
        auto out = toast::testing::raw_exchange(s.port(), bad);
        CHECK(out.rfind("HTTP/1.1 400 Bad Request", 0) == 0);
        CHECK_THAT(out, Contains("Connection: close"));
        CHECK_THAT(out, Contains("Host header"));
    }
    // Beast would read "gzip" as "no body" and parse the body as a second request: it must never be answered.
    auto smuggled = toast::testing::raw_exchange(s.port(),
                                                 "POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: "
                                                 "gzip\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    CHECK(smuggled.rfind("HTTP/1.1 400 Bad Request", 0) == 0);
    CHECK_THAT(smuggled, Contains("Transfer-Encoding 'gzip' is not supported"));
    CHECK(smuggled.find("HTTP/1.1", 1) == std::string::npos);
    auto chunked = toast::testing::raw_exchange(
        s.port(),
        "POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n");
    CHECK(chunked.rfind("HTTP/1.1 405", 0) == 0);  // framed correctly; only the method is wrong
    // HTTP/1.0 may omit Host.
    auto old = toast::testing::raw_exchange(s.port(), "GET /healthz HTTP/1.0\r\n\r\n");
    CHECK(old.rfind("HTTP/1.1 200 OK", 0) == 0);
}

TEST_CASE("log lines escape every non-printable byte of request data", "[server][http][log]") {
    auto captured = std::make_shared<std::ostringstream>();
    auto previous = spdlog::default_logger();
    auto logger = std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(*captured));
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    {
        Server s;
        spdlog::set_level(spdlog::level::info);
        // C1 controls (0x85 NEL, 0x9b CSI) in a title name, percent-encoded and raw.
        auto r = toast::testing::http_request(s.port(), "GET", "/titles/x%85%9b[2J");
        CHECK(r.status == 404);
        toast::testing::raw_exchange(s.port(),
                                     "GET /titles/\x9b\x85 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    }
    spdlog::set_default_logger(previous);
    const auto text = captured->str();
    INFO(text);
    CHECK_THAT(text, Contains("no title named 'x\\x85\\x9b[2J'"));
    CHECK_THAT(text, Contains("/titles/\\x9b\\x85"));
    CHECK(std::none_of(text.begin(), text.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u >= 0x7f || (u < 0x20 && c != '\n');
    }));
}
