// Stock libtorrent sessions find each other only through toast-tracker and complete a download, over HTTP
// and over UDP; scrape counts follow the transfer. DHT, LSD, UPnP and NAT-PMP are off, so the tracker is
// the only way the two sessions can learn about each other.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include <libtorrent/alert_types.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/create_torrent.hpp>
#include <libtorrent/error_code.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/settings_pack.hpp>
#include <libtorrent/torrent_info.hpp>

#include "libtorrent_support.hpp"
#include "test_support.hpp"
#include "tracker/core/ids.hpp"
#include "tracker_process.hpp"

using namespace toast::tracker;
using namespace toast::tracker::testing;
using toast::tracker::testing::TrackerProcess;
namespace lt = libtorrent;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kFileSize = 3 * 1024 * 1024 + 12345;  // not a whole number of pieces
constexpr int kPieceSize = 64 * 1024;

std::unique_ptr<lt::session> make_session() {
    return make_lt_session();
}

std::shared_ptr<lt::torrent_info> make_torrent(const fs::path& file) {
    return make_lt_torrent(file, kPieceSize);
}

lt::torrent_handle add(lt::session& s, std::shared_ptr<lt::torrent_info> ti, const fs::path& dir,
                       const std::string& tracker, lt::torrent_flags_t extra) {
    return add_lt_torrent(s, std::move(ti), dir, tracker, extra);
}

// The scenario shared by the HTTP and UDP tests: a seed and a leecher that can only meet through the
// tracker at `url`; `scrape` reads the swarm's counts from the tracker.
void download_through_tracker(const std::string& url,
                              const std::function<std::optional<SwarmCounts>(const InfoHash&)>& scrape,
                              lt::session& seed, lt::session& leecher, AlertPump& pump) {
    toast::testing::TempDir dir;
    fs::create_directories(dir / "seed");
    fs::create_directories(dir / "leech");
    const auto original = dir / "seed" / "movie.bin";
    toast::testing::write_random_file(original, kFileSize, 42);
    auto ti = make_torrent(original);
    const InfoHash hash = info_hash_of(*ti);
    const SwarmCounts nobody{};

    CHECK(scrape(hash) == std::optional<SwarmCounts>(nobody));

    add(seed, ti, dir / "seed", url, lt::torrent_flags::seed_mode);
    REQUIRE(pump.until(
        [&] {
            return scrape(hash) == std::optional<SwarmCounts>(SwarmCounts{1, 0, 0});
        },
        30s));

    // The leecher starts in upload mode (announces, requests nothing), so the tracker sees it incomplete.
    auto leech = add(leecher, ti, dir / "leech", url, lt::torrent_flags::upload_mode);
    INFO(pump.log);
    REQUIRE(pump.until(
        [&] {
            return scrape(hash) == std::optional<SwarmCounts>(SwarmCounts{1, 1, 0});
        },
        30s));

    leech.unset_flags(lt::torrent_flags::upload_mode);
    REQUIRE(pump.until([&] { return leech.status().is_seeding; }, 30s));
    // libtorrent announces "completed" when it finishes: one download, two seeds, no leecher.
    REQUIRE(pump.until(
        [&] {
            return scrape(hash) == std::optional<SwarmCounts>(SwarmCounts{2, 0, 1});
        },
        30s));

    const auto copy = dir / "leech" / "movie.bin";
    REQUIRE(fs::file_size(copy) == kFileSize);
    CHECK(toast::testing::read_file(copy) == toast::testing::read_file(original));
    // Only the tracker could have introduced them: the leecher's peers all came from it.
    std::vector<lt::peer_info> peers;
    leech.get_peer_info(peers);
    for (const auto& p : peers)
        CHECK(p.source & lt::peer_info::tracker);
}

}  // namespace

TEST_CASE("two libtorrent sessions meet through the HTTP tracker and one downloads from the other",
          "[tracker][integration][libtorrent]") {
    TrackerProcess tracker(false, R"({"rate_limit": {"per_second": 0}})");
    auto seed = make_session();
    auto leecher = make_session();
    AlertPump pump{{seed.get(), leecher.get()}, "", nullptr};
    const std::string url = "http://127.0.0.1:" + std::to_string(tracker.http_port()) + "/announce";
    download_through_tracker(
        url, [&](const InfoHash& h) { return tracker.http_scrape(h); }, *seed, *leecher, pump);
    CHECK(tracker.metric("toast_tracker_announces_total{transport=\"http\"}") >= 3);
    CHECK(tracker.process().running());
}

