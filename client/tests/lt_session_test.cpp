#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <libtorrent/session.hpp>
#include <libtorrent/settings_pack.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/lt/session_factory.hpp"
#include "client/lt/stats_file.hpp"
#include "lt_test_support.hpp"
#include "test_support.hpp"

namespace lt = libtorrent;
using namespace std::chrono_literals;
using toast::client::ChokerKind;
using toast::client::SessionConfig;
using toast::client::tracker_num_want;

namespace {

struct Transfer {
    std::unique_ptr<lt::session> seed;
    std::unique_ptr<lt::session> leech;
    lt::torrent_handle seed_handle;
    lt::torrent_handle leech_handle;
};

// A seed session (made by `make_seed`) serving one file to a fresh unlimited leecher on 127.0.0.1.
Transfer start_transfer(const toast::testing::TempDir& dir, std::uint64_t file_size,
                        std::unique_ptr<lt::session> seed) {
    std::filesystem::create_directories(dir / "seed");
    std::filesystem::create_directories(dir / "leech");
    toast::testing::write_random_file(dir / "seed" / "title.bin", file_size, 7);
    auto ti = toast::client::testing::make_torrent(dir / "seed" / "title.bin", 64 * 1024);

    Transfer t;
    t.seed = std::move(seed);
    t.seed_handle = toast::client::testing::add_torrent(*t.seed, ti, dir / "seed");
    REQUIRE(toast::client::testing::wait_until([&] { return t.seed_handle.status().is_seeding; }, 10s));

    t.leech = toast::client::make_session(toast::client::make_session_params(SessionConfig{}), nullptr);
    t.leech_handle = toast::client::testing::add_torrent(*t.leech, ti, dir / "leech");
    int seed_port = toast::client::testing::listen_port(*t.seed);
    REQUIRE(seed_port != 0);
    t.leech_handle.connect_peer({lt::make_address("127.0.0.1"), static_cast<std::uint16_t>(seed_port)});
    return t;
}

}  // namespace

TEST_CASE("session settings turn off everything that defeats streaming on a closed testbed",
          "[client][session]") {
    SessionConfig config;
    config.listen_port = 6881;
    config.upload_limit = toast::BitRate(3'200'000);
    auto params = toast::client::make_session_params(config);
    const auto& s = params.settings;
    CHECK(s.get_str(lt::settings_pack::listen_interfaces) == "127.0.0.1:6881");
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_dht));
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_lsd));
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_upnp));
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_natpmp));
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_ip_notifier));
    CHECK(s.get_bool(lt::settings_pack::allow_multiple_connections_per_ip));
    CHECK_FALSE(s.get_bool(lt::settings_pack::close_redundant_connections));
    CHECK(s.get_int(lt::settings_pack::whole_pieces_threshold) == 0);
    CHECK(s.get_int(lt::settings_pack::initial_picker_threshold) == 0);
    CHECK_FALSE(s.get_bool(lt::settings_pack::prioritize_partial_pieces));
    CHECK(s.get_int(lt::settings_pack::upload_rate_limit) == 400'000);
    CHECK(s.get_int(lt::settings_pack::download_rate_limit) == 0);
    CHECK(s.get_int(lt::settings_pack::tick_interval) == 50);
    CHECK(s.get_int(lt::settings_pack::send_buffer_watermark_factor) == 10);
    CHECK(s.get_int(lt::settings_pack::unchoke_slots_limit) == 2);
    CHECK(s.get_int(lt::settings_pack::connections_limit) == 40);
    CHECK(s.get_int(lt::settings_pack::num_want) == 15);
    CHECK(tracker_num_want(2) == 1);
    CHECK(tracker_num_want(100) == 37);
    CHECK(s.get_int(lt::settings_pack::aio_threads) == 2);
    CHECK_FALSE(s.get_bool(lt::settings_pack::send_redundant_have));
}

TEST_CASE("a box's session caps connections for all titles and each title apart", "[client][session]") {
    SessionConfig box;
    box.max_connections = 200;
    box.torrent_connections = 40;
    CHECK(toast::client::torrent_connections_of(box) == 40);
    auto params = toast::client::make_session_params(box);
    CHECK(params.settings.get_int(lt::settings_pack::connections_limit) == 200);
    // num_want follows what one title may connect to, not the box's total.
    CHECK(params.settings.get_int(lt::settings_pack::num_want) == 15);
    // A title never has more than the box.
    box.max_connections = 10;
    CHECK(toast::client::torrent_connections_of(box) == 10);
    CHECK(toast::client::torrent_connections_of(SessionConfig{}) == 40);
}

