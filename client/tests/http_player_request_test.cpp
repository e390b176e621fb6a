#include <catch2/catch.hpp>

#include "client/http/player_request.hpp"

using namespace toast::client;

TEST_CASE("a GET without Range is 200 for the whole title", "[client][http]") {
    auto r = decide_player_response({"GET", "/movie.mp4", ""}, "/movie.mp4", 1000);
    CHECK(r.status == 200);
    CHECK(r.first == 0);
    CHECK(r.length == 1000);
    CHECK(r.content_range.empty());
    CHECK_FALSE(r.head);
}

TEST_CASE("one satisfiable range is 206 with its Content-Range", "[client][http]") {
    auto r = decide_player_response({"GET", "/movie.mp4?t=1", "bytes=100-199"}, "/movie.mp4", 1000);
    CHECK(r.status == 206);
    CHECK(r.first == 100);
    CHECK(r.length == 100);
    CHECK(r.content_range == "bytes 100-199/1000");
    auto open = decide_player_response({"GET", "/movie.mp4", "bytes=900-"}, "/movie.mp4", 1000);
    CHECK(open.content_range == "bytes 900-999/1000");
    auto suffix = decide_player_response({"HEAD", "/movie.mp4", "bytes=-10"}, "/movie.mp4", 1000);
    CHECK(suffix.status == 206);
    CHECK(suffix.head);
    CHECK(suffix.first == 990);
    CHECK(suffix.length == 10);
}

TEST_CASE("a range past the end is 416 with bytes */length", "[client][http]") {
    auto r = decide_player_response({"GET", "/movie.mp4", "bytes=1000-"}, "/movie.mp4", 1000);
    CHECK(r.status == 416);
    CHECK(r.content_range == "bytes */1000");
    CHECK_FALSE(r.body_from_title());
    CHECK(r.reason.find("1000 bytes") != std::string::npos);
}

TEST_CASE("invalid, foreign-unit and multi-range headers are ignored", "[client][http]") {
    for (auto range : {"bytes=abc", "items=0-5", "bytes=0-9,500-509"}) {
        INFO(range);
        auto r = decide_player_response({"GET", "/m.ts", range}, "/m.ts", 1000);
        CHECK(r.status == 200);
        CHECK(r.length == 1000);
    }
    // Overlapping ranges coalesce into one: still a single 206.
    auto r = decide_player_response({"GET", "/m.ts", "bytes=0-9,5-19"}, "/m.ts", 1000);
    CHECK(r.status == 206);
    CHECK(r.length == 20);
}

TEST_CASE("other methods are 405 and other paths 404", "[client][http]") {
    CHECK(decide_player_response({"POST", "/m.ts", ""}, "/m.ts", 10).status == 405);
    CHECK(decide_player_response({"PUT", "/m.ts", ""}, "/m.ts", 10).status == 405);
    auto r = decide_player_response({"GET", "/other.ts", ""}, "/m.ts", 10);
    CHECK(r.status == 404);
    CHECK(r.reason.find("/m.ts") != std::string::npos);
}

TEST_CASE("title paths percent-encode and content types follow the extension", "[client][http]") {
    CHECK(title_path("movie.mp4") == "/movie.mp4");
    CHECK(title_path("my movie?.ts") == "/my%20movie%3F.ts");
    CHECK(content_type_for("a.MP4") == "video/mp4");
    CHECK(content_type_for("a.ts") == "video/mp2t");
    CHECK(content_type_for("a.mkv") == "video/x-matroska");
    CHECK(content_type_for("noext") == "application/octet-stream");
}

TEST_CASE("only localhost names and the bound address name the endpoint", "[client][http]") {
    EndpointIdentity self{"127.0.0.1", 8080};
    CHECK(host_names_endpoint("localhost", self));
    CHECK(host_names_endpoint("LOCALHOST:8080", self));
    CHECK(host_names_endpoint("localhost.", self));
    CHECK(host_names_endpoint("player.localhost:8080", self));
    CHECK(host_names_endpoint("127.0.0.1", self));
    CHECK(host_names_endpoint("127.0.0.1:8080", self));
    // A page that rebinds its own name to 127.0.0.1 sends that name.
    CHECK_FALSE(host_names_endpoint("evil.example:8080", self));
    CHECK_FALSE(host_names_endpoint("localhost.evil.example", self));
    CHECK_FALSE(host_names_endpoint("notlocalhost", self));
    CHECK_FALSE(host_names_endpoint("127.0.0.2:8080", self));
    CHECK_FALSE(host_names_endpoint("127.0.0.1:8081", self));
    CHECK_FALSE(host_names_endpoint("", self));
    CHECK_FALSE(host_names_endpoint("[127.0.0.1]", self));
    CHECK_FALSE(host_names_endpoint("::1", self));

    EndpointIdentity v6{"::1", 9000};
    CHECK(host_names_endpoint("[::1]:9000", v6));
    CHECK(host_names_endpoint("localhost:9000", v6));
    CHECK_FALSE(host_names_endpoint("[::2]:9000", v6));
    CHECK_FALSE(host_names_endpoint("[::1", v6));

    // Bound to every address: any IP literal (no DNS name to rebind), still no other name.
    EndpointIdentity any{"0.0.0.0", 9000};
    CHECK(host_names_endpoint("192.168.1.20:9000", any));
    CHECK_FALSE(host_names_endpoint("tv.example:9000", any));
}

TEST_CASE("request heads that break RFC 9112 framing get 400, a foreign Host 421", "[client][http]") {
    EndpointIdentity self{"127.0.0.1", 8080};
    auto check = [&](PlayerRequestHead h) { return refuse_request_head(h, self); };
    CHECK_FALSE(check({11, {"localhost:8080"}, {}}));
    CHECK_FALSE(check({10, {}, {}}));  // HTTP/1.0 needs no Host
    CHECK_FALSE(check({11, {"localhost"}, {"chunked"}}));
    CHECK_FALSE(check({11, {"localhost"}, {" Chunked "}}));

    auto no_host = check({11, {}, {}});
    REQUIRE(no_host);
    CHECK(no_host->status == 400);
    CHECK(no_host->reason == "an HTTP/1.1 request needs a Host header");
    auto two = check({11, {"localhost", "localhost"}, {}});
    REQUIRE(two);
    CHECK(two->status == 400);
    CHECK(two->reason == "more than one Host header");
    auto gzip = check({11, {"localhost"}, {"gzip"}});
    REQUIRE(gzip);
    CHECK(gzip->status == 400);
    CHECK(gzip->reason == "Transfer-Encoding 'gzip' cannot be framed (only chunked)");
    auto list = check({11, {"localhost"}, {"gzip, chunked"}});
    REQUIRE(list);
    CHECK(list->status == 400);
    auto split = check({11, {"localhost"}, {"gzip", "chunked"}});
    REQUIRE(split);
    CHECK(split->status == 400);
    auto old = check({10, {}, {"chunked"}});
    REQUIRE(old);
    CHECK(old->status == 400);
    CHECK(old->reason == "Transfer-Encoding in an HTTP/1.0 request");
    auto foreign = check({11, {"evil.example\x01"}, {}});
    REQUIRE(foreign);
    CHECK(foreign->status == 421);
    // The value is quoted back printable.
    CHECK(foreign->reason.find("'evil.example?'") != std::string::npos);
}
