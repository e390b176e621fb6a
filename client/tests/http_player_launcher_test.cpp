#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <csignal>

#include <fstream>
#include <thread>

#include "client/http/player_launcher.hpp"
#include "test_support.hpp"

using namespace toast::client;
using namespace std::chrono_literals;

namespace {

void write_script(const std::filesystem::path& p, const std::string& body, bool executable = true) {
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    ::chmod(p.c_str(), executable ? 0755 : 0644);
}

}  // namespace

TEST_CASE("player commands open the URL, at the resume position when there is one",
          "[client][http][player]") {
    const std::string url = "http://127.0.0.1:9/m.ts";
    CHECK(player_command(PlayerKind::mpv, url, 0ms) ==
          std::vector<std::string>{"mpv", "--force-window=yes", url});
    CHECK(player_command(PlayerKind::mpv, url, 61'250ms) ==
          std::vector<std::string>{"mpv", "--force-window=yes", "--start=61.2", url});
    CHECK(player_command(PlayerKind::vlc, url, 5'000ms) ==
          std::vector<std::string>{"vlc", "--play-and-exit", "--start-time=5.0", url});
    CHECK(player_command(PlayerKind::ffplay, url, 0ms) ==
          std::vector<std::string>{"ffplay", "-autoexit", "-loglevel", "warning", url});
    CHECK(player_command(PlayerKind::ffplay, url, 1'500ms) ==
          std::vector<std::string>{"ffplay", "-autoexit", "-loglevel", "warning", "-ss", "1.5", url});
    CHECK(player_command(PlayerKind::none, url, 0ms).empty());
}

TEST_CASE("players are looked up in PATH, executables only", "[client][http][player]") {
    toast::testing::TempDir a, b;
    write_script(a / "mpv", "exit 0", false);
    write_script(b / "mpv", "exit 0");
    auto path = a.path().string() + ":" + b.path().string();
    CHECK(find_in_path("mpv", path) == b / "mpv");
    CHECK_FALSE(find_in_path("vlc", path));
    CHECK_FALSE(find_in_path("mpv", ""));
    CHECK(find_in_path((b / "mpv").string(), "") == b / "mpv");
}

TEST_CASE("a missing player is a clear error", "[client][http][player]") {
    toast::testing::TempDir d;
    CHECK_THROWS_WITH(PlayerProcess({"no-such-player-xyz", "http://x"}, d / "player.log"),
                      "player 'no-such-player-xyz' not found in PATH; install it or use --player none");
}

TEST_CASE("the player process is watched until it exits, and stopped when still running",
          "[client][http][player]") {
    toast::testing::TempDir d;
    write_script(d / "quick", "echo \"got $1\"; exit 3");
    {
        PlayerProcess p({(d / "quick").string(), "http://x/m.ts"}, d / "quick.log");
        bool exited = false;
        for (int i = 0; i < 250 && !exited; ++i) {
            exited = !p.running();
            if (!exited) std::this_thread::sleep_for(20ms);
        }
        REQUIRE(exited);
        CHECK(p.exit_status() == 3);
    }
    CHECK(toast::testing::read_file(d / "quick.log") == "got http://x/m.ts\n");

    write_script(d / "slow", "exec sleep 30");
    auto before = std::chrono::steady_clock::now();
    PlayerProcess slow({(d / "slow").string()}, d / "slow.log");
    CHECK(slow.running());
    slow.stop(2s);
    CHECK_FALSE(slow.running());
    CHECK(slow.exit_status() == 128 + SIGTERM);
    CHECK(std::chrono::steady_clock::now() - before < 5s);
}
