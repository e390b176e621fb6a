// Stock libtorrent against toast-tracker under a passkey file: the key written into the tracker URL reaches
// the tracker unchanged in every form libtorrent sends (HTTP path and query, UDP's BEP 41 URLData, the
// scrape URL derived from the announce URL), and a key revoked by SIGHUP stops announcing at once.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>

#include <libtorrent/alert_types.hpp>
#include <libtorrent/error_code.hpp>
#include <libtorrent/settings_pack.hpp>
#include <nlohmann/json.hpp>

#include "libtorrent_support.hpp"
#include "test_support.hpp"
#include "tracker_process.hpp"

using namespace toast::tracker;
using namespace toast::tracker::testing;
namespace lt = libtorrent;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const std::string kSeedKey = "seedseedseedseedseedseedseedseed";
const std::string kLeechKey = "leechleechleechleechleechleech00";

// {seeders, leechers} of one swarm from /stats (which answers loopback without a passkey); {0, 0} when the
// tracker does not know it.
std::pair<int, int> swarm_counts(const TrackerProcess& tracker, const InfoHash& hash) {
    auto stats = nlohmann::json::parse(tracker.stats());
    for (const auto& s : stats["swarms"])
        if (s["info_hash"] == to_hex(hash.view())) return {s["seeders"].get<int>(), s["leechers"].get<int>()};
    return {0, 0};
}

struct Bed {
    Bed() {
        keys = dir / "passkeys";
        std::ofstream(keys) << kSeedKey << " seed box\n" << kLeechKey << " leech box\n";
        const auto file = dir / "title.bin";
        toast::testing::write_random_file(file, 300 * 1024, 11);
        ti = make_lt_torrent(file, 64 * 1024);
        hash = info_hash_of(*ti);
        tracker = std::make_unique<TrackerProcess>(true, R"({"passkeys": ")" + keys.string() +
                                                             R"(", "rate_limit": {"per_second": 0},
                     "access_log": {"path": ")" + (dir / "access.log").string() +
                                                             R"("}})");
    }
    std::string http(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(tracker->http_port()) + path;
    }
    std::string udp(const std::string& path) const {
        return "udp://127.0.0.1:" + std::to_string(tracker->udp_port()) + path;
    }
    toast::testing::TempDir dir;
    fs::path keys;
    std::shared_ptr<lt::torrent_info> ti;
    InfoHash hash;
    std::unique_ptr<TrackerProcess> tracker;
};

struct TrackerEvents {
    int replies = 0;
    lt::error_code error;
    std::string reason;
    int scrape_complete = -1;
    void operator()(lt::alert* a) {
        if (lt::alert_cast<lt::tracker_reply_alert>(a)) ++replies;
        if (auto* e = lt::alert_cast<lt::tracker_error_alert>(a)) {
            error = e->error;
            reason = e->failure_reason();
        }
        if (auto* s = lt::alert_cast<lt::scrape_reply_alert>(a)) scrape_complete = s->complete;
    }
};

}  // namespace

TEST_CASE("libtorrent's announces carry the passkey in the URL path, the query and UDP's URLData",
          "[tracker][integration][libtorrent][passkeys]") {
    Bed bed;
    struct Form {
        std::string name;
        std::string url;
    };
    const std::vector<Form> forms = {
        {"http path", bed.http("/announce/" + kSeedKey)},
        {"http query", bed.http("/announce?passkey=" + kSeedKey)},
        {"udp path (BEP 41 URLData)", bed.udp("/announce/" + kSeedKey)},
        {"udp query (BEP 41 URLData)", bed.udp("/announce?passkey=" + kSeedKey)}};
    for (const auto& form : forms) {
        INFO(form.name);
        auto session = make_lt_session();
        // libtorrent does not scrape a tracker on loopback unless its SSRF rule is off (the scrape path does
        // not start with /announce, http_tracker_connection.cpp:316-345).
        lt::settings_pack no_ssrf;
        no_ssrf.set_bool(lt::settings_pack::ssrf_mitigation, false);
        session->apply_settings(no_ssrf);
        TrackerEvents events;
        AlertPump pump{{session.get()}, "", std::ref(events)};
        auto h = add_lt_torrent(*session, bed.ti, bed.dir.path(), form.url, lt::torrent_flags::seed_mode);
        INFO(pump.log);
        REQUIRE(pump.until([&] { return events.replies > 0 || events.error; }, 30s));
        CHECK_FALSE(events.error);
        CHECK(swarm_counts(*bed.tracker, bed.hash) == std::pair{1, 0});
        if (form.url.rfind("http", 0) == 0) {
            // libtorrent scrapes at the announce URL with "announce" replaced: the key goes along.
            h.scrape_tracker();
            REQUIRE(pump.until([&] { return events.scrape_complete >= 0 || events.error; }, 30s));
            CHECK(events.scrape_complete == 1);
        }
        session->remove_torrent(h);
        REQUIRE(pump.until([&] { return swarm_counts(*bed.tracker, bed.hash) == std::pair{0, 0}; }, 30s));
    }
    CHECK(bed.tracker->metric("toast_tracker_announces_total{transport=\"udp\"}") >= 2);
    // The access log writes every key as a star.
    const auto log = toast::testing::read_file(bed.dir / "access.log");
    CHECK(log.find(kSeedKey) == std::string::npos);
    CHECK(log.find("GET /announce/*?info_hash=") != std::string::npos);
    CHECK(log.find("passkey=*&info_hash=") != std::string::npos);
}

