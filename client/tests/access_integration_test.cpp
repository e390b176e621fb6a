// toast-client against a server with signed URLs, TLS and telemetry, end to end on 127.0.0.1: boxes carry
// their token on every request and renew it while they play, their QoE reaches the server's /metrics, and
// neither an unreachable telemetry endpoint nor a refusing server disturbs anything else.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <memory>
#include <thread>

#include "client/core/stats.hpp"
#include "swarm_fixture.hpp"
#include "test_support.hpp"
#include "toast/common/access_token.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using toast::client::StatsRecord;
using toast::client::testing::read_stats;
using toast::testing::ChildProcess;

namespace {

constexpr std::uint64_t kTitle = 4 * 1024 * 1024;
constexpr const char* kBitrate = "3355443";  // 4 MiB plays for 10 s
const std::string kKeys =
    R"({"access": {"keys": [{"id": "k1", "secret": ")" + std::string(64, 'c') + R"("}]}})";

class SignedBed : public toast::client::testing::SwarmFixture {
  public:
    explicit SignedBed(const std::string& patch = kKeys) {
        patch_server_config(patch);
        toast::testing::write_random_file(dir() / "media.bin", kTitle, 37);
        ingest("movie", dir() / "media.bin", kBitrate);
        start_tracker();
        start_server();
    }
    std::unique_ptr<ChildProcess> viewer(const std::string& who, std::vector<std::string> extra) {
        if (std::find(extra.begin(), extra.end(), "--log-level") == extra.end())
            extra.insert(extra.begin(), {"--log-level", "warn"});
        return start_client("stream", who, extra);
    }
};

StatsRecord finished(ChildProcess& p, const std::filesystem::path& stats, std::chrono::milliseconds limit) {
    auto status = p.wait(limit);
    INFO(p.stderr_text());
    REQUIRE(status);
    REQUIRE(*status == 0);
    auto lines = read_stats(stats);
    REQUIRE(!lines.empty());
    REQUIRE(lines.back().event == "summary");
    return lines.back();
}

bool same_bytes(const std::filesystem::path& a, const std::filesystem::path& b) {
    return toast::testing::read_file(a) == toast::testing::read_file(b);
}

}  // namespace

TEST_CASE("a swarm of boxes with signed tokens streams with 0 stalls and reports its QoE to the server",
          "[client][integration][access][telemetry]") {
    SignedBed bed;
    const auto token = bed.sign({"--subscriber", "box-1", "--scope", "catalog", "--lifetime", "1h"});
    const auto token_file = bed.dir() / "box-2.token";
    std::ofstream(token_file) << bed.sign({"--subscriber", "box-2", "--scope", "title:movie"}) << "\n";
    auto seed = bed.seed("seed", {"--telemetry", "off"});
    REQUIRE(bed.wait_for_seeders(1, 15s));
    auto a = bed.viewer("a", {"--token", token, "--telemetry-interval", "3s"});
    auto b = bed.viewer("b", {"--token-file", token_file.string(), "--telemetry-interval", "3s"});
    const auto sa = finished(*a, bed.stats("a"), 60s);
    const auto sb = finished(*b, bed.stats("b"), 60s);
    for (const auto* s : {&sa, &sb}) {
        CHECK(s->stalls == 0);
        CHECK(s->completed);
    }
    CHECK(same_bytes(bed.data("a"), bed.media()));
    CHECK(same_bytes(bed.data("b"), bed.media()));

    // Nothing was refused, and each session's report (periodic ones and the final one) adds up on /metrics.
    for (const char* reason :
         {"missing", "malformed", "unknown_key", "bad_signature", "expired", "revoked", "out_of_scope"})
        CHECK(bed.server_metric(std::string("toast_access_denied_total{reason=\"") + reason + "\"}") == 0);
    CHECK(bed.server_metric("toast_qoe_sessions_total") == 2);
    CHECK(bed.server_metric("toast_qoe_sessions_ended_total") == 2);
    CHECK(bed.server_metric("toast_qoe_startup_seconds_count") == 2);
    CHECK(bed.server_metric("toast_qoe_stalls_total") == 0);
    CHECK(bed.server_metric("toast_qoe_bytes_total{source=\"peers\"}") ==
          static_cast<double>(sa.bytes_from_peers + sb.bytes_from_peers));
    CHECK(bed.server_metric("toast_qoe_bytes_total{source=\"server\"}") ==
          static_cast<double>(sa.bytes_from_server + sb.bytes_from_server));
    CHECK(bed.server_metric("toast_qoe_reports_total{result=\"accepted\"}") >= 4);
}

