#include <catch2/catch.hpp>

#include "client/core/server_pool.hpp"
#include "client/core/server_request.hpp"

using namespace std::chrono_literals;
using toast::client::answer_fault;
using toast::client::answer_problem;
using toast::client::FetchFault;
using toast::client::parse_retry_after;
using toast::client::PieceIndex;
using toast::client::PieceRequest;
using toast::client::ServerPool;

TEST_CASE("server URLs parse into host, port and target", "[client][server-request]") {
    auto u = toast::client::parse_http_url("http://127.0.0.1:8080/titles/movie.mp4");
    REQUIRE(u);
    CHECK(u->host == "127.0.0.1");
    CHECK(u->port == "8080");
    CHECK(u->target == "/titles/movie.mp4");
    auto v6 = toast::client::parse_http_url("http://[::1]:81");
    REQUIRE(v6);
    CHECK(v6->host == "::1");
    CHECK(v6->target == "/");
    CHECK(toast::client::parse_http_url("http://example.org")->port == "80");
    auto tls = toast::client::parse_http_url("https://vod.example/x?token=t");
    REQUIRE(tls);
    CHECK(tls->tls);
    CHECK(tls->port == "443");
    CHECK(tls->target == "/x?token=t");
    CHECK(toast::client::origin_url(*tls) == "https://vod.example:443");
    CHECK(toast::client::origin_url(*v6) == "http://[::1]:81");
    CHECK(toast::client::parse_http_url("http://h:1?a=b")->target == "/?a=b");
    CHECK_FALSE(toast::client::parse_http_url("ftp://127.0.0.1/x"));
    CHECK_FALSE(toast::client::parse_http_url("http://127.0.0.1:0/x"));
    CHECK_FALSE(toast::client::parse_http_url("http://127.0.0.1:99999/x"));
    CHECK_FALSE(toast::client::parse_http_url("http://:80/x"));
}

TEST_CASE("backoff doubles from the initial delay up to the cap", "[client][server-request]") {
    using toast::client::backoff_delay;
    CHECK(backoff_delay(0, 100ms, 1s) == 0ms);
    CHECK(backoff_delay(1, 100ms, 1s) == 100ms);
    CHECK(backoff_delay(3, 100ms, 1s) == 400ms);
    CHECK(backoff_delay(30, 100ms, 1s) == 1000ms);
}

TEST_CASE("the server pool prefers the fastest server and rests failing ones", "[client][server-request]") {
    ServerPool pool(3, {100ms, 1s});
    auto t0 = std::chrono::steady_clock::now();
    CHECK(pool.choose(t0) == 0u);  // nothing measured: the first URL
    pool.on_success(0, 1'000'000, 1s);
    CHECK(pool.choose(t0) == 1u);  // unmeasured servers are tried
    pool.on_success(1, 4'000'000, 1s);
    pool.on_success(2, 2'000'000, 1s);
    CHECK(pool.choose(t0) == 1u);
    pool.on_failure(1, t0);
    CHECK(pool.choose(t0) == 2u);
    CHECK(pool.choose(t0 + 150ms) == 2u);  // rested, but a healthy server still comes first
    pool.on_success(1, 4'000'000, 1s);
    CHECK(pool.choose(t0) == 1u);  // a success clears the failure
    pool.on_failure(0, t0);
    pool.on_failure(1, t0);  // second failure: 200 ms
    pool.on_failure(2, t0);
    CHECK_FALSE(pool.choose(t0 + 50ms));
    CHECK(pool.next_ready() == t0 + 100ms);
}

