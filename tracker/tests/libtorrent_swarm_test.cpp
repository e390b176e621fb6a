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

#include "test_support.hpp"
#include "tracker/core/ids.hpp"
#include "tracker_process.hpp"

using namespace toast::tracker;
using toast::tracker::testing::TrackerProcess;
namespace lt = libtorrent;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kFileSize = 3 * 1024 * 1024 + 12345;  // not a whole number of pieces
constexpr int kPieceSize = 64 * 1024;

std::unique_ptr<lt::session> make_session() {
    lt::settings_pack p;
    p.set_str(lt::settings_pack::listen_interfaces, "127.0.0.1:0");
    p.set_bool(lt::settings_pack::enable_dht, false);
    p.set_bool(lt::settings_pack::enable_lsd, false);
    p.set_bool(lt::settings_pack::enable_upnp, false);
    p.set_bool(lt::settings_pack::enable_natpmp, false);
    p.set_bool(lt::settings_pack::enable_ip_notifier, false);
    p.set_bool(lt::settings_pack::allow_multiple_connections_per_ip, true);
    p.set_bool(lt::settings_pack::enable_incoming_utp, false);
    p.set_bool(lt::settings_pack::enable_outgoing_utp, false);
    p.set_int(lt::settings_pack::alert_mask, lt::alert_category::error | lt::alert_category::tracker |
                                                 lt::alert_category::status | lt::alert_category::storage);
    return std::make_unique<lt::session>(lt::session_params(p));
}

// A v1 torrent for `file` (libtorrent 2.0 makes hybrid torrents by default, which announce twice: once per
// info-hash; v1-only keeps one swarm per torrent on the tracker).
std::shared_ptr<lt::torrent_info> make_torrent(const fs::path& file) {
    lt::file_storage fs;
    lt::add_files(fs, file.string());
    lt::create_torrent t(fs, kPieceSize, lt::create_torrent::v1_only);
    lt::set_piece_hashes(t, file.parent_path().string());
    std::vector<char> buf;
    lt::bencode(std::back_inserter(buf), t.generate());
    return std::make_shared<lt::torrent_info>(buf, lt::from_span);
}

InfoHash info_hash_of(const lt::torrent_info& ti) {
    auto v1 = ti.info_hashes().v1;
    return *InfoHash::from_bytes(std::string_view(v1.data(), 20));
}

lt::torrent_handle add(lt::session& s, std::shared_ptr<lt::torrent_info> ti, const fs::path& dir,
                       const std::string& tracker, lt::torrent_flags_t extra) {
    lt::add_torrent_params atp;
    atp.ti = std::move(ti);
    atp.save_path = dir.string();
    atp.trackers = {tracker};
    atp.flags &= ~(lt::torrent_flags::auto_managed | lt::torrent_flags::paused);
    atp.flags |= extra;
    return s.add_torrent(std::move(atp));
}

// Pops alerts from every session until `done` holds or `timeout` passes; tracker errors are kept for the
// failure message.
struct AlertPump {
    std::vector<lt::session*> sessions;
    std::string log;
    std::function<void(lt::alert*)> on_alert;

    bool until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            if (done()) return true;
            sessions.front()->wait_for_alert(std::chrono::milliseconds(50));
            for (auto* s : sessions) {
                std::vector<lt::alert*> alerts;
                s->pop_alerts(&alerts);
                for (auto* a : alerts) {
                    if (on_alert) on_alert(a);
                    if (lt::alert_cast<lt::tracker_error_alert>(a) ||
                        lt::alert_cast<lt::torrent_error_alert>(a)) {
                        log += a->message() + "\n";
                    }
                }
            }
        }
        return done();
    }
};

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
