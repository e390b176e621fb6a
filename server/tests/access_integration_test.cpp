// The real toast-server with signed URLs, box telemetry and TLS: tokens from `toast-server sign`, every bad
// credential refused with nothing served, a removed key refused after SIGHUP, QoE reports on /metrics, and
// HTTPS checked with curl against a CA made for the test.
#include <catch2/catch.hpp>

#include <regex>

#include "operated_server.hpp"
#include "test_support.hpp"
#include "toast/common/access_token.hpp"
#include "toast/common/qoe_report.hpp"

using Catch::Matchers::Contains;
using toast::server::testing::Operated;
namespace tt = toast::testing;
using namespace std::chrono_literals;

namespace {

const std::string kKey1 = std::string(64, 'a');
const std::string kKey0 = std::string(64, 'b');

void with_keys(Operated& op) {
    op.config()["access"] = {{"keys", {{{"id", "k1"}, {"secret", kKey1}}, {{"id", "k0"}, {"secret", kKey0}}}},
                             {"signing_key", "k1"}};
    op.config()["telemetry"] = {{"per_subscriber_burst", 2}, {"per_subscriber_per_minute", 1}};
}

std::string sign(Operated& op, const std::vector<std::string>& args) {
    std::vector<std::string> all{"--config", op.config_path(), "sign"};
    all.insert(all.end(), args.begin(), args.end());
    auto r = tt::run(TOAST_SERVER_BIN, all);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.out.size() > 1);
    return r.out.substr(0, r.out.size() - 1);
}

// The value of a metric line (the first whose name and labels start with `series`), or -1.
double metric(Operated& op, const std::string& series) {
    auto m = tt::http_request(op.port(), "GET", "/metrics");
    REQUIRE(m.status == 200);
    std::istringstream in(m.body);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
}

tt::HttpResponse get(Operated& op, const std::string& target, const std::string& token = {}) {
    std::map<std::string, std::string> headers;
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    return tt::http_request(op.port(), "GET", target, headers);
}

}  // namespace

TEST_CASE("a signed server refuses every bad credential with 403 and serves nothing",
          "[server][integration][access]") {
    Operated op(true, with_keys);
    const auto good = sign(op, {"--subscriber", "alice", "--scope", "catalog", "--lifetime", "1h"});
    const auto movie = sign(op, {"--subscriber", "bob", "--scope", "title:movie"});
    const auto other = sign(op, {"--subscriber", "carol", "--scope", "title:other"});
    const auto old_key = sign(op, {"--subscriber", "dave", "--scope", "catalog", "--key-id", "k0"});
    const auto short_lived = sign(op, {"--subscriber", "erin", "--scope", "catalog", "--lifetime", "1s"});
    auto tampered = good;
    tampered[tampered.find("alice")] = 'A';
    std::this_thread::sleep_for(1100ms);  // short_lived expires

    const std::vector<std::string> routes{"/titles/movie", "/stream/movie", "/torrents/movie.torrent",
                                          "/catalog"};
    for (const auto& route : routes) {
        INFO(route);
        for (const auto& [token, reason] : std::vector<std::pair<std::string, std::string>>{
                 {"", "no access token"},
                 {tampered, "token signature does not match"},
                 {short_lived, "token of erin expired"},
                 {other, "token scope title:other does not cover"},
                 {"v1~k1~x", "malformed token"}}) {
            auto r = get(op, route, token);
            CHECK(r.status == 403);
            CHECK_THAT(r.body, Contains(reason));
            CHECK(r.body.size() < 200);  // the reason, never title bytes
        }
        // The same in the URL.
        CHECK(get(op, route + "?token=" + tampered).status == 403);
    }
    // Nothing was served: no title byte left the server, no paced stream was admitted.
    CHECK(metric(op, "toast_http_bytes_sent_total{title=\"movie\"}") == -1);
    CHECK(metric(op, "toast_access_denied_total{reason=\"missing\"}") == 4);
    CHECK(metric(op, "toast_access_denied_total{reason=\"expired\"}") == 4);
    CHECK(metric(op, "toast_access_denied_total{reason=\"out_of_scope\"}") == 4);
    CHECK(metric(op, "toast_access_denied_total{reason=\"bad_signature\"}") == 8);

    // Good tokens: the title's exact bytes, through the header or the URL.
    auto whole = get(op, "/titles/movie", good);
    CHECK(whole.status == 200);
    CHECK(whole.body == op.source());
    auto range =
        tt::http_request(op.port(), "GET", "/titles/movie?token=" + movie, {{"Range", "bytes=100-199"}});
    CHECK(range.status == 206);
    CHECK(range.body == op.source().substr(100, 100));
    CHECK(get(op, "/catalog", movie).status == 403);  // a title token does not list the catalogue
    CHECK(get(op, "/catalog", good).status == 200);
    CHECK(get(op, "/titles/movie", old_key).status == 200);

    // The access log names the subscriber and never shows the token.
    const auto log = tt::read_file(op.path("access.log"));
    CHECK_THAT(log, Contains("127.0.0.1 - bob ["));
    CHECK_THAT(log, Contains("/titles/movie?token=REDACTED"));
    CHECK(log.find(movie.substr(movie.rfind('~') + 1)) == std::string::npos);

    // Rotation: k0 removed from the config; after SIGHUP its tokens are refused, k1's still work.
    op.config()["access"]["keys"] = {{{"id", "k1"}, {"secret", kKey1}}};
    op.write_config();
    op.reload(1);
    auto revoked = get(op, "/titles/movie", old_key);
    CHECK(revoked.status == 403);
    CHECK_THAT(revoked.body, Contains("unknown key id k0"));
    CHECK(get(op, "/titles/movie", good).status == 200);
    CHECK_THAT(op.server().stderr_text(), Contains("access: keys k1,k0 -> k1"));
}