TEST_CASE("a client holds no more peer connections than its limit", "[client][session][slow]") {
    toast::testing::TempDir dir;
    std::filesystem::create_directories(dir / "hub");
    toast::testing::write_random_file(dir / "hub" / "title.bin", 1 << 20, 7);
    auto ti = toast::client::testing::make_torrent(dir / "hub" / "title.bin", 64 * 1024);
    SessionConfig hub_config;
    hub_config.max_connections = 2;
    auto hub = toast::client::make_session(toast::client::make_session_params(hub_config), nullptr);
    lt::add_torrent_params p;
    p.ti = ti;
    p.save_path = (dir / "hub").string();
    toast::client::prepare_add_torrent_params(p, hub_config.max_connections);
    auto hub_handle = hub->add_torrent(std::move(p));
    REQUIRE(toast::client::testing::wait_until([&] { return hub_handle.status().is_seeding; }, 10s));
    auto hub_port = static_cast<std::uint16_t>(toast::client::testing::listen_port(*hub));
    REQUIRE(hub_port != 0);

    // Five leechers dial the hub one after another. The session alone would take up to its limit plus
    // libtorrent's slack of 10; the torrent's own limit refuses a newcomer, or swaps it for the hub's
    // lowest-ranked peer, so the hub never holds more than 2.
    std::vector<std::unique_ptr<lt::session>> leechers;
    std::vector<lt::torrent_handle> handles;
    int most = 0;
    for (int i = 0; i < 5; ++i) {
        std::filesystem::create_directories(dir / ("l" + std::to_string(i)));
        leechers.push_back(
            toast::client::make_session(toast::client::make_session_params(SessionConfig{}), nullptr));
        handles.push_back(
            toast::client::testing::add_torrent(*leechers.back(), ti, dir / ("l" + std::to_string(i))));
        handles.back().connect_peer({lt::make_address("127.0.0.1"), hub_port});
        toast::client::testing::wait_until(
            [&] {
                most = std::max(most, hub_handle.status().num_peers);
                return false;
            },
            300ms);
    }
    CHECK(toast::client::testing::wait_until(
        [&] {
            most = std::max(most, hub_handle.status().num_peers);
            return hub_handle.status().num_peers == 2;
        },
        5s));
    CHECK(most <= 2);
}

TEST_CASE("the seed choker takes libtorrent's slot limit away so the plugin decides", "[client][session]") {
    SessionConfig config;
    config.choker = ChokerKind::seed;
    auto params = toast::client::make_session_params(config);
    CHECK(params.settings.get_int(lt::settings_pack::unchoke_slots_limit) == -1);
    CHECK(params.settings.get_int(lt::settings_pack::choking_algorithm) ==
          lt::settings_pack::fixed_slots_choker);
}

TEST_CASE("an upload limit holds within 10% between peers on 127.0.0.1", "[client][session][slow]") {
    toast::testing::TempDir dir;
    SessionConfig seed_config;
    seed_config.upload_limit = toast::BitRate(400'000 * 8);  // 400 kB/s
    auto seed = toast::client::make_session(toast::client::make_session_params(seed_config), nullptr);
    auto t = start_transfer(dir, 8 * 1024 * 1024, std::move(seed));
    auto bytes_now = [&] { return t.leech_handle.status().total_payload_download; };
    REQUIRE(toast::client::testing::wait_until([&] { return bytes_now() > 0; }, 5s));
    const auto first_byte = std::chrono::steady_clock::now();
    // Measured from one change of the byte counter to another, so the limiter's quota steps do not bias it.
    auto next_change = [&](std::int64_t from) {
        std::int64_t now_bytes = from;
        toast::client::testing::wait_until(
            [&] {
                now_bytes = bytes_now();
                return now_bytes != from;
            },
            3s);
        return std::make_pair(now_bytes, std::chrono::steady_clock::now());
    };
    // libtorrent's limiter is a token bucket three seconds deep: at first it may let a few seconds' worth of
    // extra bytes through, never more. Past that, measured over six seconds, the rate is the limit.
    std::this_thread::sleep_for(5s);
    auto [start_bytes, start] = next_change(bytes_now());
    std::this_thread::sleep_for(6s);
    auto [end_bytes, end] = next_change(bytes_now());
    double seconds = std::chrono::duration<double>(end - start).count();
    double rate = static_cast<double>(end_bytes - start_bytes) / seconds;
    INFO("measured " << rate << " B/s against a limit of 400000 B/s");
    CHECK(rate > 360'000.0);
    CHECK(rate < 440'000.0);
    double since_first = std::chrono::duration<double>(end - first_byte).count();
    INFO(end_bytes << " bytes in the " << since_first << " s since the first");
    CHECK(static_cast<double>(end_bytes) < 400'000.0 * (since_first + 3.0));
}

TEST_CASE("without the global peer class a loopback peer ignores the upload limit",
          "[client][session][slow]") {
    // The control for the test above: the same limit, but libtorrent's default peer classes.
    toast::testing::TempDir dir;
    SessionConfig seed_config;
    seed_config.upload_limit = toast::BitRate(400'000 * 8);
    auto seed = std::make_unique<lt::session>(toast::client::make_session_params(seed_config));
    auto t = start_transfer(dir, 4 * 1024 * 1024, std::move(seed));
    // 4 MiB at 400 kB/s would take over ten seconds.
    CHECK(toast::client::testing::wait_until([&] { return t.leech_handle.status().is_seeding; }, 5s));
}

TEST_CASE("the stats file is emptied at start, then appended to: a copytruncate rotation leaves no hole",
          "[client][stats]") {
    toast::testing::TempDir dir;
    auto path = dir / "stats.jsonl";
    {
        std::ofstream old(path);
        old << "a line from the run before\n";
    }
    toast::client::StatsFile file(path);
    CHECK(std::filesystem::file_size(path) == 0);
    toast::client::StatsRecord record;
    record.t_ms = 1000;
    const auto line = toast::client::to_json_line(record);
    file.write(record);
    file.write(record);
    CHECK(std::filesystem::file_size(path) == 2 * line.size());
    // What logrotate's copytruncate does: the file is copied away and cut to nothing while the client runs.
    std::filesystem::resize_file(path, 0);
    record.t_ms = 2000;
    file.write(record);
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == toast::client::to_json_line(record));
}
