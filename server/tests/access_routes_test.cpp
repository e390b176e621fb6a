// Signed URLs and telemetry through handle_request: every content route refuses a bad credential with a 403
// that reads nothing (no title looked up, no store read), and the renew and telemetry routes.
#include <catch2/catch.hpp>

#include <libtorrent/bdecode.hpp>

#include "handler_fixture.hpp"
#include "server/core/access_check.hpp"
#include "server/core/access_routes.hpp"

using namespace toast;
using namespace toast::server;
using toast::server::testing::Fixture;

namespace {

struct SignedFixture : Fixture {
    AccessPolicy policy;
    SignedFixture() {
        policy.keys.push_back({"k1", std::string(32, '\x5a')});
        policy.signing_key = "k1";
        access = &policy;
        store.set_torrent(
            "movie", "movie.ts",
            std::string("d8:url-listl31:http://vod.example/titles/moviee4:infod4:name8:movie.tsee"));
    }
    std::string token(const AccessScope& scope, std::int64_t lifetime = 60,
                      const std::string& who = "alice") {
        return sign_token(*policy.key("k1"), who, scope, unix_now, unix_now + lifetime);
    }
    HttpResponse bearer(const std::string& target, const std::string& token,
                        const std::string& method = "GET", const std::string& body = "") {
        return get(target, {{"Authorization", "Bearer " + token}}, method, body, false);
    }
};

// A refusal that served nothing: 403, a plain-text reason, no title bytes, and the store not consulted.
void check_refused(const SignedFixture& f, const HttpResponse& r, const std::string& denial) {
    CHECK(r.status == 403);
    CHECK(r.denial == denial);
    CHECK_FALSE(r.title);
    CHECK(r.parts.empty());
    CHECK(r.body.rfind("403 Forbidden: ", 0) == 0);
    CHECK(f.store.finds().empty());
    CHECK(f.store.reads() == 0);
}

class CountingSink : public TelemetrySink {
  public:
    Outcome submit(std::string_view reporter, const QoeReport& report) override {
        reporters.emplace_back(reporter);
        reports.push_back(report);
        return {accept, std::chrono::seconds(7)};
    }
    bool accept = true;
    std::vector<std::string> reporters;
    std::vector<QoeReport> reports;
};

std::string report_body() {
    QoeReport q;
    q.session = "0123456789abcdef";
    q.title = "movie";
    q.startup_seconds = 0.8;
    q.played_seconds = 10;
    q.bytes_from_peers = 1000;
    return format_qoe_report(q);
}

}  // namespace

TEST_CASE("an open server answers content routes without a token", "[server][access]") {
    Fixture f;
    CHECK(f.get("/titles/movie", {}, "GET", "", false).status == 200);
    CHECK(f.get("/catalog", {}, "GET", "", false).status == 200);
}

TEST_CASE("each bad credential is refused 403 on every content route, reading nothing", "[server][access]") {
    for (const std::string target :
         {"/titles/movie", "/stream/movie", "/torrents/movie.torrent", "/catalog"}) {
        INFO(target);
        {
            SignedFixture f;
            check_refused(f, f.get(target, {}, "GET", "", false), "missing");
        }
        {
            SignedFixture f;
            check_refused(f, f.bearer(target, "v1~k1~alice~catalog~1~2"), "malformed");
        }
        {
            SignedFixture f;
            auto t = f.token(AccessScope::catalog());
            t[t.size() - 5] = t[t.size() - 5] == 'A' ? 'B' : 'A';
            check_refused(f, f.bearer(target, t), "bad_signature");
        }
        {
            SignedFixture f;
            auto t = f.token(AccessScope::catalog(), 60);
            f.unix_now += 60;
            check_refused(f, f.bearer(target, t), "expired");
        }
        {
            SignedFixture f;
            AccessKey old{"k0", std::string(32, '\x01')};
            check_refused(f,
                          f.bearer(target, sign_token(old, "alice", AccessScope::catalog(), f.unix_now,
                                                      f.unix_now + 60)),
                          "unknown_key");
        }
        {
            SignedFixture f;
            f.policy.revoked_subscribers.insert("alice");
            check_refused(f, f.bearer(target, f.token(AccessScope::catalog())), "revoked");
        }
        {
            SignedFixture f;
            auto t = f.token(AccessScope::catalog(), 5);
            f.unix_now += 5;
            check_refused(f, f.get(target + "?token=" + t, {}, "GET", "", false), "expired");
        }
        {
            // Out of scope is decided once the name is resolved (a lookup in memory), still before any read.
            SignedFixture f;
            auto r = f.bearer(target, f.token(AccessScope::for_title("other")));
            CHECK(r.status == 403);
            CHECK(r.denial == "out_of_scope");
            CHECK_FALSE(r.title);
            CHECK(f.store.reads() == 0);
        }
    }
}

TEST_CASE("a valid token serves the title and names its subscriber", "[server][access]") {
    SignedFixture f;
    auto r = f.bearer("/titles/movie", f.token(AccessScope::catalog()));
    CHECK(r.status == 200);
    CHECK(r.subscriber == "alice");
    CHECK(f.body_of(r) == f.bytes);
    auto q = f.get("/titles/movie?token=" + f.token(AccessScope::for_title("movie")),
                   {{"Range", "bytes=0-9"}}, "GET", "", false);
    CHECK(q.status == 206);
    CHECK(f.body_of(q) == f.bytes.substr(0, 10));
    // The torrent's file name is the title's too.
    CHECK(f.bearer("/titles/movie.ts", f.token(AccessScope::for_title("movie"))).status == 200);
    CHECK(f.bearer("/stream/movie", f.token(AccessScope::for_title("movie"))).status == 200);
}

