#include <catch2/catch.hpp>

#include "handler_fixture.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;
using toast::server::testing::Fixture;

TEST_CASE("a title without Range is answered 200 with validators and Accept-Ranges", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie");
    CHECK(r.status == 200);
    CHECK(r.header("Accept-Ranges") == "bytes");
    CHECK(r.header("ETag") == "\"movie-10000\"");
    CHECK(r.header("Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT");
    CHECK(r.header("Content-Type") == "application/octet-stream");
    CHECK(r.header("Content-Range").empty());
    CHECK(r.content_length() == 10000);
    CHECK(f.body_of(r) == f.bytes);
    CHECK_FALSE(r.paced);
    CHECK_FALSE(r.head_only);
}

TEST_CASE("a single range is answered 206 with exact Content-Range and length", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie", {{"Range", "bytes=100-199"}});
    CHECK(r.status == 206);
    CHECK(r.header("Content-Range") == "bytes 100-199/10000");
    CHECK(r.content_length() == 100);
    CHECK(f.body_of(r) == f.bytes.substr(100, 100));

    auto open = f.get("/titles/movie", {{"Range", "bytes=9990-"}});
    CHECK(open.header("Content-Range") == "bytes 9990-9999/10000");
    CHECK(f.body_of(open) == f.bytes.substr(9990));

    auto suffix = f.get("/titles/movie", {{"Range", "bytes=-5"}});
    CHECK(suffix.header("Content-Range") == "bytes 9995-9999/10000");
    CHECK(f.body_of(suffix) == f.bytes.substr(9995));

    auto huge = f.get("/titles/movie", {{"Range", "bytes=9000-999999999999999999999999999"}});
    CHECK(huge.header("Content-Range") == "bytes 9000-9999/10000");
}

TEST_CASE("several ranges are answered as multipart/byteranges, byte for byte", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie", {{"Range", "bytes=0-9,5000-5004"}});
    REQUIRE(r.status == 206);
    auto boundary = multipart_boundary(*f.store.find("movie"));
    CHECK(r.header("Content-Type") == "multipart/byteranges; boundary=" + boundary);
    CHECK(r.header("Content-Range").empty());
    std::string expected =
        "--" + boundary +
        "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 0-9/10000\r\n\r\n" +
        f.bytes.substr(0, 10) + "\r\n--" + boundary +
        "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 5000-5004/10000\r\n\r\n" +
        f.bytes.substr(5000, 5) + "\r\n--" + boundary + "--\r\n";
    CHECK(f.body_of(r) == expected);
    CHECK(r.content_length() == expected.size());
    CHECK(f.body_of(r).find(boundary, 0) == 2);
}

TEST_CASE("overlapping ranges are coalesced into one 206 part", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie", {{"Range", "bytes=0-99,50-149"}});
    CHECK(r.status == 206);
    CHECK(r.header("Content-Range") == "bytes 0-149/10000");
    CHECK(f.body_of(r) == f.bytes.substr(0, 150));
}

TEST_CASE("an unsatisfiable range is answered 416 with bytes */length", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie", {{"Range", "bytes=10000-"}});
    CHECK(r.status == 416);
    CHECK(r.header("Content-Range") == "bytes */10000");
    CHECK(r.title == nullptr);
    CHECK_THAT(r.reason, Contains("movie"));
    CHECK(f.get("/titles/movie", {{"Range", "bytes=99999999999999999999999-"}}).status == 416);
}

TEST_CASE("invalid, foreign-unit and oversized Range headers are ignored with a 200", "[server][handler]") {
    Fixture f;
    for (const char* range : {"bytes=5-1", "bytes=abc", "items=0-5", "bytes=", "bytes=0-1,,x"}) {
        INFO(range);
        auto r = f.get("/titles/movie", {{"Range", range}});
        CHECK(r.status == 200);
        CHECK(f.body_of(r) == f.bytes);
    }
    std::string many = "bytes=";
    for (int i = 0; i < 17; ++i)
        many += std::to_string(i * 200) + "-" + std::to_string(i * 200) + ",";
    CHECK(f.get("/titles/movie", {{"Range", many}}).status == 200);
}

TEST_CASE("a multipart answer larger than max_multipart_bytes becomes a 200", "[server][handler]") {
    Fixture f;
    f.limits.max_multipart_bytes = 500;
    CHECK(f.get("/titles/movie", {{"Range", "bytes=0-99,1000-1099"}}).status == 206);
    auto r = f.get("/titles/movie", {{"Range", "bytes=0-299,1000-1299"}});
    CHECK(r.status == 200);
    CHECK(r.content_length() == 10000);
    // A single range is never limited by the multipart bound.
    CHECK(f.get("/titles/movie", {{"Range", "bytes=0-5000"}}).status == 206);
}

TEST_CASE("HEAD gets the GET head without a body and ignores Range", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie", {}, "HEAD");
    CHECK(r.status == 200);
    CHECK(r.head_only);
    CHECK(r.content_length() == 10000);
    auto ranged = f.get("/titles/movie", {{"Range", "bytes=0-9"}}, "HEAD");
    CHECK(ranged.status == 200);
    CHECK(ranged.head_only);
    CHECK(f.get("/metrics", {}, "HEAD").head_only);
}

TEST_CASE("methods other than GET and HEAD get 405 with Allow", "[server][handler]") {
    Fixture f;
    for (const char* m : {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "BREW"}) {
        INFO(m);
        auto r = f.get("/titles/movie", {}, m);
        CHECK(r.status == 405);
        CHECK(r.header("Allow") == "GET, HEAD");
    }
    CHECK(f.get("/metrics", {}, "POST").status == 405);
    CHECK(f.get("/stream/movie", {}, "PUT").header("Allow") == "GET, HEAD");
}

TEST_CASE("title names are percent-decoded and looked up only through the store", "[server][handler]") {
    Fixture f;
    f.store.add("my movie+1", "abc");
    auto r = f.get("/titles/my%20movie%2B1?x=1");
    CHECK(r.status == 200);
    REQUIRE(r.title);
    CHECK(r.title->name == "my movie+1");
    CHECK(r.content_length() == 3);
    CHECK(f.get("/titles/nope").status == 404);
    auto finds = f.store.finds();
    CHECK(std::find(finds.begin(), finds.end(), "my movie+1") != finds.end());
}

TEST_CASE("traversal attempts and hostile names are refused before any lookup", "[server][handler]") {
    Fixture f;
    struct Case {
        const char* target;
        unsigned status;
    };
    for (auto c :
         {Case{"/titles/..", 400}, Case{"/titles/%2e%2e", 400}, Case{"/titles/%2E%2E", 400},
          Case{"/titles/.", 400}, Case{"/titles/../etc/passwd", 404}, Case{"/titles/..%2fetc%2fpasswd", 400},
          Case{"/titles/%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400}, Case{"/titles/a%00b", 400},
          Case{"/titles/a%5cb", 400}, Case{"/titles/a%0d%0aX: y", 400}, Case{"/titles/%zz", 400},
          Case{"/titles/%4", 400}, Case{"/titles/%", 400}, Case{"/titles/", 400},
          Case{"/titles/movie/extra", 404}, Case{"/stream/..", 400}, Case{"/etc/passwd", 404}, Case{"*", 400},
          Case{"titles/movie", 400}}) {
        INFO(c.target);
        auto r = f.get(c.target);
        CHECK(r.status == c.status);
        CHECK(r.title == nullptr);
        CHECK_FALSE(r.reason.empty());
    }
    CHECK(f.store.finds().empty());
}

TEST_CASE("absolute-form targets are served by their path", "[server][handler]") {
    Fixture f;
    CHECK(f.get("http://example.com/titles/movie").status == 200);
    CHECK(f.get("http://example.com").status == 404);
}

TEST_CASE("If-None-Match with a matching tag answers 304", "[server][handler]") {
    Fixture f;
    auto r = f.get("/titles/movie", {{"If-None-Match", f.etag()}});
    CHECK(r.status == 304);
    CHECK(r.header("ETag") == f.etag());
    CHECK(r.title == nullptr);
    CHECK(f.get("/titles/movie", {{"If-None-Match", "\"other\", W/" + f.etag()}}).status == 304);
    CHECK(f.get("/titles/movie", {{"If-None-Match", "*"}}).status == 304);
    CHECK(f.get("/titles/movie", {{"If-None-Match", "\"other\""}}).status == 200);
    CHECK(f.get("/titles/movie", {{"If-None-Match", "garbage"}}).status == 200);
    // If-None-Match takes precedence over If-Modified-Since.
    CHECK(f.get("/titles/movie", {{"If-None-Match", "\"other\""}, {"If-Modified-Since", f.last_modified()}})
              .status == 200);
}

TEST_CASE("If-Modified-Since answers 304 unless the title is newer", "[server][handler]") {
    Fixture f;
    CHECK(f.get("/titles/movie", {{"If-Modified-Since", f.last_modified()}}).status == 304);
    CHECK(f.get("/titles/movie", {{"If-Modified-Since", "Tue, 14 Nov 2023 22:13:19 GMT"}}).status == 200);
    CHECK(f.get("/titles/movie", {{"If-Modified-Since", "not a date"}}).status == 200);
}

TEST_CASE("If-Match and If-Unmodified-Since failures answer 412", "[server][handler]") {
    Fixture f;
    CHECK(f.get("/titles/movie", {{"If-Match", "\"other\""}}).status == 412);
    CHECK(f.get("/titles/movie", {{"If-Match", "W/" + f.etag()}}).status == 412);  // strong comparison
    CHECK(f.get("/titles/movie", {{"If-Match", f.etag()}}).status == 200);
    CHECK(f.get("/titles/movie", {{"If-Match", "*"}}).status == 200);
    CHECK(f.get("/titles/movie", {{"If-Unmodified-Since", "Tue, 14 Nov 2023 22:13:19 GMT"}}).status == 412);
    CHECK(f.get("/titles/movie", {{"If-Unmodified-Since", f.last_modified()}}).status == 200);
}

TEST_CASE("If-Range honours the Range only for the current strong ETag or exact date", "[server][handler]") {
    Fixture f;
    auto range = std::pair<std::string, std::string>{"Range", "bytes=0-9"};
    CHECK(f.get("/titles/movie", {range, {"If-Range", f.etag()}}).status == 206);
    CHECK(f.get("/titles/movie", {range, {"If-Range", "\"stale\""}}).status == 200);
    CHECK(f.get("/titles/movie", {range, {"If-Range", "W/" + f.etag()}}).status == 200);
    CHECK(f.get("/titles/movie", {range, {"If-Range", f.last_modified()}}).status == 206);
    CHECK(f.get("/titles/movie", {range, {"If-Range", "Tue, 14 Nov 2023 22:13:21 GMT"}}).status == 200);
    CHECK(f.get("/titles/movie", {range, {"If-Range", "yesterday"}}).status == 200);
    // A stale If-Range also turns an unsatisfiable range into a full 200.
    CHECK(f.get("/titles/movie", {{"Range", "bytes=20000-"}, {"If-Range", "\"stale\""}}).status == 200);
}

TEST_CASE("/stream answers the whole title, paced, and ignores Range", "[server][handler]") {
    Fixture f;
    auto r = f.get("/stream/movie", {{"Range", "bytes=0-9"}});
    CHECK(r.status == 200);
    CHECK(r.paced);
    CHECK(r.header("Accept-Ranges") == "none");
    CHECK(f.body_of(r) == f.bytes);
    CHECK(f.get("/stream/nope").status == 404);
}

TEST_CASE("/metrics serves the registry and /healthz answers ok", "[server][handler]") {
    Fixture f;
    f.metrics.counter("toast_test_total", "test counter").inc(3);
    auto m = f.get("/metrics");
    CHECK(m.status == 200);
    CHECK(m.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
    CHECK_THAT(m.body, Contains("toast_test_total 3\n"));
    auto h = f.get("/healthz");
    CHECK(h.status == 200);
    CHECK(h.body == "ok\n");
}

TEST_CASE("unknown paths are 404 with a reason", "[server][handler]") {
    Fixture f;
    auto r = f.get("/nothing/here");
    CHECK(r.status == 404);
    CHECK_THAT(r.body, Contains("404 Not Found"));
}

TEST_CASE("response heads are serialized exactly", "[server][handler]") {
    HttpResponse r;
    r.status = 206;
    r.headers.push_back({"Content-Range", "bytes 0-9/100"});
    r.body = "0123456789";
    CHECK(serialize_head(r, true, "Sun, 06 Nov 1994 08:49:37 GMT") ==
          "HTTP/1.1 206 Partial Content\r\nServer: toast\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
          "Content-Range: bytes 0-9/100\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\n");
    HttpResponse nm;
    nm.status = 304;
    CHECK(serialize_head(nm, false, "D") ==
          "HTTP/1.1 304 Not Modified\r\nServer: toast\r\nDate: D\r\nConnection: close\r\n\r\n");
}

TEST_CASE("percent-decoding rejects malformed escapes", "[server][handler]") {
    CHECK(percent_decode("a%20b%2F") == std::optional<std::string>("a b/"));
    CHECK(percent_decode("plain") == std::optional<std::string>("plain"));
    CHECK_FALSE(percent_decode("%"));
    CHECK_FALSE(percent_decode("%2"));
    CHECK_FALSE(percent_decode("%g0"));
    CHECK_FALSE(percent_decode("ab%"));
}

TEST_CASE("HTTP dates format as IMF-fixdate and parse in all three forms", "[server][handler][date]") {
    auto t = SysTime(std::chrono::seconds(784111777));  // Sun, 06 Nov 1994 08:49:37 GMT
    CHECK(format_http_date(t) == "Sun, 06 Nov 1994 08:49:37 GMT");
    CHECK(format_http_date(SysTime{}) == "Thu, 01 Jan 1970 00:00:00 GMT");
    CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == t);
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == t);
    CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == t);
    CHECK(parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT") == SysTime(std::chrono::seconds(951782400)));
    for (const char* bad :
         {"", "Sun, 06 Nov 1994 08:49:37", "Mon, 06 Nov 1994 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
          "Tue, 29 Feb 2001 00:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
          "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT junk"}) {
        INFO(bad);
        CHECK_FALSE(parse_http_date(bad));
    }
    // Valid dates beyond the nanosecond system clock (found by the http_date fuzzer: the conversion
    // overflowed, undefined behaviour) are refused like invalid ones.
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 3988 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("Sat, 12 Apr 2262 00:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Sat, 01 Jan 1600 00:00:00 GMT"));
    CHECK(parse_http_date("Fri, 11 Apr 2262 00:00:00 GMT"));
    CHECK(parse_http_date("Wed, 22 Sep 1677 00:00:00 GMT"));
    // Round trip over a range of instants.
    for (std::int64_t s = 0; s < 4'000'000'000; s += 86'399'937) {
        auto when = SysTime(std::chrono::seconds(s));
        CHECK(parse_http_date(format_http_date(when)) == when);
    }
}