TEST_CASE("a box without a valid token gets nothing from a signed server", "[client][integration][access]") {
    SignedBed bed;
    const auto other = bed.sign({"--subscriber", "box-9", "--scope", "title:other"});
    auto none = bed.viewer("none", {"--telemetry", "off"});
    auto scoped = bed.viewer("scoped", {"--token", other, "--telemetry", "off"});
    std::this_thread::sleep_for(6s);
    REQUIRE(none->stop(SIGTERM, 10s));
    REQUIRE(scoped->stop(SIGTERM, 10s));
    for (const auto& who : {"none", "scoped"}) {
        auto lines = read_stats(bed.stats(who));
        REQUIRE(!lines.empty());
        CHECK(lines.back().bytes_server_useful == 0);
        CHECK_FALSE(lines.back().startup_ms);
    }
    CHECK(bed.server_metric("toast_access_denied_total{reason=\"missing\"}") > 0);
    CHECK(bed.server_metric("toast_access_denied_total{reason=\"out_of_scope\"}") > 0);
    CHECK(bed.server_metric("toast_http_bytes_sent_total{title=\"movie\"}") == -1);
}

TEST_CASE("a stream crossing its token's expiry renews it and plays on with 0 stalls",
          "[client][integration][access]") {
    SignedBed bed;
    const auto token_file = bed.dir() / "box.token";
    const auto first = bed.sign({"--subscriber", "box-1", "--scope", "title:movie", "--lifetime", "4s"});
    std::ofstream(token_file) << first << "\n";
    // Server only: every piece is a request that needs a valid token, for the title's 10 s.
    auto v = bed.viewer("v", {"--token-file", token_file.string(), "--telemetry", "off"});
    const auto s = finished(*v, bed.stats("v"), 60s);
    CHECK(s.stalls == 0);
    CHECK(s.bytes_server_useful == kTitle);
    CHECK(same_bytes(bed.data("v"), bed.media()));
    CHECK(bed.server_metric("toast_access_renewals_total") >= 2);
    CHECK(bed.server_metric("toast_access_denied_total{reason=\"expired\"}") == 0);
    // The renewed token went back to the file, for the box's next start.
    auto saved =
        toast::parse_access_token(toast::testing::read_file(token_file).substr(0, first.size())).token;
    auto original = toast::parse_access_token(first).token;
    REQUIRE(saved);
    CHECK(saved->subscriber == "box-1");
    CHECK(saved->expires > original->expires);
}

TEST_CASE("an unreachable telemetry endpoint does not disturb playback", "[client][integration][telemetry]") {
    SignedBed bed("{}");
    const auto nowhere = "http://127.0.0.1:" + std::to_string(toast::testing::free_tcp_port()) + "/telemetry";
    const auto started = std::chrono::steady_clock::now();
    auto v = bed.viewer("v", {"--telemetry", nowhere, "--telemetry-interval", "1s", "--log-level", "info"});
    const auto s = finished(*v, bed.stats("v"), 60s);
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(s.stalls == 0);
    CHECK(same_bytes(bed.data("v"), bed.media()));
    // Every report was dropped and counted, and the exit waited at most the final report's moment.
    CHECK_THAT(v->stderr_text(), Contains("reports sent, "));
    CHECK_THAT(v->stderr_text(), Contains(": 0 reports sent, "));
    CHECK(took < 40s);
    CHECK(bed.server_metric("toast_qoe_sessions_total") == 0);
}

