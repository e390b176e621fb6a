// `toast-client serve`'s command line, parsed purely: argv (after "serve") in, ServeOptions or an error
// naming the option and the bad value out.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/cache_policy.hpp"
#include "client/core/client_options.hpp"
#include "client/core/disk_io_kind.hpp"
#include "toast/common/endpoint.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

struct ServeOptions {
    std::filesystem::path save_dir;   // required: every title, its torrent, its position, the title list
    Endpoint api{"127.0.0.1", 8780};  // --api: the control API and the piece map (loopback only)
    // --listen: the one BitTorrent listen port for every title; "PORT" alone (host "") listens on every
    // interface.
    Endpoint listen{"127.0.0.1", 0};
    std::vector<std::string> servers;     // --server, repeatable: VoD servers after each torrent's url-list
    std::vector<std::string> trackers;    // --tracker, repeatable: added to each torrent's
    std::optional<Bytes> disk_quota;      // --disk-quota: all titles together; unlimited when absent
    std::optional<BitRate> upload_limit;  // --upload-limit: all titles together; unlimited when absent
    std::optional<BitRate> download_limit;
    // Peer connections of the box, every title together (SessionConfig::max_connections); a title has at
    // most the client's own cap (ClientOptions::max_connections, 40) of them. An idle box seeds several
    // titles, and the title it plays must still find room.
    int max_connections = 200;
    DiskIoKind disk_io = DiskIoKind::posix;       // --disk-io
    CachePolicy cache = CachePolicy::lru;         // --cache: what idle boxes keep of the titles they watched
    PickerKind picker = PickerKind::adaptive;     // --picker: every played title's (as the client's)
    ChokerOption choker = ChokerOption::nearest;  // --choker: the session's, with the choker's own slots
    std::string box_id;                           // --box-id; empty: the save dir's, else a new random one
    std::optional<Bytes> push_quota;              // --push-quota: pre-placement on; what assignments may hold
    std::optional<BitRate> push_rate;             // --push-rate: at most this fast (and the server's rate)
    bool upnp = false;                            // --upnp: ask the home router to forward the listen ports
    bool natpmp = false;                          // --natpmp: the same over NAT-PMP
    // The box's credentials in private swarms (ClientOptions has the same): its tracker passkey, its
    // certificate and key signed by the operator's CA, and the SSL listen port (default: --listen's + 1).
    std::optional<std::string> passkey;
    std::filesystem::path ssl_cert;
    std::filesystem::path ssl_key;
    std::optional<std::uint16_t> ssl_listen_port;
    std::string log_level = "info";
    // The operator's server: signed URLs, TLS, QoE reports (as the standalone client's options).
    std::string token;
    std::filesystem::path token_file;
    std::filesystem::path ca_file;
    std::string telemetry;  // URL, "off", or empty: the first server's /telemetry
    std::chrono::nanoseconds telemetry_interval = std::chrono::minutes(5);
};

struct ServeParse {
    std::optional<ServeOptions> options;
    std::filesystem::path config;  // --config FILE: read it, then parse again with its options as the base
    bool help = false;
    std::string error;
};

// Options on the command line override `base` (the config file's, else the defaults). --save-dir is required
// unless the base has one.
ServeParse parse_serve_args(const std::vector<std::string>& args, const ServeOptions& base = {});

// What is wrong across options (a certificate without its key, ...), or "". parse_serve_args checks it
// without --config; with one, the caller checks the options the second parse gives.
std::string serve_options_problem(const ServeOptions& o);

// The SSL listen port in force: --ssl-listen's, else --listen's + 1 (0 when that is 0 or 65535); nullopt
// without a certificate.
std::optional<std::uint16_t> ssl_listen_port_of(const ServeOptions& o);

// The config file's options (deploy/etc/client.json): save_dir, listen, control_listen, servers, trackers,
// disk_quota, upload_limit, download_limit, max_connections, disk_io, log_level, cache, picker, choker,
// box_id, push_quota, push_rate, upnp, natpmp, passkey, ssl_cert, ssl_key, ssl_listen, token, token_file,
// ca_file, telemetry, telemetry_interval. Throws toast::ConfigError naming the field and the value; an
// unknown key is an error.
ServeOptions serve_options_from_config(const nlohmann::json& config);
std::string serve_help_text();

}  // namespace toast::client