TEST_CASE("two libtorrent sessions meet through the UDP tracker and one downloads from the other",
          "[tracker][integration][libtorrent][udp]") {
    TrackerProcess tracker(true, R"({"rate_limit": {"per_second": 0}})");
    auto seed = make_session();
    auto leecher = make_session();
    int scrape_complete = -1, scrape_incomplete = -1;
    AlertPump pump{{seed.get(), leecher.get()}, "", [&](lt::alert* a) {
                       if (auto* s = lt::alert_cast<lt::scrape_reply_alert>(a)) {
                           scrape_complete = s->complete;
                           scrape_incomplete = s->incomplete;
                       }
                   }};
    const std::string url = "udp://127.0.0.1:" + std::to_string(tracker.udp_port()) + "/announce";
    download_through_tracker(
        url, [&](const InfoHash& h) { return tracker.udp_scrape(h); }, *seed, *leecher, pump);
    CHECK(tracker.metric("toast_tracker_announces_total{transport=\"udp\"}") >= 3);
    CHECK(tracker.metric("toast_tracker_announces_total{transport=\"http\"}") == 0);

    // libtorrent's own UDP scrape reads the same counts.
    auto torrents = seed->get_torrents();
    REQUIRE(torrents.size() == 1);
    torrents[0].scrape_tracker();
    REQUIRE(pump.until([&] { return scrape_complete >= 0; }, 30s));
    CHECK(scrape_complete == 2);
    CHECK(scrape_incomplete == 0);
}

TEST_CASE("libtorrent sees a non-whitelisted torrent refused, and accepted after SIGHUP adds it",
          "[tracker][integration][libtorrent][whitelist]") {
    toast::testing::TempDir dir;
    const auto file = dir / "title.bin";
    toast::testing::write_random_file(file, 200 * 1024, 7);
    auto ti = make_torrent(file);
    const std::string hex = to_hex(info_hash_of(*ti).view());
    const auto list = dir / "whitelist.txt";
    std::ofstream(list) << "# nothing yet\n" << std::string(40, 'e') << "\n";

    TrackerProcess tracker(false,
                           R"({"whitelist": ")" + list.string() + R"(", "rate_limit": {"per_second": 0}})");
    auto session = make_session();
    lt::error_code error;
    std::string reason;
    int replies = 0;
    AlertPump pump{{session.get()}, "", [&](lt::alert* a) {
                       if (auto* e = lt::alert_cast<lt::tracker_error_alert>(a)) {
                           error = e->error;
                           reason = e->failure_reason();
                       }
                       if (lt::alert_cast<lt::tracker_reply_alert>(a)) ++replies;
                   }};
    auto h =
        add(*session, ti, dir.path(), "http://127.0.0.1:" + std::to_string(tracker.http_port()) + "/announce",
            lt::torrent_flags::seed_mode);
    REQUIRE(pump.until([&] { return error.value() != 0; }, 30s));
    // libtorrent 2.0.8 reports a non-200 answer as the HTTP status plus the reason phrase.
    CHECK(error == lt::error_code(403, lt::http_category()));
    CHECK(reason == "info_hash is not served by this tracker");
    CHECK(replies == 0);

    std::ofstream(list) << hex << "\n";
    ::kill(tracker.process().pid(), SIGHUP);
    REQUIRE(pump.until(
        [&] { return tracker.metric("toast_tracker_whitelist_reloads_total{result=\"ok\"}") == 1; }, 10s));
    h.force_reannounce(0, -1, lt::torrent_handle::ignore_min_interval);
    REQUIRE(pump.until([&] { return replies > 0; }, 30s));
    CHECK(tracker.http_scrape(info_hash_of(*ti)) == std::optional<SwarmCounts>(SwarmCounts{1, 0, 0}));
}