TEST_CASE("sign, check and serve say how access is set up", "[server][integration][access]") {
    Operated open;
    auto check_open = tt::run(TOAST_SERVER_BIN, {"--config", open.config_path(), "check"});
    CHECK_THAT(check_open.out, Contains("access: OPEN, no keys in the config"));
    CHECK_THAT(open.server().stderr_text(), Contains("access: OPEN"));
    auto no_keys = tt::run(TOAST_SERVER_BIN, {"--config", open.config_path(), "sign", "--subscriber", "a",
                                              "--scope", "catalog"});
    CHECK(no_keys.exit_code == 1);
    CHECK_THAT(no_keys.err, Contains("the config has no access keys"));

    Operated op(false, with_keys);
    auto check = tt::run(TOAST_SERVER_BIN, {"--config", op.config_path(), "check"});
    CHECK_THAT(check.out, Contains("access: signed URLs, keys k1, k0 (renewals signed with k1)"));
    for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--scope", "catalog"}, "--subscriber is required"},
             {{"--subscriber", "a"}, "--scope is required"},
             {{"--subscriber", "a b", "--scope", "catalog"}, "--subscriber 'a b': expected 1-64 characters"},
             {{"--subscriber", "a", "--scope", "all"}, "--scope 'all': expected catalog or title:NAME"},
             {{"--subscriber", "a", "--scope", "catalog", "--lifetime", "0s"},
              "--lifetime '0s': expected a duration"},
             {{"--subscriber", "a", "--scope", "catalog", "--key-id", "k9"}, "--key-id 'k9': no such key"},
             {{"--subscriber", "a", "--scope", "catalog", "--frob"}, "unknown argument '--frob'"},
             {{"--subscriber"}, "--subscriber needs a value"}}) {
        std::vector<std::string> all{"--config", op.config_path(), "sign"};
        all.insert(all.end(), args.begin(), args.end());
        auto r = tt::run(TOAST_SERVER_BIN, all);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(message));
        CHECK(r.out.empty());
    }
    const auto token = sign(op, {"--subscriber", "alice", "--scope", "title:movie", "--lifetime", "2h"});
    auto t = toast::parse_access_token(token).token;
    REQUIRE(t);
    CHECK(t->expires - t->issued == 7200);
    CHECK(t->key_id == "k1");
}

