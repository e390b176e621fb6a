#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "server/core/http_date.hpp"
#include "server/core/request_handler.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;
using toast::server::testing::FakeDisks;
using toast::server::testing::FakeStore;

namespace {

std::string sample_bytes(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
    return s;
}

struct Fixture {
    FakeStore store;
    FakeDisks disks{4};
    MetricsRegistry metrics;
    HandlerLimits limits;
    std::string bytes = sample_bytes(10000);

    Fixture() { store.add("movie", bytes); }

    HttpResponse get(std::string target, std::map<std::string, std::string> headers = {},
                     std::string method = "GET", std::string body = "", bool loopback = true,
                     bool admin_listener = false) {
        // The request holds views: keep the strings alive in the fixture.
        held_.push_back(std::move(target));
        const std::string& t = held_.back();
        held_.push_back(std::move(method));
        const std::string& m = held_.back();
        held_.push_back(std::move(body));
        const std::string& b = held_.back();
        HttpRequest req;
        req.method = m;
        req.target = t;
        req.body = b;
        req.peer_is_loopback = loopback;
        req.on_admin_listener = admin_listener;
        // What curl -H 'Content-Type: application/json' sends; tests of the admin POST rules override it.
        if (m == "POST" && !headers.count("Content-Type")) headers["Content-Type"] = "application/json";
        for (auto& [k, v] : headers) {
            held_.push_back(v);
            std::string_view value = held_.back();
            if (k == "Range") {
                req.range = value;
                req.has_range = true;
            } else if (k == "If-Range") {
                req.if_range = value;
                req.has_if_range = true;
            } else if (k == "If-Match") {
                req.if_match = value;
                req.has_if_match = true;
            } else if (k == "If-None-Match") {
                req.if_none_match = value;
                req.has_if_none_match = true;
            } else if (k == "If-Modified-Since") {
                req.if_modified_since = value;
            } else if (k == "If-Unmodified-Since") {
                req.if_unmodified_since = value;
            } else if (k == "Toast-Deadline") {
                req.deadline = value;
            } else if (k == "Cache-Control" || k == "Pragma") {
                req.no_cache =
                    req.no_cache || requests_no_cache(k == "Pragma" ? "" : value, k == "Pragma" ? value : "");
            } else if (k == "Content-Type") {
                req.content_type = value;
                req.has_content_type = true;
            } else if (k == "Origin") {
                req.origin = value;
                req.has_origin = true;
            } else if (k == "Host") {
                req.host = value;
            } else if (k == "Sec-Fetch-Site") {
                req.sec_fetch_site = value;
            } else if (k == "No-Content-Type") {
                req.has_content_type = false;
            } else {
                FAIL("unknown header in test: " << k);
            }
        }
        HandlerContext ctx{store, disks, metrics, limits};
        return handle_request(req, ctx);
    }

    // The body a response stands for, with title parts filled from the title's bytes.
    std::string body_of(const HttpResponse& r) const {
        if (!r.title) return r.body;
        std::string out;
        for (const auto& p : r.parts)
            out += p.prefix + bytes.substr(p.range.first, p.range.length());
        return out + r.trailer;
    }

    std::string last_modified() const { return format_http_date(store.find("movie")->last_modified); }
    std::string etag() const { return store.find("movie")->etag; }

  private:
    std::deque<std::string> held_;
};

}  // namespace

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

TEST_CASE("admin routes answer loopback peers only", "[server][handler][admin]") {
    Fixture f;
    auto r = f.get("/admin/disks", {}, "GET", "", /*loopback=*/false);
    CHECK(r.status == 403);
    CHECK(f.get("/admin/disks/0/fault", {}, "POST", R"({"offline":true})", false).status == 403);
    CHECK_FALSE(f.disks.disk_status()[0].fault.offline);
}

TEST_CASE("GET /admin/disks lists every disk as JSON", "[server][handler][admin]") {
    Fixture f;
    auto r = f.get("/admin/disks");
    REQUIRE(r.status == 200);
    CHECK(r.header("Content-Type") == "application/json");
    auto j = nlohmann::json::parse(r.body);
    REQUIRE(j.size() == 4);
    CHECK(j[2]["index"] == 2);
    CHECK(j[2]["path"] == "/disk2");
    CHECK(j[2]["reads"] == 20);
    CHECK(j[2]["fault"]["offline"] == false);
}

TEST_CASE("POST /admin/disks/N/fault merges the JSON body into the disk's fault",
          "[server][handler][admin]") {
    Fixture f;
    auto r = f.get("/admin/disks/1/fault", {}, "POST", R"({"stutter_pct":25,"added_latency":"5ms"})");
    REQUIRE(r.status == 200);
    auto d = f.disks.disk_status()[1];
    CHECK(d.fault.stutter_pct == 25);
    CHECK(d.fault.added_latency == std::chrono::milliseconds(5));
    CHECK_FALSE(d.fault.offline);
    CHECK(nlohmann::json::parse(r.body)["fault"]["added_latency"] == "5000000ns");

    REQUIRE(f.get("/admin/disks/1/fault", {}, "POST", R"({"offline":true})").status == 200);
    d = f.disks.disk_status()[1];
    CHECK(d.fault.offline);
    CHECK(d.fault.stutter_pct == 25);  // kept
    REQUIRE(f.get("/admin/disks/1/fault", {}, "POST", R"({"offline":false})").status == 200);
    CHECK_FALSE(f.disks.disk_status()[1].fault.offline);
}

