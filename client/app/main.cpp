// toast-client: the streaming BitTorrent client's command line. Parsing and the help text live in the core
// (client/core/client_options.hpp); this file wires the parsed options to the engine and turns every
// start-up problem into a message and a non-zero exit.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "client/core/client_options.hpp"
#include "client/http/player_launcher.hpp"
#include "client/lt/engine.hpp"
#include "client/lt/torrent_file.hpp"
#include "client/service/serve_main.hpp"
#include "toast/common/log.hpp"

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
        if (play) {
            std::printf("toast-client: playing at %s\n", engine.player_url().c_str());
            std::fflush(stdout);
            if (options.player != toast::client::PlayerKind::none) {
                player = std::make_unique<toast::client::PlayerProcess>(
                    toast::client::player_command(options.player, engine.player_url(), engine.resume_time()),
                    options.save_dir / "player.log");
                engine.watch_player([&player] { return player->running(); });
            }
        }
        auto result = engine.run();
        if (player) player->stop();
        if (result.exit_code != 0) std::fprintf(stderr, "toast-client: %s\n", result.error.c_str());
        return result.exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toast-client: %s\n", e.what());
        return 1;
    }
}
