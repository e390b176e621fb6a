// Every credential of a subscriber's box at once, end to end on 127.0.0.1: the server serves only signed
// URLs (a token per box, `toast-server sign`), the tracker admits only passkeys, and peers authenticate with
// certificates of the operator's CA. Boxes holding all three stream as in an open swarm; a box missing any
// one of them gets nothing from where that credential is asked for.
#include <catch2/catch.hpp>

#include "private_swarm_bed.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;
using toast::testing::ChildProcess;

namespace {

const std::string kAccessKeys =
    R"({"access": {"keys": [{"id": "k1", "secret": ")" + std::string(64, 'd') + R"("}]}})";

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::unique_ptr<ChildProcess> box(PrivateSwarmBed& bed, const std::string& who,
                                  const std::vector<std::string>& options) {
    return bed.start_client(
        "stream", who,
        with(options, {"--log-level", "warn", "--upload-limit", kPrivateBitrate, "--telemetry", "off"}));
}

}  // namespace

TEST_CASE("boxes with a signed token, a passkey and a certificate stream a private SSL title with no stall",
          "[client][integration][private][ssl][access]") {
    PrivateSwarmBed bed(true, {"seed", "v1", "v2", "v3"}, kAccessKeys);
    auto seed = bed.seed("seed", with(bed.credentials("seed"), {"--telemetry", "off"}));
    REQUIRE(bed.wait_for_seeders(1, 15s));
    std::vector<std::unique_ptr<ChildProcess>> viewers;
    for (const char* who : {"v1", "v2"}) {
        const auto token = bed.sign({"--subscriber", who, "--scope", "title:movie", "--lifetime", "1h"});
        viewers.push_back(box(bed, who, with(bed.credentials(who), {"--token", token})));
        std::this_thread::sleep_for(1s);
    }
    // Passkey and certificate, but no token: the swarm still serves it, the server does not.
    auto tokenless = box(bed, "v3", bed.credentials("v3"));
    for (auto& v : viewers)
        require_exit_ok(*v, 60s);
    require_exit_ok(*tokenless, 60s);

    std::uint64_t from_server = 0;
    for (const char* who : {"v1", "v2"}) {
        INFO(who);
        auto s = summary_of(bed.stats(who));
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        CHECK(s.bytes_from_peers > kPrivateTitle / 2);
        from_server += s.bytes_from_server;
        CHECK(toast::testing::read_file(bed.data(who)) == toast::testing::read_file(bed.media()));
    }
    const auto t = summary_of(bed.stats("v3"));
    CHECK(t.completed);
    // Its requests to the server were refused (403: the refusal's few bytes are all it read from there).
    CHECK(t.bytes_server_useful == 0);
    CHECK(t.bytes_from_server < 4096);
    CHECK(t.bytes_from_peers >= kPrivateTitle);
    CHECK(toast::testing::read_file(bed.data("v3")) == toast::testing::read_file(bed.media()));

    // The server served the token holders only: every byte it sent for the title went to v1 and v2.
    CHECK(bed.server_metric("toast_access_denied_total{reason=\"missing\"}") >= 1);
    for (const char* reason :
         {"malformed", "unknown_key", "bad_signature", "expired", "revoked", "out_of_scope"})
        CHECK(bed.server_metric(std::string("toast_access_denied_total{reason=\"") + reason + "\"}") == 0);
    const double sent = bed.server_metric("toast_http_bytes_sent_total{title=\"movie\"}");
    CHECK(sent >= static_cast<double>(from_server));
    CHECK(bed.tracker_metric("toast_tracker_refused_total{transport=\"http\",reason=\"no_passkey\"}") == 0);
    CHECK(bed.tracker_metric("toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"}") ==
          0);
}
