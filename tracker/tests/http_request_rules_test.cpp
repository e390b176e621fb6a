// The request framing rules without a socket: what the session and the fuzz targets share.
#include <catch2/catch.hpp>

#include <string>

#include "tracker/core/tracker_config.hpp"
#include "tracker/io/http_request_rules.hpp"

using namespace toast::tracker;

namespace {

// The refusal for `bytes`, or {200, "", ""} when the request may be answered.
HttpRefusal verdict(const std::string& bytes, HttpLimits limits = {}) {
    auto r = parse_http_request(bytes, limits);
    if (r) return HttpRefusal{200, "", ""};
    return r.error();
}

}  // namespace

TEST_CASE("parse_http_request accepts a plain request and reports method, target and keep-alive",
          "[tracker][http]") {
    auto r = parse_http_request("GET /announce?x=1 HTTP/1.1\r\nHost: t\r\n\r\n", HttpLimits{});
    REQUIRE(r);
    CHECK(r->method == "GET");
    CHECK(r->target == "/announce?x=1");
    CHECK(r->version == 11);
    CHECK(r->keep_alive);
    auto old = parse_http_request("GET / HTTP/1.0\r\n\r\n", HttpLimits{});
    REQUIRE(old);
    CHECK_FALSE(old->keep_alive);
}

TEST_CASE("header limit overruns are 414 for the request line and 431 for header lines", "[tracker][http]") {
    HttpLimits limits;
    limits.header_limit = 1024;
    limits.max_target_length = 256;
    CHECK(verdict("GET /" + std::string(2000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n", limits).status == 414);
    CHECK(verdict("GET / HTTP/1.1\r\nHost: t\r\nX: " + std::string(2000, 'a') + "\r\n\r\n", limits).status ==
          431);
    // A target over max_target_length followed by too many headers is still about the target.
    CHECK(verdict("GET /" + std::string(500, 'a') + " HTTP/1.1\r\nX: " + std::string(1100, 'b') + "\r\n\r\n",
                  limits)
              .status == 414);
    // Without the parsed target (Beast waits for the whole header after a partial request line), the
    // buffered request line decides.
    CHECK(header_limit_refusal("", "GET / HTTP/1.1\r\nX: aaaa", 256).status == 431);
    CHECK(header_limit_refusal("", "GET /" + std::string(300, 'a') + " HTTP/1.1\r\n", 256).status == 414);
    CHECK(header_limit_refusal("", "GET /aaaa", 256).status == 414);
    CHECK(header_limit_refusal("/short", "X: bbbb", 256) ==
          HttpRefusal{431, "request header too large", "header_too_large"});
}

TEST_CASE("Host and Transfer-Encoding follow RFC 9112", "[tracker][http]") {
    CHECK(verdict("GET / HTTP/1.1\r\n\r\n").reason == "HTTP/1.1 request without Host");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n").reason == "more than one Host header");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n").reason == "invalid Host header");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a:99999x\r\n\r\n").reason == "invalid Host header");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n").reason == "invalid Host header");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n").metric ==
          "bad_transfer_encoding");
    CHECK(verdict(
              "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
              "0\r\n\r\n")
              .status == 400);  // Beast refuses chunked twice itself
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n").status == 200);
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
              .reason == "requests to this tracker carry no body");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: \r\n\r\n").status == 200);  // empty Host is allowed
    CHECK(verdict("GET / HTTP/1.1\r\nHost: 10.0.0.1:6969\r\n\r\n").status == 200);
    CHECK(verdict("GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n").status == 200);
}

TEST_CASE("garbage and cut-short requests are 400", "[tracker][http]") {
    CHECK(verdict("").status == 400);
    CHECK(verdict("GARBAGE\r\n\r\n").reason == "malformed HTTP request");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a\r\n").reason == "incomplete HTTP request");
    CHECK(verdict("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc").reason ==
          "requests to this tracker carry no body");
}