TEST_CASE("boxes stream over TLS from a server their CA signed, and refuse one it did not",
          "[client][integration][tls]") {
    toast::testing::TempDir pki_dir;
    const auto pki = toast::testing::make_test_pki(pki_dir.path());
    const auto admin = toast::testing::free_tcp_port();
    SignedBed bed(R"({"access": {"keys": [{"id": "k1", "secret": ")" + std::string(64, 'd') +
                  R"("}]}, "tls": {"certificate_chain": ")" + pki.server_cert.string() +
                  R"(", "private_key": ")" + pki.server_key.string() + R"("}, "admin_listen": "127.0.0.1:)" +
                  std::to_string(admin) + "\"}");
    const auto token = bed.sign({"--subscriber", "box-1", "--scope", "catalog"});
    auto good =
        bed.viewer("good", {"--token", token, "--ca-file", pki.ca.string(), "--telemetry-interval", "2s"});
    auto wrong =
        bed.viewer("wrong", {"--token", token, "--ca-file", pki.other_ca.string(), "--telemetry", "off"});
    const auto s = finished(*good, bed.stats("good"), 60s);
    CHECK(s.stalls == 0);
    CHECK(s.bytes_server_useful == kTitle);
    CHECK(same_bytes(bed.data("good"), bed.media()));
    CHECK(bed.server_metric("toast_qoe_sessions_ended_total", admin) == 1);

    REQUIRE(wrong->stop(SIGTERM, 10s));
    auto lines = read_stats(bed.stats("wrong"));
    REQUIRE(!lines.empty());
    CHECK(lines.back().bytes_server_useful == 0);
    CHECK_THAT(wrong->stderr_text(), Contains("certificate verify failed"));
    CHECK(bed.server_metric("toast_http_tls_handshake_failures_total", admin) > 0);
}

TEST_CASE(
    "a stock BitTorrent client given a torrent's signed URL downloads the title from the server's web seed",
    "[client][integration][access][interop]") {
    SignedBed bed;
    const auto token = bed.sign({"--subscriber", "stock-1", "--scope", "title:movie"});
    const auto base = "http://127.0.0.1:" + std::to_string(bed.server_port());
    auto signed_torrent =
        toast::testing::http_request(bed.server_port(), "GET", "/torrents/movie.torrent?token=" + token);
    REQUIRE(signed_torrent.status == 200);
    std::ofstream(bed.dir() / "signed.torrent", std::ios::binary) << signed_torrent.body;
    std::filesystem::create_directories(bed.dir() / "stock");
    auto r = toast::testing::run("/usr/bin/python3",
                                 {STOCK_WEBSEED_PY, (bed.dir() / "signed.torrent").string(), "--save-dir",
                                  (bed.dir() / "stock").string(), "--timeout", "60"},
                                 90s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(same_bytes(bed.dir() / "stock" / "movie", bed.media()));
    CHECK(bed.server_metric("toast_http_bytes_sent_total{title=\"movie\"}") >= static_cast<double>(kTitle));
    // The unsigned torrent's web seed is refused: the same client gets nothing.
    auto plain = toast::testing::http_request(bed.server_port(), "GET", "/torrents/movie.torrent",
                                              {{"Authorization", "Bearer " + token}});
    REQUIRE(plain.status == 200);
    std::ofstream(bed.dir() / "plain.torrent", std::ios::binary) << plain.body;
    std::filesystem::create_directories(bed.dir() / "stock2");
    auto refused = toast::testing::run("/usr/bin/python3",
                                       {STOCK_WEBSEED_PY, (bed.dir() / "plain.torrent").string(),
                                        "--save-dir", (bed.dir() / "stock2").string(), "--timeout", "4"},
                                       30s);
    CHECK(refused.exit_code == 1);
    CHECK(bed.server_metric("toast_access_denied_total{reason=\"missing\"}") > 0);
}
