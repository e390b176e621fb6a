// toast-client against a stock Transmission 3.00 seed (Debian's transmission-daemon), with the real server
// and tracker on 127.0.0.1. Transmission 3.00 leaves cancelled requests unanswered; a client that cancels and
// then waits for the answer is unchoked, interested and gets nothing from it. Exits 77 (skipped) when
// transmission-daemon is not installed (scripts/install-deps.sh installs it).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "swarm_fixture.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using toast::client::testing::read_stats;
using toast::testing::ChildProcess;

namespace {

constexpr std::uint64_t kTitle = 16 * 1024 * 1024;

// transmission-daemon seeding the fixture's title: its own config directory, the title's bytes in its
// download directory, and the torrent dropped into its watch directory (no RPC needed). Peer traffic in
// the clear on 127.0.0.1 only; no DHT, LPD, PEX, uTP or port mapping.
std::unique_ptr<ChildProcess> start_transmission_seed(toast::client::testing::SwarmFixture& f) {
    auto root = f.dir() / "transmission";
    for (auto d : {"config", "data", "watch"})
        std::filesystem::create_directories(root / d);
    std::filesystem::copy_file(f.media(), root / "data" / f.title());
    nlohmann::json settings{
        {"bind-address-ipv4", "127.0.0.1"},
        {"bind-address-ipv6", "::1"},
        {"peer-port", toast::testing::free_tcp_port()},
        {"rpc-enabled", false},
        {"dht-enabled", false},
        {"lpd-enabled", false},
        {"pex-enabled", false},
        {"utp-enabled", false},
        {"port-forwarding-enabled", false},
        {"encryption", 0},  // toast-client speaks in the clear
        {"download-dir", (root / "data").string()},
        {"incomplete-dir-enabled", false},
        {"watch-dir-enabled", true},
        {"watch-dir", (root / "watch").string()},
        {"speed-limit-up-enabled", false},
        {"message-level", 2},
    };
    std::ofstream(root / "config" / "settings.json") << settings.dump(2);
    std::filesystem::copy_file(f.torrent(), root / "watch" / "movie.torrent");
    return std::make_unique<ChildProcess>(
        TRANSMISSION_DAEMON_BIN,
        std::vector<std::string>{"--foreground", "--config-dir", (root / "config").string()}, f.logs());
}

}  // namespace

TEST_CASE("a client downloads most of the title from a Transmission 3.00 seed, not from the server",
          "[client][interop]") {
    toast::client::testing::SwarmFixture f;
    toast::testing::write_random_file(f.dir() / "movie.ts", kTitle, 12);
    // 1 Mbps: the title plays for about 134 s, so the server is needed only for the first seconds
    // (Transmission unchokes a new peer at its next 10 s rechoke) and the rest is the seed's to give.
    f.ingest("movie.ts", f.dir() / "movie.ts", "1000000");
    f.start_tracker();
    f.start_server();
    auto seed = start_transmission_seed(f);
    INFO("transmission log: " << f.logs().string());
    REQUIRE(f.wait_for_seeders(1, 30s));

    auto client = f.start_client("stream", "c1", {"--behavior", "download", "--log-level", "info"});
    auto status = client->wait(90s);
    INFO(client->stderr_text());
    REQUIRE(status);
    REQUIRE(*status == 0);
    auto lines = read_stats(f.stats("c1"));
    REQUIRE(!lines.empty());
    const auto& s = lines.back();
    REQUIRE(s.event == "summary");
    CHECK(s.completed);
    CHECK(toast::testing::read_file(f.data("c1")) == toast::testing::read_file(f.media()));
    INFO("from the seed " << s.bytes_from_peers << ", from the server " << s.bytes_from_server);
    // Measured: 13.6-13.9 MB of 16.8 MB from the seed in 16-18 s; before, 0-5 MB and then 0 B/s.
    CHECK(s.bytes_from_peers >= kTitle * 6 / 10);
    CHECK(s.bytes_server_useful <= kTitle * 4 / 10);
    CHECK(s.t_ms < 60'000);
    CHECK(seed->stop(SIGTERM, 10s));
}

int main(int argc, char** argv) {
    if (std::string(TRANSMISSION_DAEMON_BIN).empty()) {
        std::puts("transmission-daemon is not installed (scripts/install-deps.sh installs it): skipped");
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
