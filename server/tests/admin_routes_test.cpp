#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "handler_fixture.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;
using toast::server::testing::Fixture;

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
    // 1e10 s must not wrap to -9223372036854775808ns and be applied.
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