TEST_CASE("bad fault requests get 4xx naming the problem and change nothing", "[server][handler][admin]") {
    Fixture f;
    auto bad = f.get("/admin/disks/0/fault", {}, "POST", "{not json");
    CHECK(bad.status == 400);
    auto unknown = f.get("/admin/disks/0/fault", {}, "POST", R"({"ofline":true})");
    CHECK(unknown.status == 400);
    CHECK_THAT(unknown.reason, Contains("ofline"));
    auto range = f.get("/admin/disks/0/fault", {}, "POST", R"({"stutter_pct":-1})");
    CHECK(range.status == 400);
    CHECK_THAT(range.reason, Contains("stutter_pct"));
    CHECK(f.get("/admin/disks/0/fault", {}, "POST", R"({"added_latency":"soon"})").status == 400);
    // 1e10 s used to wrap to -9223372036854775808ns and be applied.
    auto huge = f.get("/admin/disks/0/fault", {}, "POST", R"({"added_latency":1e10})");
    CHECK(huge.status == 400);
    CHECK(huge.reason == "config field 'fault.added_latency': value 10000000000.0 is outside [0s, 10min]");
    CHECK(f.get("/admin/disks/0/fault", {}, "POST", R"({"added_latency":"11min"})").status == 400);
    CHECK(f.get("/admin/disks/9/fault", {}, "POST", R"({"offline":true})").status == 404);
    CHECK(f.get("/admin/disks/x/fault", {}, "POST", R"({"offline":true})").status == 404);
    CHECK(f.get("/admin/disks/0/fault", {}, "GET").status == 405);
    CHECK(f.get("/admin/disks/0/fault", {}, "GET").header("Allow") == "POST");
    CHECK(f.get("/admin/nothing").status == 404);
    CHECK(f.disks.disk_status()[0].fault == DiskFault{});
}

TEST_CASE("admin POST needs a JSON content type and the server's own origin", "[server][handler][admin]") {
    Fixture f;
    const std::string body = R"({"offline":true})";
    auto post = [&](std::map<std::string, std::string> headers) {
        return f.get("/admin/disks/0/fault", std::move(headers), "POST", body);
    };
    // A form post or a text/plain fetch from a web page needs no CORS preflight: refused by type.
    auto form = post({{"Content-Type", "application/x-www-form-urlencoded"}});
    CHECK(form.status == 415);
    CHECK(form.reason ==
          "admin POST needs Content-Type application/json, got application/x-www-form-urlencoded");
    CHECK(form.header("Accept-Post") == "application/json");
    CHECK(post({{"Content-Type", "text/plain"}}).status == 415);
    CHECK(post({{"No-Content-Type", ""}}).status == 415);
    // Another origin is refused even with the right type.
    auto foreign = post({{"Origin", "http://evil.example"}, {"Host", "127.0.0.1:8080"}});
    CHECK(foreign.status == 403);
    CHECK(foreign.reason ==
          "cross-origin admin request refused: Origin http://evil.example is not this server (Host "
          "127.0.0.1:8080)");
    CHECK(post({{"Origin", "http://127.0.0.1:8081"}, {"Host", "127.0.0.1:8080"}}).status == 403);
    CHECK(post({{"Origin", "null"}, {"Host", "127.0.0.1:8080"}}).status == 403);
    CHECK(post({{"Origin", "http://127.0.0.1:8080"}}).status == 403);  // no Host to match
    CHECK(post({{"Sec-Fetch-Site", "cross-site"}}).status == 403);
    CHECK(post({{"Sec-Fetch-Site", "same-site"}}).status == 403);
    CHECK(f.disks.disk_status()[0].fault == DiskFault{});
    // The server's own origin (case-insensitive), a same-origin fetch and a tool sending neither header pass.
    CHECK(post({{"Origin", "http://LOCALHOST:8080"}, {"Host", "localhost:8080"}}).status == 200);
    CHECK(post({{"Sec-Fetch-Site", "same-origin"}}).status == 200);
    CHECK(post({{"Content-Type", "application/json; charset=utf-8"}}).status == 200);
    CHECK(f.disks.disk_status()[0].fault.offline);
}

TEST_CASE("with admin_listen configured, admin routes live only on the admin listener",
          "[server][handler][admin]") {
    Fixture f;
    f.limits.admin_on_separate_listener = true;
    CHECK(f.get("/admin/disks").status == 404);
    CHECK(f.get("/admin/disks", {}, "GET", "", true, /*admin_listener=*/true).status == 200);
    CHECK(f.get("/titles/movie", {}, "GET", "", true, true).status == 404);
    CHECK(f.get("/metrics", {}, "GET", "", true, true).status == 200);
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
