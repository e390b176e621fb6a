// toast-client end to end on 127.0.0.1 with the real toast-server and toast-tracker.
// Titles are small (4-8 MiB, 10-20 s of video) so each scenario runs in well under a minute.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <thread>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>
#include <libtorrent/torrent_info.hpp>
#include <nlohmann/json.hpp>

#include "client/core/stats.hpp"
#include "lt_range_server.hpp"
#include "lt_test_support.hpp"
#include "swarm_fixture.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using toast::client::StatsRecord;
using toast::client::testing::read_stats;
using toast::testing::ChildProcess;
using toast::testing::TempDir;

namespace {

constexpr std::uint64_t kTitle = 8 * 1024 * 1024;
constexpr const char* kBitrate = "3355443";  // 8 MiB plays for 20 s

StatsRecord summary_of(const std::filesystem::path& path) {
    auto lines = read_stats(path);
    REQUIRE(!lines.empty());
    REQUIRE(lines.back().event == "summary");
    return lines.back();
}

bool same_bytes(const std::filesystem::path& a, const std::filesystem::path& b) {
    return toast::testing::read_file(a) == toast::testing::read_file(b);
}

std::uint64_t allocated_bytes(const std::filesystem::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return 0;
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

// The VoD server with one ingested title (random bytes), the tracker, and clients started against them.
class Testbed : public toast::client::testing::SwarmFixture {
  public:
    explicit Testbed(std::uint64_t title_size = kTitle, const std::string& bitrate = kBitrate) {
        toast::testing::write_random_file(dir() / "media.bin", title_size, 2024);
        ingest("movie", dir() / "media.bin", bitrate);
        start_tracker();
        start_server();
    }

    // A toast-client streaming the title into DIR/name, its stats in DIR/name.stats.
    std::unique_ptr<ChildProcess> client(const std::string& name, std::vector<std::string> extra = {}) {
        extra.insert(extra.begin(), {"--log-level", "warn"});
        return start_client("stream", name, extra);
    }
};

// "c1", "c2", ... built by appending: for "c" + std::to_string(i) GCC 12 gives a false -Wrestrict warning.
std::string viewer_name(int i) {
    std::string name = "c";
    name += std::to_string(i);
    return name;
}

void require_exit_ok(ChildProcess& p, std::chrono::milliseconds limit) {
    auto status = p.wait(limit);
    INFO(p.stderr_text());
    REQUIRE(status);
    REQUIRE(*status == 0);
}

}  // namespace

TEST_CASE("one client without peers plays the whole title from the server without a stall",
          "[client][integration]") {
    Testbed bed;
    auto c = bed.client("c1");
    require_exit_ok(*c, 60s);
    auto s = summary_of(bed.stats("c1"));
    CHECK(s.completed);
    CHECK(s.stalls == 0);
    CHECK(s.bytes_from_peers == 0);
    CHECK(s.bytes_server_useful == kTitle);
    CHECK(s.bytes_server_wasted == 0);
    REQUIRE(s.startup_ms);
    CHECK(*s.startup_ms < 2000);
    CHECK(s.t_ms >= 19'000);  // it played the title (20 s), it did not just download it
    auto lines = read_stats(bed.stats("c1"));
    CHECK(lines.size() >= 18);  // one a second and the summary
    CHECK(same_bytes(bed.data("c1"), bed.media()));
}

TEST_CASE(
    "a seed and four hybrid clients (two on mmap disk I/O) finish byte-identical with no stall and under "
    "half "
    "the unicast load",
    "[client][integration]") {
    Testbed bed;
    auto seed = bed.seed("seed");
    // The scenario is a swarm with a seed in it: start the clients once the tracker knows the seed.
    REQUIRE(bed.wait_for_seeders(1, 15s));
    std::vector<std::unique_ptr<ChildProcess>> clients;
    for (int i = 1; i <= 4; ++i) {
        std::vector<std::string> args{"--picker", "hybrid", "--upload-limit", kBitrate};
        if (i % 2 == 1) args.insert(args.end(), {"--disk-io", "mmap"});
        clients.push_back(bed.client(viewer_name(i), args));
    }
    for (auto& c : clients)
        require_exit_ok(*c, 60s);
    std::uint64_t server_bytes = 0;
    for (int i = 1; i <= 4; ++i) {
        auto name = viewer_name(i);
        auto s = summary_of(bed.stats(name));
        INFO(name);
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        CHECK(same_bytes(bed.data(name), bed.media()));
        server_bytes += s.bytes_from_server;
    }
    INFO("server bytes " << server_bytes << " of a unicast " << 4 * kTitle);
    CHECK(server_bytes < 2 * kTitle);
    REQUIRE(seed->stop(SIGTERM, 10s) == 0);
    auto seed_summary = summary_of(bed.stats("seed"));  // written on SIGTERM
    CHECK(seed_summary.bytes_uploaded > 0);
}

TEST_CASE("a piece a slow peer has sent part of is completed with the rest from the server",
          "[client][integration]") {
    Testbed bed;
    // The seed uploads at a quarter of the bitrate: a piece takes it four piece-times to send, so the
    // client's server fallback keeps reaching pieces the seed has begun. (At half the bitrate, on a loaded
    // machine, a run can end with every piece whole from one side or the other.)
    auto seed = bed.seed("seed", {"--upload-limit", "838860"});
    REQUIRE(bed.wait_for_seeders(1, 15s));
    auto c = bed.client("c1");
    require_exit_ok(*c, 60s);
    auto s = summary_of(bed.stats("c1"));
    CHECK(s.completed);
    CHECK(s.stalls == 0);
    CHECK(same_bytes(bed.data("c1"), bed.media()));
    const auto piece = static_cast<std::uint64_t>(lt::torrent_info(bed.torrent().string()).piece_length());
    const auto from_peers = s.bytes_from_peers - s.bytes_redundant;
    INFO("server " << s.bytes_server_useful << " (wasted " << s.bytes_server_wasted << "), peers "
                   << from_peers << " (redundant " << s.bytes_redundant << "), piece " << piece);
    CHECK(from_peers > kTitle / 8);
    // The server sent the rest of some pieces, not whole ones, and what it sent and what the seed sent
    // add up to the title: the seed's blocks of those pieces were kept, and the server did not send them
    // again. (A block the server sent too may still arrive from the seed: a few blocks over.)
    INFO("pieces the server completed " << s.pieces_mixed << ", blocks left to the seed " << s.blocks_awaited
                                        << " (late " << s.blocks_awaited_late << "), raced "
                                        << s.bytes_redundant_raced);
    CHECK(s.pieces_mixed > 0);
    // The blocks the seed was sending when the server took a piece were left to it: the server's bytes
    // waited for them (held, then written whole) and the file is still byte-identical.
    CHECK(s.blocks_awaited > 0);
    CHECK(s.blocks_awaited_late <= s.blocks_awaited);
    CHECK(s.bytes_server_useful + from_peers >= kTitle);
    CHECK(s.bytes_server_useful + from_peers <= kTitle + 8 * 16 * 1024);
    REQUIRE(seed->stop(SIGTERM, 10s) == 0);
}

TEST_CASE("the --max-connections option bounds a client's peers while the others connect to everyone",
          "[client][integration]") {
    Testbed bed;
    auto seed = bed.seed("seed");
    REQUIRE(bed.wait_for_seeders(1, 15s));
    std::vector<std::unique_ptr<ChildProcess>> clients;
    clients.push_back(bed.client("c1", {"--max-connections", "2"}));
    for (int i = 2; i <= 4; ++i)
        clients.push_back(bed.client(viewer_name(i)));
    for (auto& c : clients)
        require_exit_ok(*c, 60s);
    auto most_peers = [&](const std::string& name) {
        std::uint32_t most = 0;
        for (const auto& line : read_stats(bed.stats(name)))
            most = std::max(most, line.peers);
        return most;
    };
    CHECK(most_peers("c1") <= 2);
    // Uncapped, a client has the seed and at least two of the other three viewers.
    CHECK(std::max({most_peers("c2"), most_peers("c3"), most_peers("c4")}) >= 3);
    CHECK(summary_of(bed.stats("c1")).completed);
    CHECK(same_bytes(bed.data("c1"), bed.media()));
    REQUIRE(seed->stop(SIGTERM, 10s) == 0);
}

TEST_CASE("a client that has every piece tells the tracker at once that it is a seed, and that it leaves",
          "[client][integration]") {
    Testbed bed;
    // Every piece comes from the server (add_piece): libtorrent itself announces nothing then.
    auto c = bed.client("c1", {"--behavior", "seed"});
    const auto until = std::chrono::steady_clock::now() + 45s;
    bool complete = false;
    while (!complete && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(200ms);
        auto lines = read_stats(bed.stats("c1"));
        complete = !lines.empty() && lines.back().completed;
    }
    REQUIRE(complete);
    // The tracker's next regular announce is minutes away; the completed event is sent now.
    CHECK(bed.wait_for_seeders(1, 5s));
    CHECK(c->stop(SIGTERM, 10s) == 0);
    // libtorrent runs on the client's own loop, which runs on after the title stops until libtorrent has
    // said goodbye: the tracker hears event=stopped and forgets the box before it would expire.
    int seeders = -1;
    const auto leave_by = std::chrono::steady_clock::now() + 3s;
    while (seeders != 0 && std::chrono::steady_clock::now() < leave_by) {
        auto res = toast::testing::http_request(bed.tracker_port(), "GET", "/stats");
        if (res.status == 200) seeders = nlohmann::json::parse(res.body)["totals"]["seeders"].get<int>();
        if (seeders != 0) std::this_thread::sleep_for(100ms);
    }
    CHECK(seeders == 0);
}

TEST_CASE(
    "a viewer only the operator's seed can serve fetches ahead from the server, at most 8 s of "
    "video past its need",
    "[client][integration]") {
    Testbed bed;
    // A seed at half the bitrate cannot carry the viewer alone; it has every piece, so libtorrent counts
    // every piece as available. Named as the operator's, it is not a viewer: this one is the swarm's
    // frontier.
    auto seed_port = toast::testing::free_tcp_port();
    auto seed =
        bed.seed("seed", {"--upload-limit", "1677721", "--listen", "127.0.0.1:" + std::to_string(seed_port)});
    REQUIRE(bed.wait_for_seeders(1, 15s));
    auto c =
        bed.client("c1", {"--picker", "hybrid", "--operator-peer", "127.0.0.1:" + std::to_string(seed_port)});
    require_exit_ok(*c, 60s);
    auto lines = read_stats(bed.stats("c1"));
    auto s = lines.back();
    CHECK(s.completed);
    CHECK(s.stalls == 0);
    CHECK(s.pieces_fetched_ahead > 0);
    CHECK(same_bytes(bed.data("c1"), bed.media()));
    // Bounded: the server never ran further ahead of the playhead than the need window (a few seconds)
    // plus the 8 s fetch-ahead window, with a second of slack for the stats' one-second spacing.
    const double rate = 3355443.0 / 8;  // bytes of video per second
    for (const auto& l : lines) {
        INFO("t_ms " << l.t_ms << " playhead " << l.playhead << " from server " << l.bytes_from_server);
        CHECK(static_cast<double>(l.bytes_from_server) <=
              static_cast<double>(l.playhead) + rate * (8 + 6 + 1));
    }
    REQUIRE(seed->stop(SIGTERM, 10s) == 0);
}

TEST_CASE(
    "four viewers and a stock seed the operator did not name: peers carry the title, the VoD server "
    "under 10% of unicast",
    "[client][integration][operator]") {
    Testbed bed;
    // A stock libtorrent seed, unthrottled, that nobody named as the operator's: a viewer like any other.
    std::filesystem::create_directories(bed.save_dir("stock"));
    std::filesystem::copy_file(bed.media(), bed.data("stock"));
    auto port = toast::testing::free_tcp_port();
    ChildProcess stock("/usr/bin/python3",
                       {STOCK_SEED_PY, bed.torrent().string(), "--save-dir", bed.save_dir("stock").string(),
                        "--listen", "127.0.0.1:" + std::to_string(port)},
                       bed.logs());
    REQUIRE(bed.wait_for_seeders(1, 15s));
    std::vector<std::unique_ptr<ChildProcess>> clients;
    for (int i = 1; i <= 4; ++i) {
        clients.push_back(bed.client(viewer_name(i), {"--upload-limit", kBitrate}));
        std::this_thread::sleep_for(1s);
    }
    for (auto& c : clients)
        require_exit_ok(*c, 60s);
    std::uint64_t server_bytes = 0;
    for (int i = 1; i <= 4; ++i) {
        auto name = viewer_name(i);
        auto s = summary_of(bed.stats(name));
        INFO(name << ": " << s.bytes_from_server << " bytes from the server, " << s.bytes_from_peers
                  << " from peers");
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        CHECK(same_bytes(bed.data(name), bed.media()));
        server_bytes += s.bytes_from_server;
    }
    INFO("server bytes " << server_bytes << " of a unicast " << 4 * kTitle);
    CHECK(server_bytes < 4 * kTitle * 10 / 100);
    REQUIRE(stock.stop(SIGTERM, 10s));
}

TEST_CASE("clients keep playing from peers while the server is down and finish after it returns",
          "[client][integration]") {
    Testbed bed;
    // The seed uploads at half the bitrate: the clients need the server all along, and during the outage
    // they can only play from what peers send.
    auto seed = bed.seed("seed", {"--upload-limit", "1677721"});
    std::this_thread::sleep_for(500ms);
    auto c1 = bed.client("c1", {"--upload-limit", kBitrate});
    auto c2 = bed.client("c2", {"--upload-limit", kBitrate});
    std::this_thread::sleep_for(4s);
    bed.stop_server();
    std::this_thread::sleep_for(5s);
    bed.start_server();
    require_exit_ok(*c1, 60s);
    require_exit_ok(*c2, 60s);
    std::uint64_t peer_bytes_in_outage = 0;
    for (auto name : {"c1", "c2"}) {
        INFO(name);
        auto lines = read_stats(bed.stats(name));
        auto s = lines.back();
        CHECK(s.completed);
        CHECK(same_bytes(bed.data(name), bed.media()));
        // During the outage (about 4.5 s to 9.5 s) playback moved on, and peers kept sending.
        auto at = [&](std::int64_t t) {
            for (const auto& r : lines)
                if (r.t_ms >= t) return r;
            return lines.back();
        };
        CHECK(at(9'000).playhead > at(5'000).playhead);
        peer_bytes_in_outage += at(9'000).bytes_from_peers - at(5'000).bytes_from_peers;
    }
    CHECK(peer_bytes_in_outage > 0);
    // Somebody needed the server during the outage and retried until it came back.
    auto err = c1->stderr_text() + c2->stderr_text();
    CHECK_THAT(err, Catch::Contains("Connection refused"));
    CHECK_THAT(err, Catch::Contains("retry"));
}

TEST_CASE("a viewer that arrives while the tracker restarts finds the swarm within seconds of its return",
          "[client][integration]") {
    Testbed bed;
    auto seed = bed.seed("seed");
    REQUIRE(bed.wait_for_seeders(1, 15s));
    // The tracker saves its swarms every second: kill it once a save after the seed's announce is on disk.
    const auto announced = std::filesystem::file_time_type::clock::now();
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until &&
           (!std::filesystem::exists(bed.tracker_state()) ||
            std::filesystem::last_write_time(bed.tracker_state()) <= announced))
        std::this_thread::sleep_for(100ms);
    REQUIRE(std::filesystem::last_write_time(bed.tracker_state()) > announced);
    bed.kill_tracker();

    // The viewer's first announce is refused; the tracker is back 3 s later.
    auto c = bed.client("c1", {"--upload-limit", kBitrate});
    std::this_thread::sleep_for(3s);
    bed.start_tracker();
    require_exit_ok(*c, 60s);
    auto lines = read_stats(bed.stats("c1"));
    CHECK(lines.back().completed);
    CHECK(lines.back().stalls == 0);
    CHECK(same_bytes(bed.data("c1"), bed.media()));
    // The restarted tracker still knows the seed, and the viewer asked again within its retry bound (1 s,
    // then 2, 4, 8) instead of libtorrent's 17 s: it had the seed well before the 20 s title ended, and took
    // bytes from it.
    std::optional<std::int64_t> first_peer_ms;
    for (const auto& r : lines)
        if (r.peers > 0 && !first_peer_ms) first_peer_ms = r.t_ms;
    REQUIRE(first_peer_ms);
    CHECK(*first_peer_ms < 12'000);
    CHECK(lines.back().bytes_from_peers > 0);
    CHECK_THAT(c->stderr_text(), Catch::Contains("Connection refused"));
    REQUIRE(seed->stop(SIGTERM, 10s) == 0);
}

TEST_CASE("with a 25% buffer limit stored bytes never exceed the limit and playback completes",
          "[client][integration]") {
    Testbed bed;
    auto seed = bed.seed("seed");
    std::this_thread::sleep_for(500ms);
    auto c = bed.client("c1", {"--buffer-limit", "25%", "--upload-limit", kBitrate});
    // Watch what is really allocated on disk while it plays.
    std::uint64_t max_allocated = 0;
    while (c->running()) {
        max_allocated = std::max(max_allocated, allocated_bytes(bed.data("c1")));
        std::this_thread::sleep_for(100ms);
    }
    require_exit_ok(*c, 1s);
    const std::uint64_t limit = kTitle / 4;
    auto lines = read_stats(bed.stats("c1"));
    for (const auto& r : lines)
        CHECK(r.buffer_bytes <= limit);
    auto s = lines.back();
    CHECK(s.completed);
    CHECK(s.stalls == 0);
    CHECK(s.pieces_had == 32);
    INFO("most allocated on disk: " << max_allocated);
    // On disk too: pieces being written count against the limit with those still stored.
    CHECK(max_allocated <= limit);
    CHECK(max_allocated > 0);
}

TEST_CASE("with a lookahead a client holds no piece further than it past its first missing one",
          "[client][integration]") {
    // 64 pieces of 0.3125 s. The seed sends at twice the bitrate, so it takes a while to hand out the title,
    // and the clients upload slowly to each other, so each takes its pieces from the seed in its own order:
    // the beta picker's, which without a lookahead scatters what a client holds over the title. The seed
    // unchokes both at once (with one slot it would serve only the one further along).
    Testbed bed(2 * kTitle, "6710886");
    auto seed = bed.seed("seed", {"--upload-limit", "13421772", "--unchoke-slots", "2"});
    REQUIRE(bed.wait_for_seeders(1, 15s));
    auto near = bed.client("c1", {"--picker", "beta", "--lookahead", "1s", "--upload-limit", "256kbps"});
    auto whole = bed.client("c2", {"--picker", "beta", "--lookahead", "none", "--upload-limit", "256kbps"});
    require_exit_ok(*near, 60s);
    require_exit_ok(*whole, 60s);
    // The most pieces held past the playhead's contiguous run.
    auto most_scattered = [&](const std::string& who) {
        int most = 0;
        for (const auto& r : read_stats(bed.stats(who))) {
            if (r.event == "summary") continue;
            auto playing = static_cast<int>(r.playhead / (256 * 1024));
            auto contiguous = static_cast<int>(r.buffer_ahead_s / 0.3125);
            most = std::max(most, static_cast<int>(r.pieces_had) - playing - contiguous);
        }
        return most;
    };
    // 1 s is 4 pieces, counted from the first missing piece past the server's zone (at most 3 pieces here).
    CHECK(most_scattered("c1") <= 3 + 4 + 1);
    CHECK(most_scattered("c2") >= 10);
    for (auto who : {"c1", "c2"}) {
        INFO(who);
        auto s = summary_of(bed.stats(who));
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        CHECK(same_bytes(bed.data(who), bed.media()));
    }
}

TEST_CASE("a corrupted server response is rejected by the hash check and fetched again",
          "[client][integration]") {
    TempDir dir;
    constexpr std::uint64_t size = 2 * 1024 * 1024;
    toast::testing::write_random_file(dir / "movie", size, 77);
    auto bytes = toast::client::testing::make_torrent_bytes(dir / "movie", 256 * 1024);
    lt::entry e = lt::bdecode(lt::span<const char>(bytes.data(), static_cast<long>(bytes.size())));
    e["toast"]["bitrate"] = 4'194'304;  // 2 MiB in 4 s
    e["toast"]["title"] = "movie";
    std::vector<char> out;
    lt::bencode(std::back_inserter(out), e);
    std::ofstream(dir / "movie.torrent", std::ios::binary).write(out.data(), static_cast<long>(out.size()));
    auto content = toast::testing::read_file(dir / "movie");
    toast::client::testing::RangeServer server("/titles/movie",
                                               std::vector<char>(content.begin(), content.end()));
    server.corrupt_first = 1;

    std::filesystem::create_directories(dir / "c1");
    auto r =
        toast::testing::run(TOAST_CLIENT_BIN,
                            {"stream", (dir / "movie.torrent").string(), "--save-dir", (dir / "c1").string(),
                             "--listen", "127.0.0.1:0", "--stats", (dir / "c1.stats").string(), "--server",
                             "http://127.0.0.1:" + std::to_string(server.port()), "--log-level", "warn"},
                            30s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("failed the hash check"));
    auto s = summary_of(dir / "c1.stats");
    CHECK(s.completed);
    CHECK(s.stalls == 0);
    // The corrupted piece is wasted; under load libtorrent can also fail the refetch once (it arrives while
    // the failed piece is still being cleared), so whole pieces, at least one, and every request answered.
    CHECK(s.bytes_server_wasted >= 256 * 1024);
    CHECK(s.bytes_server_wasted % (256 * 1024) == 0);
    CHECK(s.bytes_server_useful == size);
    CHECK(server.requests == 8 + static_cast<int>(s.bytes_server_wasted / (256 * 1024)));
    CHECK(toast::testing::read_file(dir / "c1" / "movie") == content);
}

TEST_CASE("an upload limit given to toast-client holds within 10% on loopback", "[client][integration]") {
    TempDir dir;
    constexpr std::uint64_t size = 6 * 1024 * 1024;
    std::filesystem::create_directories(dir / "seed");
    std::filesystem::create_directories(dir / "leech");
    toast::testing::write_random_file(dir / "seed" / "movie", size, 78);
    auto bytes = toast::client::testing::make_torrent_bytes(dir / "seed" / "movie", 256 * 1024);
    std::ofstream(dir / "movie.torrent", std::ios::binary)
        .write(bytes.data(), static_cast<long>(bytes.size()));
    // No server: plain BitTorrent between two clients that find each other through the tracker.
    auto tracker_port = toast::testing::free_tcp_port();
    ChildProcess tracker(TOAST_TRACKER_BIN, {"--listen", "127.0.0.1:" + std::to_string(tracker_port)},
                         dir.path());
    REQUIRE(toast::testing::wait_for_tcp_port(tracker_port, 10s));
    auto announce = "http://127.0.0.1:" + std::to_string(tracker_port) + "/announce";
    ChildProcess seed(
        TOAST_CLIENT_BIN,
        {"stream", (dir / "movie.torrent").string(), "--save-dir", (dir / "seed").string(), "--listen",
         "127.0.0.1:0", "--stats", (dir / "seed.stats").string(), "--bitrate", "2Mbps", "--behavior", "seed",
         "--upload-limit", "3200000", "--tracker", announce, "--log-level", "warn"},
        dir.path());
    std::this_thread::sleep_for(1s);  // the seed checks its file and announces
    ChildProcess leech(TOAST_CLIENT_BIN,
                       {"stream", (dir / "movie.torrent").string(), "--save-dir", (dir / "leech").string(),
                        "--listen", "127.0.0.1:0", "--stats", (dir / "leech.stats").string(), "--bitrate",
                        "2Mbps", "--behavior", "download", "--tracker", announce, "--log-level", "warn"},
                       dir.path());
    require_exit_ok(leech, 40s);
    auto lines = read_stats(dir / "leech.stats");
    REQUIRE(lines.size() >= 8);
    // From the second stats line with data (past connection set-up and the limiter's initial quota) to the
    // last one before the download completed: libtorrent updates its totals once a second, so a long window
    // averages out where those updates fall.
    std::size_t first = 0;
    while (first < lines.size() && lines[first].bytes_from_peers == 0)
        ++first;
    REQUIRE(first + 1 < lines.size());
    const auto& a = lines[first + 1];
    std::size_t last = lines.size() - 1;
    while (last > first + 1 && lines[last].bytes_from_peers >= size)
        --last;
    const auto& b = lines[last];
    REQUIRE(b.t_ms - a.t_ms >= 5000);
    double rate = static_cast<double>(b.bytes_from_peers - a.bytes_from_peers) * 1000.0 /
                  static_cast<double>(b.t_ms - a.t_ms);
    INFO("measured " << rate << " B/s against a limit of 400000 B/s");
    CHECK(rate > 360'000.0);
    CHECK(rate < 440'000.0);
    CHECK(same_bytes(dir / "leech" / "movie", dir / "seed" / "movie"));
}

TEST_CASE("toast-client refuses bad torrents and options with a message and a non-zero exit",
          "[client][integration][cli]") {
    TempDir dir;
    std::ofstream(dir / "junk.torrent") << "not bencode at all";
    toast::testing::write_random_file(dir / "movie", 100'000, 5);
    auto bytes = toast::client::testing::make_torrent_bytes(dir / "movie", 16 * 1024);
    std::ofstream(dir / "plain.torrent", std::ios::binary)
        .write(bytes.data(), static_cast<long>(bytes.size()));
    auto run = [&](const std::string& torrent, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"stream",     (dir / torrent).string(),
                                      "--save-dir", (dir / "out").string(),
                                      "--listen",   "127.0.0.1:0",
                                      "--stats",    (dir / "s.jsonl").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return toast::testing::run(TOAST_CLIENT_BIN, args, 20s);
    };
    auto missing = run("missing.torrent");
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.err, Catch::Contains("missing.torrent: cannot be read"));
    auto junk = run("junk.torrent");
    CHECK(junk.exit_code == 1);
    CHECK_THAT(junk.err, Catch::Contains("not a bencoded torrent"));
    auto no_bitrate = run("plain.torrent");
    CHECK(no_bitrate.exit_code == 1);
    CHECK_THAT(no_bitrate.err, Catch::Contains("--bitrate"));
    auto bad_server = run("plain.torrent", {"--bitrate", "2Mbps", "--server", "ftp://x/y"});
    CHECK(bad_server.exit_code == 2);  // refused by the option parser
    CHECK_THAT(bad_server.err, Catch::Contains("ftp://x/y"));
    auto bad_option = run("plain.torrent", {"--picker", "fastest"});
    CHECK(bad_option.exit_code == 2);
    CHECK_THAT(bad_option.err, Catch::Contains("--picker"));
    CHECK_FALSE(std::filesystem::exists(dir / "s.jsonl"));  // nothing half-written
}