TEST_CASE("a token is renewed over HTTP and QoE reports reach /metrics",
          "[server][integration][access][telemetry]") {
    Operated op(false, with_keys);
    const auto token = sign(op, {"--subscriber", "alice", "--scope", "title:movie", "--lifetime", "10m"});
    auto renewed =
        tt::http_request(op.port(), "POST", "/token/renew", {{"Authorization", "Bearer " + token}});
    REQUIRE(renewed.status == 200);
    auto fresh = toast::parse_access_token(renewed.body.substr(0, renewed.body.size() - 1)).token;
    REQUIRE(fresh);
    CHECK(fresh->subscriber == "alice");
    CHECK(fresh->expires - fresh->issued == 600);
    CHECK(get(op, "/titles/movie", toast::format_access_token(*fresh)).status == 200);
    CHECK(metric(op, "toast_access_renewals_total") == 1);

    toast::QoeReport q;
    q.session = "0123456789abcdef";
    q.title = "movie";
    q.startup_seconds = 0.75;
    q.stall_count = 2;
    q.stall_seconds = 3.5;
    q.stall_durations = {0.5, 3.0};
    q.played_seconds = 30;
    q.bytes_from_peers = 3000;
    q.bytes_from_server = 1000;
    q.bytes_uploaded = 500;
    const std::map<std::string, std::string> headers{{"Authorization", "Bearer " + token},
                                                     {"Content-Type", "application/json"}};
    auto post = [&](const toast::QoeReport& r) {
        return tt::http_request_with_body(op.port(), "POST", "/telemetry", headers,
                                          toast::format_qoe_report(r));
    };
    CHECK(post(q).status == 202);
    q.sequence = 1;
    q.final = true;
    q.startup_seconds.reset();
    CHECK(post(q).status == 202);
    auto limited = post(q);  // the burst of 2 is spent
    CHECK(limited.status == 429);
    CHECK(limited.header("retry-after") == "60");
    CHECK(tt::http_request_with_body(op.port(), "POST", "/telemetry", {{"Content-Type", "application/json"}},
                                     toast::format_qoe_report(q))
              .status == 403);
    CHECK(metric(op, "toast_qoe_sessions_total") == 1);
    CHECK(metric(op, "toast_qoe_sessions_ended_total") == 1);
    CHECK(metric(op, "toast_qoe_startup_seconds_count") == 1);
    CHECK(metric(op, "toast_qoe_startup_seconds_bucket{le=\"1\"}") == 1);
    CHECK(metric(op, "toast_qoe_stall_seconds_count") == 4);
    CHECK(metric(op, "toast_qoe_stalls_total") == 4);
    CHECK(metric(op, "toast_qoe_stall_milliseconds_total") == 7000);
    CHECK(metric(op, "toast_qoe_bytes_total{source=\"peers\"}") == 6000);
    CHECK(metric(op, "toast_qoe_bytes_total{source=\"server\"}") == 2000);
    CHECK(metric(op, "toast_qoe_uploaded_bytes_total") == 1000);
    CHECK(metric(op, "toast_qoe_played_milliseconds_total") == 60000);
    CHECK(metric(op, "toast_qoe_reports_total{result=\"rate_limited_subscriber\"}") == 1);
}

TEST_CASE("a TLS server serves HTTPS with a certificate the box's CA signed", "[server][integration][tls]") {
    tt::TempDir pki_dir;
    const auto pki = tt::make_test_pki(pki_dir.path());
    Operated op(true, [&](Operated& o) {
        with_keys(o);
        o.config()["tls"] = {{"certificate_chain", pki.server_cert.string()},
                             {"private_key", pki.server_key.string()}};
    });
    const auto token = sign(op, {"--subscriber", "alice", "--scope", "catalog"});
    const auto url = "https://127.0.0.1:" + std::to_string(op.port()) + "/titles/movie";
    const auto out = op.path("fetched");
    auto curl = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{"-sS", "--max-time", "20", "-o", out.string(), "-w", "%{http_code}"};
        args.insert(args.end(), extra.begin(), extra.end());
        return tt::run("/usr/bin/curl", args, 30s);
    };
    auto ok = curl({"--cacert", pki.ca.string(), "-H", "Authorization: Bearer " + token, url});
    INFO(ok.err);
    CHECK(ok.exit_code == 0);
    CHECK(ok.out == "200");
    CHECK(tt::read_file(out) == op.source());
    auto ranged = curl({"--cacert", pki.ca.string(), "-r", "1000-1999", url + "?token=" + token});
    CHECK(ranged.out == "206");
    CHECK(tt::read_file(out) == op.source().substr(1000, 1000));
    // Signed URLs hold under TLS too.
    CHECK(curl({"--cacert", pki.ca.string(), url}).out == "403");
    // A client that trusts another CA refuses the server (curl's 60: peer certificate cannot be verified).
    auto refused = curl({"--cacert", pki.other_ca.string(), url + "?token=" + token});
    CHECK(refused.exit_code == 60);
    // Plain HTTP on the TLS port is not served.
    CHECK(curl({"http://127.0.0.1:" + std::to_string(op.port()) + "/titles/movie"}).out != "200");
    // The certificate is read again on SIGHUP.
    op.reload(1);
    CHECK(curl({"--cacert", pki.ca.string(), "-H", "Authorization: Bearer " + token, url}).out == "200");
    CHECK_THAT(op.server().stderr_text(), Contains("access: signed URLs"));
}
