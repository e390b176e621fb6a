// The checks of swarm CAs and box certificates (toast/common/peer_certs.hpp) on certificates made with the
// openssl command line.
#include <catch2/catch.hpp>

#include "test_pki.hpp"
#include "test_support.hpp"
#include "toast/common/peer_certs.hpp"

using namespace toast;
using toast::testing::make_test_ca;
using toast::testing::make_test_cert;
using toast::testing::read_file;
using toast::testing::TempDir;

TEST_CASE("a CA certificate passes, a box certificate or garbage does not", "[common][certs]") {
    TempDir dir;
    auto ca = make_test_ca(dir.path(), "operator");
    auto box = make_test_cert(dir.path(), ca, "box1");
    CHECK(check_ca_certificate(read_file(ca.cert)) == std::nullopt);
    CHECK(check_ca_certificate(read_file(box.cert)) ==
          "the certificate is not a CA certificate (no basicConstraints CA:TRUE), so it signs no box");
    CHECK(check_ca_certificate("hello") == "not a PEM certificate (expected -----BEGIN CERTIFICATE-----)");
    CHECK(check_ca_certificate(read_file(ca.key)) ==
          "not a PEM certificate (expected -----BEGIN CERTIFICATE-----)");
}

TEST_CASE("a box certificate must be the key's, signed by the torrent's CA, and name the torrent or *",
          "[common][certs]") {
    TempDir dir;
    auto ca = make_test_ca(dir.path(), "operator");
    auto other_ca = make_test_ca(dir.path(), "other");
    auto star = make_test_cert(dir.path(), ca, "box1");
    auto named = make_test_cert(dir.path(), ca, "box2", "movie.ts");
    auto prefix = make_test_cert(dir.path(), ca, "box3", "movie");
    auto foreign = make_test_cert(dir.path(), other_ca, "box4");
    const auto ca_pem = read_file(ca.cert);

    CHECK(check_peer_certificate(read_file(star.cert), read_file(star.key), ca_pem, "movie.ts") ==
          std::nullopt);
    CHECK(check_peer_certificate(read_file(named.cert), read_file(named.key), ca_pem, "movie.ts") ==
          std::nullopt);
    // libtorrent would accept a prefix of the name; the check does not.
    CHECK(check_peer_certificate(read_file(prefix.cert), read_file(prefix.key), ca_pem, "movie.ts") ==
          "the certificate names \"movie\", \"box3\", not \"*\" or \"movie.ts\" (the torrent's name)");
    CHECK(check_peer_certificate(read_file(prefix.cert), read_file(prefix.key), ca_pem, "") == std::nullopt);
    CHECK(check_peer_certificate(read_file(foreign.cert), read_file(foreign.key), ca_pem, "movie.ts") ==
          "the certificate is not signed by the torrent's CA (unable to get local issuer certificate)");
    CHECK(check_peer_certificate(read_file(star.cert), read_file(named.key), ca_pem, "movie.ts") ==
          "the private key does not belong to the certificate");
    CHECK(check_peer_certificate("x", read_file(star.key), ca_pem, "movie.ts") ==
          "the certificate file holds no PEM certificate");
    CHECK(check_peer_certificate(read_file(star.cert), "x", ca_pem, "movie.ts") ==
          "the key file holds no PEM private key (an encrypted key is not supported)");
    CHECK(check_peer_certificate(read_file(star.cert), read_file(star.key), "x", "movie.ts") ==
          "the torrent's CA (ssl-cert) is not a PEM certificate");
}