TEST_CASE("a title token covers its title's routes and nothing else", "[server][access]") {
    SignedFixture f;
    f.store.add("other", "other bytes");
    const auto t = f.token(AccessScope::for_title("movie"));
    CHECK(f.bearer("/torrents/movie.torrent", t).status == 200);
    auto other = f.bearer("/titles/other", t);
    CHECK(other.status == 403);
    CHECK(other.denial == "out_of_scope");
    CHECK(other.reason == "token scope title:movie does not cover title 'other'");
    CHECK(f.bearer("/stream/other", t).status == 403);
    CHECK(f.bearer("/torrents/other.torrent", t).status == 403);
    CHECK(f.bearer("/catalog", t).status == 403);
    CHECK(f.bearer("/titles/nosuch", t).status == 403);
    // Its own title, missing: 404 (it may know that its title is gone).
    CHECK(f.bearer("/titles/gone", f.token(AccessScope::for_title("gone"))).status == 404);
}

TEST_CASE("a torrent fetched with a token in its URL carries the token in its url-list", "[server][access]") {
    SignedFixture f;
    const auto t = f.token(AccessScope::for_title("movie"));
    auto r = f.get("/torrents/movie.torrent?token=" + t, {}, "GET", "", false);
    REQUIRE(r.status == 200);
    CHECK(r.header("Cache-Control") == "no-store");
    CHECK(r.header("ETag").empty());
    libtorrent::error_code ec;
    auto node = libtorrent::bdecode(r.body, ec);
    REQUIRE_FALSE(ec);
    CHECK(node.dict_find_list("url-list").list_string_value_at(0) ==
          "http://vod.example/titles/movie?token=" + t);
    CHECK(node.dict_find_dict("info").dict_find_string_value("name") == "movie.ts");
    // With the header, the stored bytes as they are (a box adds its own header to every request).
    auto plain = f.bearer("/torrents/movie.torrent", t);
    CHECK(plain.body.find("token=") == std::string::npos);
    CHECK_FALSE(plain.header("ETag").empty());
}

TEST_CASE("a valid token is renewed for the same subscriber, scope and lifetime", "[server][access]") {
    SignedFixture f;
    const auto t = sign_token(*f.policy.key("k1"), "alice", AccessScope::for_title("movie"), f.unix_now - 50,
                              f.unix_now + 10);
    auto r = f.bearer("/token/renew", t, "POST");
    REQUIRE(r.status == 200);
    CHECK(r.token_renewed);
    CHECK(r.header("Cache-Control") == "no-store");
    REQUIRE(!r.body.empty());
    auto fresh = parse_access_token(r.body.substr(0, r.body.size() - 1)).token;
    REQUIRE(fresh);
    CHECK(fresh->subscriber == "alice");
    CHECK(fresh->scope == AccessScope::for_title("movie"));
    CHECK(fresh->issued == f.unix_now);
    CHECK(fresh->expires == f.unix_now + 60);
    CHECK(f.bearer("/token/renew", t, "GET").status == 405);
    f.unix_now += 10;
    CHECK(f.bearer("/token/renew", t, "POST").denial == "expired");
    f.unix_now -= 10;
    f.policy.revoked_subscribers.insert("alice");
    CHECK(f.bearer("/token/renew", t, "POST").denial == "revoked");
    Fixture open;
    CHECK(open.get("/token/renew", {}, "POST").status == 404);
}

TEST_CASE("telemetry is authenticated, bounded and rate-limited", "[server][access][telemetry]") {
    SignedFixture f;
    CountingSink sink;
    f.telemetry = &sink;
    const auto t = f.token(AccessScope::for_title("movie"));
    auto ok = f.get("/telemetry", {{"Authorization", "Bearer " + t}, {"Content-Type", "application/json"}},
                    "POST", report_body(), false);
    CHECK(ok.status == 202);
    REQUIRE(sink.reports.size() == 1);
    CHECK(sink.reporters[0] == "subscriber:alice");
    CHECK(sink.reports[0].bytes_from_peers == 1000);

    CHECK(f.get("/telemetry", {}, "POST", report_body(), false).status == 403);
    CHECK(f.bearer("/telemetry", t, "GET").status == 405);
    f.limits.telemetry_max_body = 64;
    CHECK(f.bearer("/telemetry", t, "POST", report_body()).status == 413);
    f.limits.telemetry_max_body = 8192;
    CHECK(f.get("/telemetry", {{"Authorization", "Bearer " + t}, {"Content-Type", "text/plain"}}, "POST",
                report_body(), false)
              .status == 415);
    auto bad = f.bearer("/telemetry", t, "POST", R"({"v":1})");
    CHECK(bad.status == 400);
    CHECK(bad.reason == "bad report: field 'session': missing");
    sink.accept = false;
    auto limited = f.bearer("/telemetry", t, "POST", report_body());
    CHECK(limited.status == 429);
    CHECK(limited.header("Retry-After") == "7");
    CHECK(sink.reports.size() == 2);  // the refused one reached the sink (its rate limit said no)

    // An open server takes reports from anyone, rate-limited by address.
    Fixture open;
    CountingSink open_sink;
    open.telemetry = &open_sink;
    CHECK(open.get("/telemetry", {}, "POST", report_body(), false).status == 202);
    CHECK(open_sink.reporters == std::vector<std::string>{"address:192.0.2.9"});
    // No sink, or switched off: not served.
    Fixture none;
    CHECK(none.get("/telemetry", {}, "POST", report_body(), false).status == 404);
}