TEST_CASE("libtorrent without a passkey, or with an unknown one, is refused and joins no swarm",
          "[tracker][integration][libtorrent][passkeys]") {
    Bed bed;
    for (const auto& [url, reason] :
         {std::pair{bed.http("/announce"),
                    std::string("this tracker needs a passkey: announce to /announce/PASSKEY")},
          std::pair{bed.http("/announce/unknownunknownunknown"), std::string("unknown passkey")}}) {
        auto session = make_lt_session();
        TrackerEvents events;
        AlertPump pump{{session.get()}, "", std::ref(events)};
        add_lt_torrent(*session, bed.ti, bed.dir.path(), url, lt::torrent_flags::seed_mode);
        REQUIRE(pump.until([&] { return bool(events.error); }, 30s));
        // libtorrent 2.0.8 reports a non-200 answer as the HTTP status plus the reason phrase.
        CHECK(events.error == lt::error_code(403, lt::http_category()));
        CHECK(events.reason == reason);
        CHECK(events.replies == 0);
        CHECK(swarm_counts(*bed.tracker, bed.hash) == std::pair{0, 0});
    }
    auto udp_session = make_lt_session();
    TrackerEvents events;
    AlertPump pump{{udp_session.get()}, "", std::ref(events)};
    add_lt_torrent(*udp_session, bed.ti, bed.dir.path(), bed.udp("/announce"), lt::torrent_flags::seed_mode);
    REQUIRE(pump.until([&] { return bool(events.error); }, 30s));
    // libtorrent 2.0.8 reports a UDP error packet as tracker_failure with an empty message: it passes the
    // whole datagram, which starts with the action's zero bytes, as a C string
    // (udp_tracker_connection.cpp:386-390).
    CHECK(events.error == lt::error_code(lt::errors::tracker_failure));
    CHECK(swarm_counts(*bed.tracker, bed.hash) == std::pair{0, 0});
    CHECK(bed.tracker->metric("toast_tracker_refused_total{transport=\"http\",reason=\"no_passkey\"}") >= 1);
    CHECK(bed.tracker->metric("toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"}") >=
          1);
    CHECK(bed.tracker->metric("toast_tracker_refused_total{transport=\"udp\",reason=\"no_passkey\"}") >= 1);
}

TEST_CASE("a passkey revoked by SIGHUP leaves its swarm at once and its next announce is refused",
          "[tracker][integration][libtorrent][passkeys]") {
    Bed bed;
    auto seed = make_lt_session();
    auto leecher = make_lt_session();
    TrackerEvents seed_events, leech_events;
    AlertPump seed_pump{{seed.get()}, "", std::ref(seed_events)};
    AlertPump leech_pump{{leecher.get()}, "", std::ref(leech_events)};
    auto s = add_lt_torrent(*seed, bed.ti, bed.dir.path(), bed.http("/announce/" + kSeedKey),
                            lt::torrent_flags::seed_mode);
    REQUIRE(seed_pump.until([&] { return seed_events.replies > 0; }, 30s));
    fs::create_directories(bed.dir / "leech");
    auto l = add_lt_torrent(*leecher, bed.ti, bed.dir / "leech", bed.http("/announce/" + kLeechKey),
                            lt::torrent_flags::upload_mode);
    REQUIRE(leech_pump.until([&] { return leech_events.replies > 0; }, 30s));
    REQUIRE(swarm_counts(*bed.tracker, bed.hash) == std::pair{1, 1});

    std::ofstream(bed.keys) << kLeechKey << " leech box\n";
    ::kill(bed.tracker->process().pid(), SIGHUP);
    REQUIRE(eventually([&] { return swarm_counts(*bed.tracker, bed.hash) == std::pair{0, 1}; }, 10s));
    CHECK(bed.tracker->metric("toast_tracker_revoked_peers_removed_total") == 1);
    CHECK(bed.tracker->process().stderr_text().find("1 revoked, 1 peers removed") != std::string::npos);

    s.force_reannounce(0, -1, lt::torrent_handle::ignore_min_interval);
    REQUIRE(seed_pump.until([&] { return bool(seed_events.error); }, 30s));
    CHECK(seed_events.error == lt::error_code(403, lt::http_category()));
    CHECK(seed_events.reason == "passkey revoked");
    CHECK(swarm_counts(*bed.tracker, bed.hash) == std::pair{0, 1});
    CHECK(bed.tracker->metric("toast_tracker_refused_total{transport=\"http\",reason=\"revoked_passkey\"}") ==
          1);

    // The box that kept its key still announces; it is handed nobody.
    const int before = leech_events.replies;
    l.force_reannounce(0, -1, lt::torrent_handle::ignore_min_interval);
    REQUIRE(leech_pump.until([&] { return leech_events.replies > before; }, 30s));
    CHECK_FALSE(leech_events.error);
}
