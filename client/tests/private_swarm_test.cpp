// toast-client in a private swarm (docs/client.md, "Private swarms"), end to end on 127.0.0.1: boxes with
// a passkey and a certificate stream as in an open swarm; a box whose passkey is missing, unknown or revoked
// is told of no peer and gets nothing from them; a box without a fitting certificate does not start.
#include <catch2/catch.hpp>

#include "private_swarm_bed.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;
using toast::testing::ChildProcess;

namespace {

std::unique_ptr<ChildProcess> viewer(PrivateSwarmBed& bed, const std::string& who,
                                     std::vector<std::string> options) {
    options.insert(options.end(), {"--log-level", "warn", "--upload-limit", kPrivateBitrate});
    return bed.start_client("stream", who, options);
}

}  // namespace

TEST_CASE("a private swarm with passkeys and certificates streams with no stall and byte-exact data",
          "[client][integration][private][ssl]") {
    PrivateSwarmBed bed;
    auto seed = bed.seed("seed", bed.credentials("seed"));
    REQUIRE(bed.wait_for_seeders(1, 15s));
    std::vector<std::unique_ptr<ChildProcess>> viewers;
    for (const char* who : {"v1", "v2", "v3"}) {
        viewers.push_back(viewer(bed, who, bed.credentials(who)));
        std::this_thread::sleep_for(1s);
    }
    for (auto& v : viewers)
        require_exit_ok(*v, 60s);
    std::uint64_t from_server = 0;
    for (const char* who : {"v1", "v2", "v3"}) {
        INFO(who);
        auto s = summary_of(bed.stats(who));
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        // The swarm carried the title: peers authenticated each other over TLS.
        CHECK(s.bytes_from_peers > kPrivateTitle / 2);
        from_server += s.bytes_from_server;
        CHECK(toast::testing::read_file(bed.data(who)) == toast::testing::read_file(bed.media()));
    }
    CHECK(from_server < kPrivateTitle * 3 / 2);
    CHECK(bed.tracker_metric("toast_tracker_refused_total{transport=\"http\",reason=\"no_passkey\"}") == 0);
    CHECK(bed.tracker_metric("toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"}") ==
          0);
    CHECK(bed.tracker_metric("toast_tracker_announces_total{transport=\"http\"}") >= 4);
}

TEST_CASE("a box without a passkey, or with an unknown one, is told of no peer and takes nothing from them",
          "[client][integration][private]") {
    PrivateSwarmBed bed;
    auto seed = bed.seed("seed", bed.credentials("seed"));
    REQUIRE(bed.wait_for_seeders(1, 15s));
    // Valid certificates: only the passkey is wrong.
    auto keyless = bed.credentials("v1");
    keyless.erase(keyless.begin(), keyless.begin() + 2);
    auto unknown = bed.credentials("v2");
    unknown[1] = "unknownunknownunknownunknown0000";
    auto a = viewer(bed, "v1", keyless);
    auto b = viewer(bed, "v2", unknown);
    require_exit_ok(*a, 60s);
    require_exit_ok(*b, 60s);
    for (const char* who : {"v1", "v2"}) {
        INFO(who);
        auto s = summary_of(bed.stats(who));
        CHECK(s.bytes_from_peers == 0);
        CHECK(s.stalls == 0);  // the VoD server carried it, as for a box alone
    }
    CHECK(bed.tracker_metric("toast_tracker_refused_total{transport=\"http\",reason=\"no_passkey\"}") >= 1);
    CHECK(bed.tracker_metric("toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"}") >=
          1);
    // Only the seed is in the swarm.
    CHECK(bed.tracker_peers() == 1);
}

TEST_CASE("a revoked passkey leaves the swarm at once and the box's next announce is refused",
          "[client][integration][private]") {
    PrivateSwarmBed bed;
    auto seed = bed.seed("seed", bed.credentials("seed"));
    REQUIRE(bed.wait_for_seeders(1, 15s));
    auto v1 = viewer(bed, "v1", bed.credentials("v1"));
    REQUIRE(eventually([&] { return bed.tracker_peers() == 2; }, 15s));
    bed.revoke("v1");
    REQUIRE(eventually([&] { return bed.tracker_peers() == 1; }, 10s));
    CHECK(bed.tracker_metric("toast_tracker_revoked_peers_removed_total") == 1);
    // Its "completed" announce, when it has every piece, is refused.
    REQUIRE(eventually(
        [&] {
            return bed.tracker_metric(
                       "toast_tracker_refused_total{transport=\"http\",reason=\"revoked_passkey\"}") >= 1;
        },
        40s));
    CHECK(bed.tracker_peers() == 1);
    // A box that joins now is handed the seed only: it never meets the revoked one.
    auto v2 = viewer(bed, "v2", bed.credentials("v2"));
    require_exit_ok(*v2, 60s);
    auto s = summary_of(bed.stats("v2"));
    CHECK(s.stalls == 0);
    CHECK(s.bytes_from_peers > 0);
    require_exit_ok(*v1, 60s);
}

TEST_CASE("a box without a certificate, or with one of another CA, refuses to start and says why",
          "[client][integration][private][ssl]") {
    PrivateSwarmBed bed(true, {"v1"});
    auto other = toast::testing::make_test_ca(bed.dir() / "pki", "other");
    auto foreign = toast::testing::make_test_cert(bed.dir() / "pki", other, "intruder");
    auto named = toast::testing::make_test_cert(bed.dir() / "pki", bed.ca, "wrongname", "other.ts");

    auto none = bed.start_client("stream", "x1", {"--passkey", bed.keys["v1"]});
    auto status = none->wait(20s);
    REQUIRE(status);
    CHECK(*status == 1);
    CHECK(none->stderr_text().find(
              "torrent 'movie' is for a private swarm whose peers authenticate with certificates of the "
              "operator's CA (it carries \"ssl-cert\"): give this box's certificate and key (--ssl-cert, "
              "--ssl-key)") != std::string::npos);

    auto wrong_ca = bed.start_client(
        "stream", "x2", {"--ssl-cert", foreign.cert.string(), "--ssl-key", foreign.key.string()});
    status = wrong_ca->wait(20s);
    REQUIRE(status);
    CHECK(*status == 1);
    CHECK(wrong_ca->stderr_text().find(
              "torrent 'movie': --ssl-cert: the certificate is not signed by the torrent's CA") !=
          std::string::npos);

    auto wrong_name = bed.start_client("stream", "x3",
                                       {"--ssl-cert", named.cert.string(), "--ssl-key", named.key.string()});
    status = wrong_name->wait(20s);
    REQUIRE(status);
    CHECK(*status == 1);
    CHECK(wrong_name->stderr_text().find("not \"*\" or \"movie\" (the torrent's name)") != std::string::npos);

    auto mismatched = bed.start_client(
        "stream", "x4", {"--ssl-cert", bed.certs.at("v1").cert.string(), "--ssl-key", foreign.key.string()});
    status = mismatched->wait(20s);
    REQUIRE(status);
    CHECK(*status == 1);
    CHECK(mismatched->stderr_text().find("the private key does not belong to the certificate") !=
          std::string::npos);
}
