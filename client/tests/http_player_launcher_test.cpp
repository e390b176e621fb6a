#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A process that has exited but whose new parent has not reaped it yet (state Z) counts as gone.
bool exited(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
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

TEST_CASE(
    "the user's player arguments come after the client's and before the URL, and mpv gets its IPC socket",
    "[client][http][player]") {
    const std::string url = "http://127.0.0.1:9/m.ts";
    CHECK(player_command(PlayerKind::mpv, url, 2'000ms, {"--vo=null", "--ao=null"}, "/tmp/s.sock") ==
          std::vector<std::string>{"mpv", "--force-window=yes", "--start=2.0",
                                   "--input-ipc-server=/tmp/s.sock", "--vo=null", "--ao=null", url});
    CHECK(player_command(PlayerKind::vlc, url, 0ms, {"--intf=dummy"}) ==
          std::vector<std::string>{"vlc", "--play-and-exit", "--intf=dummy", url});
    CHECK(player_command(PlayerKind::none, url, 0ms, {"x"}).empty());
}

TEST_CASE("mpv's IPC socket lives in the save directory unless that path is too long",
          "[client][http][player]") {
    CHECK(mpv_ipc_socket_path("/srv/toast", 42) == "/srv/toast/mpv-ipc.sock");
    auto long_dir = "/srv/" + std::string(120, 'd');
    CHECK(mpv_ipc_socket_path(long_dir, 42) ==
          std::filesystem::temp_directory_path() / "toast-client-42-mpv.sock");
}

TEST_CASE("a player's failure is reported with its status and its own last words", "[client][http][player]") {
    CHECK(
        player_failure_message("vlc", 1,
                               "VLC media player 3.0.18 Vetinari (revision 3.0.13-8-g41878ff4f2)\n"
                               "VLC is not supposed to be run as root. Sorry.\n"
                               "If you need to use real-time priorities and/or privileged TCP ports\n"
                               "you can use vlc-wrapper (make sure it is Set-UID root and\n\n") ==
        "player 'vlc' exited with status 1: VLC is not supposed to be run as root. Sorry. | If you need to "
        "use "
        "real-time priorities and/or privileged TCP ports | you can use vlc-wrapper (make sure it is Set-UID "
        "root and");
    CHECK(player_failure_message("mpv", 2, "") == "player 'mpv' exited with status 2");
    CHECK(player_failure_message("mpv", 128 + 11, "bye\x1b[0m\r\n") ==
          "player 'mpv' was killed by signal 11: bye?[0m");
    auto long_line = player_failure_message("mpv", 1, std::string(5000, 'x'));
    CHECK(long_line.size() < 700);
}

TEST_CASE("a player that cannot be executed is a clear error", "[client][http][player]") {
    toast::testing::TempDir d;
    std::ofstream(d / "broken") << "#!/no/such/interpreter\n";
    ::chmod((d / "broken").c_str(), 0755);
    CHECK_THROWS_WITH(PlayerProcess({(d / "broken").string(), "http://x"}, d / "player.log"),
                      "cannot start player '" + (d / "broken").string() + "': No such file or directory");
    CHECK_THROWS_WITH(
        PlayerProcess({(d / "broken").string()}, d / "no-dir" / "player.log"),
        Catch::StartsWith("cannot write the player's log " + (d / "no-dir" / "player.log").string()));
}

TEST_CASE("a client that dies takes its player with it", "[client][http][player]") {
    toast::testing::TempDir d;
    write_script(d / "player", "echo $$ > \"$1\"; exec sleep 30");
    const auto pid_file = d / "player.pid";
    // The client: a child process that starts the player and is then killed without cleaning up.
    pid_t client = ::fork();
    if (client == 0) {
        try {
            PlayerProcess p({(d / "player").string(), pid_file.string()}, d / "player.log");
            ::pause();
        } catch (...) {
        }
        ::_exit(1);
    }
    REQUIRE(client > 0);
    pid_t player = 0;
    for (int i = 0; i < 250 && player == 0; ++i) {
        std::ifstream in(pid_file);
        if (!(in >> player)) player = 0;
        if (player == 0) std::this_thread::sleep_for(20ms);
    }
    REQUIRE(player > 0);
    CHECK(::kill(player, 0) == 0);
    ::kill(client, SIGKILL);
    int st = 0;
    ::waitpid(client, &st, 0);
    // The orphan is reparented (to init, or a subreaper), so poll with kill(0) until it is gone.
    bool gone = false;
    for (int i = 0; i < 250 && !gone; ++i) {
        gone = ::kill(player, 0) != 0 || exited(player);
        if (!gone) std::this_thread::sleep_for(20ms);
    }
    if (!gone) ::kill(player, SIGKILL);
    CHECK(gone);
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
