// toast-server: the VoD server's command line. Subcommands validate the config, ingest and verify titles,
// serve.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "server/core/server_config.hpp"
#include "toast/common/config.hpp"

namespace {

constexpr const char* kUsage =
    "usage: toast-server --config CONFIG <command> [args]\n"
    "commands:\n"
    "  check    validate the configuration and exit\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "toast-server: %s\n%s", message.c_str(), kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string config_path;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (args[i] == "--config") {
            if (i + 1 >= args.size()) return usage_error("--config needs a file");
            config_path = args[++i];
        } else {
            rest.push_back(args[i]);
        }
    }
    if (config_path.empty()) return usage_error("--config CONFIG is required");
    if (rest.empty()) return usage_error("no command given");
    try {
        auto config = toast::server::load_server_config_file(config_path);
        if (rest[0] == "check") {
            std::printf("config OK: %zu disks, policy %s, listen %s\n", config.disks.size(),
                        std::string(to_string(config.policy)).c_str(), config.listen.to_string().c_str());
            return 0;
        }
        return usage_error("unknown command '" + rest[0] + "'");
    } catch (const toast::ConfigError& e) {
        std::fprintf(stderr, "toast-server: %s\n", e.what());
        return 1;
    }
}
