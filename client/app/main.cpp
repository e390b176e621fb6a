// toast-client: the streaming BitTorrent client's command line. Parsing and the help text live in the core
// (client/core/client_options.hpp); this file wires the parsed options to the engine and turns every
// start-up problem into a message and a non-zero exit.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "client/core/client_options.hpp"
#include "client/lt/engine.hpp"
#include "client/lt/torrent_file.hpp"
#include "toast/common/log.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
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
    if (options.command != toast::client::ClientCommand::stream) {
        std::fprintf(stderr, "toast-client: the '%s' command is not available in this build; use 'stream'\n",
                     std::string(to_string(options.command)).c_str());
        return 2;
    }
    try {
        toast::init_logging("toast-client", options.log_level);
        auto torrent = toast::client::load_title_torrent(options.torrent);
        toast::client::Engine engine(options, std::move(torrent));
        auto result = engine.run();
        if (result.exit_code != 0) std::fprintf(stderr, "toast-client: %s\n", result.error.c_str());
        return result.exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toast-client: %s\n", e.what());
        return 1;
    }
}
