// The real executable on 127.0.0.1, restarted: the state file keeps the swarms across SIGKILL and SIGTERM,
// a corrupt one is moved aside, a failing save is reported and the tracker keeps serving.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <libtorrent/bdecode.hpp>

#include "test_support.hpp"
#include "toast/common/durable_file.hpp"
#include "tracker/core/registry_state.hpp"
#include "tracker_process.hpp"

using namespace toast::tracker;
using toast::tracker::testing::announce_target;
using toast::tracker::testing::eventually;
using toast::tracker::testing::TrackerProcess;
using namespace std::chrono_literals;
namespace lt = libtorrent;

namespace {

std::string state_config(const std::filesystem::path& state, const std::string& interval) {
    return R"({"state_file": ")" + state.string() + R"(", "state_save_interval": ")" + interval + R"("})";
}

// The ports of the IPv4 peers in a compact announce answer; {0} when it is not one.
std::set<std::uint16_t> peer_ports(const toast::testing::HttpResponse& res) {
    lt::error_code ec;
    auto root =
        lt::bdecode(lt::span<const char>(res.body.data(), static_cast<std::ptrdiff_t>(res.body.size())), ec);
    if (res.status != 200 || ec || root.type() != lt::bdecode_node::dict_t) return {0};
    const auto peers = root.dict_find_string_value("peers");
    std::set<std::uint16_t> out;
    for (std::size_t i = 0; i + 6 <= peers.size(); i += 6) {
        out.insert(static_cast<std::uint16_t>(static_cast<unsigned char>(peers[i + 4]) << 8 |
                                              static_cast<unsigned char>(peers[i + 5])));
    }
    return out;
}

// Peers in the state file now, or -1 when there is none or it does not decode.
long peers_in(const std::filesystem::path& state) {
    if (!std::filesystem::exists(state)) return -1;
    auto decoded = decode_state(toast::testing::read_file(state));
    if (!decoded) return -1;
    long n = 0;
    for (const auto& s : decoded->state.swarms)
        n += static_cast<long>(s.seeders.size() + s.leechers.size());
    return n;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

TEST_CASE("a tracker killed with SIGKILL comes back with the swarm it last saved", "[tracker][restart]") {
    toast::testing::TempDir dir;
    const auto state = dir / "tracker.state";
    const auto config = state_config(state, "1s");
    {
        TrackerProcess first(false, config);
        REQUIRE(first.get(announce_target('r', 1, 7001, 5)).status == 200);
        REQUIRE(first.get(announce_target('r', 2, 7002, 5)).status == 200);
        REQUIRE(eventually([&] { return peers_in(state) == 2; }, 10s));
        CHECK(first.metric("toast_tracker_state_saves_total{result=\"ok\"}") >= 1);
        CHECK(first.metric("toast_tracker_state_saves_total{result=\"failed\"}") == 0);
        CHECK(first.metric("toast_tracker_state_save_seconds") >= 0);
        first.process().kill_hard();
        REQUIRE_FALSE(first.process().running());
    }
    // Killed at any moment, the tracker leaves no save's temporary file behind it, only whole saves.
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        CHECK_FALSE(toast::is_temporary_name(entry.path().filename().string()));

    TrackerProcess second(false, config);
    CHECK(peer_ports(second.get(announce_target('r', 3, 7003, 5))) == std::set<std::uint16_t>{7001, 7002});
    const auto expected = "state: restored 1 swarms, 2 peers from " + state.string() + " (saved ";
    CHECK(eventually([&] { return second.process().stderr_text().find(expected) != std::string::npos; }, 5s));
}

TEST_CASE("SIGTERM saves the swarms before the tracker exits", "[tracker][restart]") {
    toast::testing::TempDir dir;
    const auto state = dir / "tracker.state";
    const auto config = state_config(state, "1h");
    {
        TrackerProcess first(false, config);
        CHECK(eventually(
            [&] {
                return first.process().stderr_text().find("state: no state file at " + state.string() +
                                                          " yet; starting empty") != std::string::npos;
            },
            5s));
        REQUIRE(first.get(announce_target('t', 1, 7001, 5)).status == 200);
        REQUIRE(first.get(announce_target('t', 2, 7002, 0)).status == 200);
        CHECK_FALSE(std::filesystem::exists(state));  // no periodic save within the hour
        REQUIRE(first.process().stop(SIGTERM, 10s) == std::optional<int>(0));
        CHECK(first.process().stderr_text().find("state: saved 1 swarms, 2 peers to " + state.string()) !=
              std::string::npos);
    }
    CHECK(peers_in(state) == 2);

    TrackerProcess second(false, config);
    CHECK(peer_ports(second.get(announce_target('t', 3, 7003, 5))) == std::set<std::uint16_t>{7001, 7002});
    const auto counts = second.http_scrape(*InfoHash::from_bytes(std::string(20, 't')));
    REQUIRE(counts.has_value());
    CHECK(*counts == SwarmCounts{1, 2, 0});
}

TEST_CASE("a corrupt state file is moved aside, and the tracker starts empty and serves",
          "[tracker][restart]") {
    toast::testing::TempDir dir;
    const auto state = dir / "tracker.state";
    const std::string corrupt = R"({"format": "toast-tracker-state", "version": 1, "swarms": [tru)";
    std::ofstream(state) << corrupt;

    TrackerProcess tracker(false, state_config(state, "1h"));
    const auto expected = "state: state file '" + state.string() +
                          "' is not usable: not valid JSON: it ends early (truncated?)";
    REQUIRE(
        eventually([&] { return tracker.process().stderr_text().find(expected) != std::string::npos; }, 5s));
    CHECK(tracker.process().stderr_text().find("; moved it to " + state.string() +
                                               ".bad and starting empty") != std::string::npos);
    CHECK(toast::testing::read_file(state.string() + ".bad") == corrupt);
    CHECK_FALSE(std::filesystem::exists(state));

    CHECK(peer_ports(tracker.get(announce_target('c', 1, 7001, 5))).empty());
    CHECK(peer_ports(tracker.get(announce_target('c', 2, 7002, 5))) == std::set<std::uint16_t>{7001});
    // The next save writes a new file and leaves the bad one alone.
    REQUIRE(tracker.process().stop(SIGTERM, 10s) == std::optional<int>(0));
    CHECK(peers_in(state) == 2);
    CHECK(toast::testing::read_file(state.string() + ".bad") == corrupt);
}

TEST_CASE("a save that fails is reported once with the path and the reason, and the tracker keeps serving",
          "[tracker][restart]") {
    toast::testing::TempDir dir;
    const auto state = dir / "missing" / "tracker.state";
    TrackerProcess tracker(false, state_config(state, "1s"));
    REQUIRE(eventually(
        [&] { return tracker.metric("toast_tracker_state_saves_total{result=\"failed\"}") >= 2; }, 10s));
    const auto message = "state: cannot write state file '" + state.string() + "': No such file or directory";
    CHECK(occurrences(tracker.process().stderr_text(), message) == 1);
    CHECK(tracker.get(announce_target('f', 1, 7001, 5)).status == 200);

    // Once the directory exists, saves work again, and the log says so.
    std::filesystem::create_directory(dir / "missing");
    REQUIRE(eventually([&] { return peers_in(state) == 1; }, 10s));
    CHECK(eventually(
        [&] { return tracker.process().stderr_text().find("failed saves)") != std::string::npos; }, 5s));
    CHECK(tracker.metric("toast_tracker_state_saves_total{result=\"ok\"}") >= 1);
}

TEST_CASE("SIGHUP applies a new state_file and state_save_interval to the next save", "[tracker][restart]") {
    toast::testing::TempDir dir;
    const auto first = dir / "first.state";
    const auto second = dir / "second.state";
    TrackerProcess tracker(false, state_config(first, "1h"));
    REQUIRE(tracker.get(announce_target('h', 1, 7001, 5)).status == 200);

    std::ofstream(tracker.dir() / "tracker.json") << state_config(second, "1s");
    ::kill(tracker.process().pid(), SIGHUP);
    // Due within a second of the reload, not at the end of the hour armed before it.
    REQUIRE(eventually([&] { return peers_in(second) == 1; }, 10s));
    const auto err = tracker.process().stderr_text();
    CHECK(err.find("state_file: " + first.string() + " -> " + second.string() +
                   " (not read; the next save writes there)") != std::string::npos);
    CHECK(err.find("state_save_interval: 1h -> 1s") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(first));
}
