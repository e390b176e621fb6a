// Stock clients against a private SSL swarm of Toast boxes: libtorrent's Python binding (with no
// certificate, with one of another CA) and aria2 (which has no SSL torrents at all, given a valid passkey)
// get no byte from a Toast seed; with the operator's certificate the same libtorrent peer, and aria2 in the
// same swarm without the CA, download the whole title, so the harness itself can transfer.
#include <catch2/catch.hpp>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>

#include "private_swarm_bed.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;
using toast::testing::ChildProcess;
namespace lt = libtorrent;

namespace {

constexpr int kPieces = static_cast<int>(kPrivateTitle / (256 * 1024));

// A Toast seed on known ports of 127.0.0.1: the plain one and the SSL one.
struct KnownSeed {
    std::uint16_t port = toast::testing::free_tcp_port();
    std::uint16_t ssl_port = toast::testing::free_tcp_port();
    std::unique_ptr<ChildProcess> process;

    KnownSeed(PrivateSwarmBed& bed, bool ssl) {
        auto args = bed.credentials("seed");
        if (!ssl) args.resize(2);  // the passkey only
        args.insert(args.end(), {"--listen", "127.0.0.1:" + std::to_string(port)});
        if (ssl) args.insert(args.end(), {"--ssl-listen", std::to_string(ssl_port)});
        process = bed.seed("seed", args);
        REQUIRE(bed.wait_for_seeders(1, 15s));
    }
};

// The torrent as a stock client given only the swarm would have it: no url-list (the VoD server's own
// access control is another matter), and the tracker URL with `passkey`. Trackers and url-list are outside
// the info dictionary: the info-hash is the swarm's.
std::filesystem::path swarm_only_torrent(PrivateSwarmBed& bed, const std::string& passkey) {
    auto bytes = toast::testing::read_file(bed.torrent());
    lt::error_code ec;
    auto node =
        lt::bdecode(lt::span<const char>(bytes.data(), static_cast<std::ptrdiff_t>(bytes.size())), ec);
    REQUIRE_FALSE(ec);
    lt::entry e;
    e = node;
    e.dict().erase("url-list");
    e.dict().erase("announce-list");
    e["announce"] = bed.announce_url() + "/" + passkey;
    std::string out;
    lt::bencode(std::back_inserter(out), e);
    const auto path = bed.dir() / "swarm-only.torrent";
    std::ofstream(path, std::ios::binary) << out;
    return path;
}

struct StockResult {
    std::int64_t downloaded = -1;
    int pieces = -1;
    std::string reasons;
};

// ssl_peer.py with `torrent` against the seed's two ports for `seconds`.
StockResult stock_libtorrent(PrivateSwarmBed& bed, const std::filesystem::path& torrent,
                             const KnownSeed& seed, const std::string& who,
                             const std::optional<toast::testing::TestCert>& cert, int seconds) {
    std::filesystem::create_directories(bed.dir() / who);
    std::vector<std::string> args{SSL_PEER_PY,  torrent.string(),
                                  "--save-dir", (bed.dir() / who).string(),
                                  "--peer",     "127.0.0.1:" + std::to_string(seed.port),
                                  "--peer",     "127.0.0.1:" + std::to_string(seed.ssl_port),
                                  "--seconds",  std::to_string(seconds)};
    if (cert) args.insert(args.end(), {"--cert", cert->cert.string(), "--key", cert->key.string()});
    auto r = toast::testing::run("/usr/bin/python3", args, std::chrono::seconds(seconds + 30));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    return {j["downloaded"].get<std::int64_t>(), j["pieces"].get<int>(), j["reasons"].dump()};
}

// aria2c on `torrent` until it has the title or has received nothing for `idle_seconds`; the bytes of the
// title it wrote that match the original, piece by piece.
int aria2_matching_pieces(PrivateSwarmBed& bed, const std::filesystem::path& torrent, int idle_seconds) {
    const auto dir = bed.dir() / "aria2";
    std::filesystem::create_directories(dir);
    const auto port = toast::testing::free_tcp_port();
    auto r = toast::testing::run(
        ARIA2C_BIN,
        {"--dir", dir.string(), "--seed-time=0", "--enable-dht=false", "--enable-dht6=false",
         "--bt-enable-lpd=false", "--enable-peer-exchange=false", "--file-allocation=none",
         "--listen-port=" + std::to_string(port), "--bt-stop-timeout=" + std::to_string(idle_seconds),
         "--summary-interval=0", "--console-log-level=warn", "--check-certificate=false", torrent.string()},
        std::chrono::seconds(idle_seconds + 60));
    INFO(r.out << r.err);
    const auto file = dir / bed.title();
    if (!std::filesystem::exists(file)) return 0;
    const auto got = toast::testing::read_file(file);
    const auto want = toast::testing::read_file(bed.media());
    int matching = 0;
    for (std::size_t at = 0; at + 256 * 1024 <= std::min(got.size(), want.size()); at += 256 * 1024)
        if (got.compare(at, 256 * 1024, want, at, 256 * 1024) == 0) ++matching;
    return matching;
}

}  // namespace