TEST_CASE("a Toast-Deadline on a range request makes its reads due, malformed ones are best effort",
          "[server][handler]") {
    Fixture f;
    CHECK(f.get("/titles/movie", {{"Range", "bytes=0-99"}, {"Toast-Deadline", "1500"}}).deadline ==
          std::chrono::milliseconds(1500));
    CHECK(f.get("/titles/movie", {{"Toast-Deadline", "0"}}).deadline == std::chrono::milliseconds(0));
    CHECK_FALSE(f.get("/titles/movie").deadline);
    for (const char* bad : {"", "-5", "1.5", "soon", "600001", "99999999999999999999"})
        CHECK_FALSE(f.get("/titles/movie", {{"Toast-Deadline", bad}}).deadline);
    // A paced stream's reads are due by its own schedule, not by a header.
    CHECK_FALSE(f.get("/stream/movie", {{"Toast-Deadline", "100"}}).deadline);
    CHECK(parse_deadline("600000") == std::chrono::milliseconds(600000));
}

TEST_CASE("no-cache in a request's Cache-Control or Pragma asks for its bytes to be checked again",
          "[server][handler]") {
    CHECK(requests_no_cache("no-cache", ""));
    CHECK(requests_no_cache("max-age=0, No-Cache", ""));
    CHECK(requests_no_cache(" no-store ,no-cache ", ""));
    CHECK(requests_no_cache("", "no-cache"));
    CHECK_FALSE(requests_no_cache("", ""));
    CHECK_FALSE(requests_no_cache("no-store", "x"));
    CHECK_FALSE(requests_no_cache("no-cache=\"set-cookie\"", ""));  // a response directive
    CHECK_FALSE(requests_no_cache("no-cachex", ""));

    Fixture f;
    CHECK_FALSE(f.get("/titles/movie", {{"Range", "bytes=0-99"}}).revalidate);
    CHECK(f.get("/titles/movie", {{"Range", "bytes=0-99"}, {"Cache-Control", "no-cache"}}).revalidate);
    CHECK(f.get("/titles/movie", {{"Pragma", "no-cache"}}).revalidate);
}
