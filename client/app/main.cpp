// toast-client: the streaming BitTorrent client's command line. Parsing and the help text live in the core
// (client/core/client_options.hpp); this file wires the parsed options to the engine and turns every
// start-up problem into a message and a non-zero exit.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/core/client_options.hpp"
#include "client/http/player_launcher.hpp"
#include "client/lt/engine.hpp"
#include "client/lt/torrent_file.hpp"
#include "client/service/serve_main.hpp"
#include "toast/common/log.hpp"
#include "toast/common/read_file.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "serve")
        return toast::client::serve_main(std::vector<std::string>(args.begin() + 1, args.end()));
    auto parsed = toast::client::parse_client_args(args);
    if (parsed.help) {
        std::fputs(toast::client::client_help_text().c_str(), stdout);
        return 0;
    }
    if (!parsed.options) {
        std::fprintf(stderr, "toast-client: %s\n(see toast-client --help)\n", parsed.error.c_str());
        return 2;
    }
    const auto& options = *parsed.options;
    const bool play = options.command == toast::client::ClientCommand::play;
    if (play && options.player != toast::client::PlayerKind::none) {
        // A missing player is a usage error, found before anything starts.
        auto name = std::string(to_string(options.player));
        const char* path = std::getenv("PATH");
        if (!toast::client::find_in_path(name, path ? path : "")) {
            std::fprintf(
                stderr,
                "toast-client: --player %s: player '%s' not found in PATH; install it or use --player none\n",
                name.c_str(), name.c_str());
            return 2;
        }
    }
    try {
        toast::init_logging("toast-client", options.log_level);
        auto torrent = toast::client::load_title_torrent(options.torrent);
        toast::client::Engine engine(options, std::move(torrent));
        std::unique_ptr<toast::client::PlayerProcess> player;
        const auto player_log = options.save_dir / "player.log";
        std::filesystem::path ipc_socket;
        if (play) {
            std::printf("toast-client: playing at %s\n", engine.player_url().c_str());
            std::fflush(stdout);
            if (options.player != toast::client::PlayerKind::none) {
                if (options.player == toast::client::PlayerKind::mpv) {
                    ipc_socket = toast::client::mpv_ipc_socket_path(options.save_dir, ::getpid());
                    std::error_code ignored;
                    std::filesystem::remove(ipc_socket, ignored);
                }
                player = std::make_unique<toast::client::PlayerProcess>(
                    toast::client::player_command(options.player, engine.player_url(), engine.resume_time(),
                                                  options.player_args, ipc_socket.string()),
                    player_log);
                engine.watch_player([&player] { return player->running(); });
                if (!ipc_socket.empty()) engine.follow_mpv(ipc_socket);
            }
        }
        auto result = engine.run();
        // The player's own exit (not the one the client causes by stopping it) is the viewer's business:
        // a failure is reported with the player's words.
        std::optional<int> player_status;
        if (player && !player->running()) player_status = player->exit_status();
        if (player) player->stop();
        if (!ipc_socket.empty()) {
            std::error_code ignored;
            std::filesystem::remove(ipc_socket, ignored);
        }
        if (result.exit_code != 0) {
            std::fprintf(stderr, "toast-client: %s\n", result.error.c_str());
            return result.exit_code;
        }
        if (player_status && *player_status != 0) {
            // Its output is only the message's detail: a log that cannot be read leaves it out.
            std::string text;
            try {
                text = toast::read_file(player_log);
            } catch (const toast::FileReadError&) {
            }
            auto message = toast::client::player_failure_message(std::string(to_string(options.player)),
                                                                 *player_status, text);
            std::fprintf(stderr, "toast-client: %s (its output: %s)\n", message.c_str(), player_log.c_str());
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toast-client: %s\n", e.what());
        return 1;
    }
}
