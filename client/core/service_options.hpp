// `toast-client serve`'s command line, parsed purely: argv (after "serve") in, ServeOptions or an error
// naming the option and the bad value out.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "toast/common/endpoint.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

struct ServeOptions {
    std::filesystem::path save_dir;       // required: every title, its torrent, its position, the title list
    Endpoint api{"127.0.0.1", 8780};      // --api: the control API and the piece map (loopback only)
    Endpoint listen{"127.0.0.1", 0};      // --listen: the one BitTorrent listen port for every title
    std::vector<std::string> servers;     // --server, repeatable: VoD servers after each torrent's url-list
    std::vector<std::string> trackers;    // --tracker, repeatable: added to each torrent's
    std::optional<Bytes> disk_quota;      // --disk-quota: all titles together; unlimited when absent
    std::optional<BitRate> upload_limit;  // --upload-limit: all titles together; unlimited when absent
    std::optional<BitRate> download_limit;
    int max_connections = 40;  // peer connections of the session (SessionConfig::max_connections)
    std::string log_level = "info";
};

struct ServeParse {
    std::optional<ServeOptions> options;
    bool help = false;
    std::string error;
};

ServeParse parse_serve_args(const std::vector<std::string>& args);
std::string serve_help_text();

}  // namespace toast::client