TEST_CASE(
    "a 500 or 503 refuses only its piece, while no answer, a title-wide status or a busy 503 fail the server",
    "[client][server-request]") {
    CHECK(answer_fault(503, false) == FetchFault::piece);  // a block with no readable replica
    CHECK(answer_fault(500, false) == FetchFault::piece);  // a failed read
    // What holds for every piece of the title backs the server off, so the whole zone goes to peers.
    CHECK(answer_fault(404, false) == FetchFault::server);
    CHECK(answer_fault(403, false) == FetchFault::server);
    CHECK(answer_fault(200, false) == FetchFault::server);  // the whole file: it ignores ranges
    CHECK(answer_fault(502, false) == FetchFault::server);  // a proxy without its upstream
    CHECK(answer_fault(206, false) == FetchFault::server);  // another range: the server ignores ours
    CHECK(answer_fault(503, true) == FetchFault::server);   // overloaded: it says when to come back
    CHECK(parse_retry_after("1") == std::chrono::seconds(1));
    CHECK(parse_retry_after(" 120 ") == std::chrono::seconds(120));
    CHECK(parse_retry_after("99999999") == std::chrono::seconds(86'400));
    CHECK_FALSE(parse_retry_after(""));
    CHECK_FALSE(parse_retry_after("-1"));
    CHECK_FALSE(parse_retry_after("1.5"));
    CHECK_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
    CHECK_FALSE(parse_retry_after("1234567890"));

    // A server that said when to come back rests that long, longer than its own backoff would.
    ServerPool pool(1, {100ms, 1s});
    auto t0 = std::chrono::steady_clock::now();
    pool.on_failure(0, t0, std::chrono::seconds(2));
    CHECK_FALSE(pool.choose(t0 + 1500ms));
    CHECK(pool.choose(t0 + 2s) == 0u);
    CHECK_FALSE(pool.reachable(t0 + 2s));  // not until it answered again
}

TEST_CASE("a server is counted on again only after answering for a settle time without failing",
          "[client][server-request]") {
    ServerPool pool(1, {100ms, 1s, 500ms});
    auto t0 = std::chrono::steady_clock::now();
    CHECK(pool.reachable(t0));  // never failed, never asked
    pool.on_failure(0, t0);
    CHECK_FALSE(pool.reachable(t0));
    CHECK_FALSE(pool.reachable(t0 + 10s));  // no answer since: still down however long ago
    pool.on_success(0, 1'000, 10ms);
    CHECK_FALSE(pool.reachable(t0 + 499ms));  // answered, but failed less than the settle time ago
    CHECK(pool.reachable(t0 + 500ms));
    // Refusals among answers (an overloaded server): not counted on while they keep coming.
    for (int i = 1; i <= 5; ++i) {
        auto t = t0 + i * 300ms;
        pool.on_failure(0, t);
        CHECK_FALSE(pool.reachable(t + 100ms));
        pool.on_success(0, 1'000, 10ms);
        CHECK_FALSE(pool.reachable(t + 200ms));
    }
    CHECK(pool.reachable(t0 + 1500ms + 500ms));
    // With two servers, one that never failed is enough.
    ServerPool two(2, {100ms, 1s, 500ms});
    two.on_failure(0, t0);
    CHECK(two.reachable(t0));
    two.on_failure(1, t0);
    CHECK_FALSE(two.reachable(t0 + 1s));
}

TEST_CASE("a server that answered after the deadline is passed over while another is usable",
          "[client][server-request]") {
    ServerPool pool(2, {100ms, 1s});
    auto t0 = std::chrono::steady_clock::now();
    pool.on_success(0, 4'000'000, 1s);
    pool.on_success(1, 1'000'000, 1s);
    CHECK(pool.choose(t0) == 0u);  // the faster one
    pool.on_late(0, t0);
    CHECK(pool.late(0, t0));
    CHECK(pool.choose(t0) == 1u);           // on time beats fast
    CHECK(pool.choose(t0 + 1001ms) == 0u);  // backoff.max later it is trusted again
    // A late server is still better than one that failed, and than none.
    pool.on_late(0, t0);
    pool.on_failure(1, t0);
    CHECK(pool.choose(t0 + 150ms) == 0u);
    ServerPool lone(1, {100ms, 1s});
    lone.on_late(0, t0);
    CHECK(lone.choose(t0) == 0u);
}

TEST_CASE("a piece's request asks for exactly its bytes", "[client][server-request]") {
    PieceRequest r{.piece = PieceIndex(3), .offset = 3 * 262'144, .length = 262'144};
    CHECK(toast::client::range_header(r) == "bytes=786432-1048575");
    r.length = 1;
    CHECK(toast::client::range_header(r) == "bytes=786432-786432");
    auto t0 = std::chrono::steady_clock::now();
    CHECK(toast::client::deadline_header(t0 + 1500ms, t0) == "1500");
    CHECK(toast::client::deadline_header(t0 + 1001us, t0) == "2");  // whole milliseconds, rounded up
    CHECK(toast::client::deadline_header(t0 - 1s, t0) == "0");
    CHECK(toast::client::deadline_header(t0 + 1h, t0) == "600000");
}

TEST_CASE("only an answer that is exactly the piece is accepted, and the others are named",
          "[client][server-request]") {
    PieceRequest r{.piece = PieceIndex(1), .offset = 1000, .length = 500};
    CHECK(answer_problem(r, 206, "bytes 1000-1499/4000", 500).empty());
    CHECK(answer_problem(r, 206, "bytes 1000-1499/*", 500).empty());
    CHECK(answer_problem(r, 200, "", 4000) == "status 200 (expected 206)");
    CHECK(answer_problem(r, 416, "bytes */4000", 0) == "status 416 (expected 206)");
    CHECK(answer_problem(r, 206, "bytes 1000-1498/4000", 499) ==
          "Content-Range 'bytes 1000-1498/4000' does not match");
    CHECK(answer_problem(r, 206, "bytes 0-499/4000", 500) ==
          "Content-Range 'bytes 0-499/4000' does not match");
    CHECK(answer_problem(r, 206, "bytes 1000-1499/", 500) ==
          "Content-Range 'bytes 1000-1499/' does not match");
    CHECK(answer_problem(r, 206, "", 500) == "Content-Range '' does not match");
    CHECK(answer_problem(r, 206, "bytes 1000-1499/4000", 499) == "body of 499 bytes (expected 500)");
    CHECK(answer_problem(r, 206, "bytes 1000-1499/4000", 501) == "body of 501 bytes (expected 500)");
}

TEST_CASE("a 503's Toast-Unavailable names the bytes the server lost, and nothing else parses as such",
          "[client][server-request]") {
    using toast::client::ByteOffset;
    using toast::client::parse_unavailable;
    using toast::client::UnavailableBytes;
    CHECK(parse_unavailable("bytes 0-1310719") == UnavailableBytes{ByteOffset(0), ByteOffset(1'310'719)});
    CHECK(parse_unavailable(" bytes 5-5 ") == UnavailableBytes{ByteOffset(5), ByteOffset(5)});
    CHECK(parse_unavailable("bytes 18446744073709551614-18446744073709551615") ==
          UnavailableBytes{ByteOffset(18446744073709551614ull), ByteOffset(18446744073709551615ull)});
    for (const char* bad : {"", "bytes", "bytes 5", "bytes 5-", "bytes -5", "bytes 6-5", "bytes +1-5",
                            "bytes 1--5", "bytes 1-5/10", "items 1-5",
                            "bytes 18446744073709551616-18446744073709551617", "bytes 1 -5", "bytes=1-5"}) {
        INFO(bad);
        CHECK_FALSE(parse_unavailable(bad));
    }
}
