// Ingest of titles for private swarms: BEP 27's "private" flag and the peers' CA ("ssl-cert") in the info
// dictionary, from the command line or the config, and a CA file that is not a CA refused before anything
// is written.
#include <catch2/catch.hpp>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/torrent_info.hpp>

#include "store_fixture.hpp"
#include "test_pki.hpp"

using namespace toast;
using namespace toast::server;
using namespace toast::server::testing;
namespace lt = libtorrent;

namespace {

toast::testing::RunResult cli(const std::filesystem::path& config, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config.string()});
    return toast::testing::run(TOAST_SERVER_BIN, args, std::chrono::seconds(60));
}

struct Torrent {
    std::string bytes;
    lt::bdecode_node root;
    lt::bdecode_node info;
    std::shared_ptr<lt::torrent_info> ti;
};

Torrent read_torrent(const std::filesystem::path& path) {
    Torrent t;
    t.bytes = toast::testing::read_file(path);
    lt::error_code ec;
    t.root =
        lt::bdecode(lt::span<const char>(t.bytes.data(), static_cast<std::ptrdiff_t>(t.bytes.size())), ec);
    REQUIRE_FALSE(ec);
    t.info = t.root.dict_find_dict("info");
    REQUIRE(t.info);
    t.ti = std::make_shared<lt::torrent_info>(t.root, ec);
    REQUIRE_FALSE(ec);
    return t;
}

}  // namespace

TEST_CASE("ingest with --private writes BEP 27's private flag into the info dictionary",
          "[server][ingest][private]") {
    StoreFixture fx(2, "rda");
    auto config = fx.write_config();
    auto media = fx.media("m.bin", 100'000, 4);
    auto r = cli(
        config, {"ingest", "movie", media.string(), "--torrent", fx.path("p.torrent").string(), "--private"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains(", private)"));
    auto priv = read_torrent(fx.path("p.torrent"));
    CHECK(priv.info.dict_find_int_value("private", -1) == 1);
    CHECK(priv.ti->priv());
    CHECK(priv.ti->ssl_cert().empty());

    REQUIRE(cli(config, {"ingest", "movie", media.string(), "--torrent", fx.path("o.torrent").string()})
                .exit_code == 0);
    auto open = read_torrent(fx.path("o.torrent"));
    CHECK(open.info.dict_find_int_value("private", -1) == -1);
    CHECK_FALSE(open.ti->priv());
    // In the info dictionary: a private torrent is another swarm, which no peer can leave the flag out of.
    CHECK(priv.ti->info_hashes().v1 != open.ti->info_hashes().v1);
}

TEST_CASE("the config's private_torrents and peer_ca are every ingest's defaults",
          "[server][ingest][private][ssl]") {
    toast::testing::TempDir pki;
    auto ca = toast::testing::make_test_ca(pki.path(), "operator");
    StoreFixture fx(2, "rda", {{"private_torrents", true}, {"peer_ca", ca.cert.string()}});
    auto config = fx.write_config();
    auto r = cli(config, {"ingest", "movie", fx.media("m.bin", 100'000, 4).string(), "--torrent",
                          fx.path("m.torrent").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains(", private, peers need a certificate of the peer CA)"));
    auto t = read_torrent(fx.path("m.torrent"));
    CHECK(t.ti->priv());
    CHECK(t.info.dict_find_string_value("ssl-cert") == toast::testing::read_file(ca.cert));
    CHECK(t.ti->ssl_cert() == toast::testing::read_file(ca.cert));
}

TEST_CASE(
    "ingest with --peer-ca writes the CA certificate as ssl-cert, and a file that is not a CA is refused",
    "[server][ingest][ssl]") {
    toast::testing::TempDir pki;
    auto ca = toast::testing::make_test_ca(pki.path(), "operator");
    auto box = toast::testing::make_test_cert(pki.path(), ca, "box1");
    StoreFixture fx(2, "rda");
    auto config = fx.write_config();
    auto media = fx.media("m.bin", 100'000, 4);
    const auto out = fx.path("m.torrent");
    auto ok = cli(config, {"ingest", "movie", media.string(), "--torrent", out.string(), "--peer-ca",
                           ca.cert.string()});
    INFO(ok.err);
    REQUIRE(ok.exit_code == 0);
    auto t = read_torrent(out);
    CHECK(t.ti->ssl_cert() == toast::testing::read_file(ca.cert));
    CHECK_FALSE(t.ti->priv());

    struct Case {
        std::vector<std::string> args;
        int code;
        std::string message;
    };
    const std::vector<Case> cases{
        {{"--peer-ca", box.cert.string()},
         1,
         "ingest failed: peer CA " + box.cert.string() +
             ": the certificate is not a CA certificate (no basicConstraints CA:TRUE), so it signs no box"},
        {{"--peer-ca", ca.key.string()},
         1,
         "ingest failed: peer CA " + ca.key.string() +
             ": not a PEM certificate (expected -----BEGIN CERTIFICATE-----)"},
        {{"--peer-ca", (pki.path() / "absent.pem").string()},
         1,
         "ingest failed: peer CA " + (pki.path() / "absent.pem").string() +
             ": cannot be read (No such file or directory)"},
        {{"--peer-ca"}, 2, "--peer-ca needs a value"},
    };
    for (const auto& c : cases) {
        auto args = std::vector<std::string>{"ingest", "other", media.string(), "--torrent",
                                             fx.path("other.torrent").string()};
        args.insert(args.end(), c.args.begin(), c.args.end());
        auto r = cli(config, args);
        INFO(c.message);
        CHECK(r.exit_code == c.code);
        CHECK_THAT(r.err, Catch::Contains(c.message));
        CHECK_FALSE(std::filesystem::exists(fx.path("other.torrent")));
    }
}