TEST_CASE("stock libtorrent without a certificate or with another CA's gets no byte from a Toast seed",
          "[client][integration][private][ssl][interop]") {
    PrivateSwarmBed bed(true, {"seed", "v1"});
    KnownSeed seed(bed, true);
    auto other = toast::testing::make_test_ca(bed.dir() / "pki", "other");
    auto foreign = toast::testing::make_test_cert(bed.dir() / "pki", other, "intruder");

    // With a valid passkey and without the url-list: only the swarm could give it bytes.
    const auto torrent = swarm_only_torrent(bed, bed.keys["v1"]);
    auto none = stock_libtorrent(bed, torrent, seed, "none", std::nullopt, 10);
    INFO(none.reasons);
    CHECK(none.downloaded == 0);
    // The seed's TLS refused it: a peer must present a certificate.
    CHECK(none.reasons.find("certificate required") != std::string::npos);
    CHECK(none.pieces == 0);
    auto wrong = stock_libtorrent(bed, torrent, seed, "foreign", foreign, 10);
    INFO(wrong.reasons);
    CHECK(wrong.downloaded == 0);
    CHECK(wrong.reasons.find("unknown ca") != std::string::npos);
    CHECK(wrong.pieces == 0);
    // The same peer with a certificate of the operator's CA gets the whole title from the same seed.
    auto good = stock_libtorrent(bed, torrent, seed, "good", bed.certs.at("v1"), 30);
    INFO(good.reasons);
    CHECK(good.pieces == kPieces);
    CHECK(toast::testing::read_file(bed.dir() / "good" / bed.title()) ==
          toast::testing::read_file(bed.media()));
}

TEST_CASE("aria2 with a valid passkey gets no byte from an SSL swarm, and the whole title without the CA",
          "[client][integration][private][ssl][interop]") {
    INFO("aria2c must be installed (scripts/install-deps.sh installs it)");
    REQUIRE_FALSE(std::string(ARIA2C_BIN).empty());
    SECTION("an SSL swarm") {
        PrivateSwarmBed bed(true, {"seed", "v1"});
        KnownSeed seed(bed, true);
        const double announces = bed.tracker_metric("toast_tracker_announces_total{transport=\"http\"}");
        CHECK(aria2_matching_pieces(bed, swarm_only_torrent(bed, bed.keys["v1"]), 10) == 0);
        // aria2 did announce with the passkey and was told of the seed: only TLS kept it out.
        CHECK(bed.tracker_metric("toast_tracker_announces_total{transport=\"http\"}") > announces);
        CHECK(bed.tracker_metric(
                  "toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"}") == 0);
    }
    SECTION("the same private swarm without the CA") {
        PrivateSwarmBed bed(false, {"seed", "v1"});
        KnownSeed seed(bed, false);
        CHECK(aria2_matching_pieces(bed, swarm_only_torrent(bed, bed.keys["v1"]), 20) == kPieces);
    }
}
