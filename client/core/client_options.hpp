// toast-client's command line, parsed purely: argv in, ClientOptions or an error message naming the option
// and the bad value out. main() prints the error (or the help text) and exits; nothing here touches the
// system.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/buffer_planner.hpp"
#include "client/core/disk_io_kind.hpp"
#include "client/core/piece_policy.hpp"
#include "toast/common/endpoint.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

enum class ClientCommand {
    stream,  // clock-driven StreamWatcher
    play,    // serve the title on --http and launch --player
};

enum class Behavior {
    download,  // leave as soon as every piece is had
    stream,    // leave when playback reaches the end
    seed,      // stay until stopped
};

// Named apart from the adapter's ChokerKind (client/lt/session_factory.hpp), which it maps onto.
enum class ChokerOption { tit_for_tat, seed, nearest, leader };

enum class PlayerKind { mpv, vlc, ffplay, none };

// When the operator's peers are asked for pieces (--ask-operator): only when the other boxes cannot deliver
// in time (OperatorTier), or whenever libtorrent is interested in them, like any other peer.
enum class AskOperator { when_needed, always };

std::string_view to_string(ClientCommand c);
std::string_view to_string(Behavior b);
std::string_view to_string(ChokerOption c);
// "tit-for-tat", "seed", "nearest" or "leader"; none for anything else.
std::optional<ChokerOption> parse_choker_option(std::string_view text);
std::string_view to_string(PlayerKind p);

// A choker's own unchoke slots: one for the nearest-behind choker (its whole upload to the viewer just
// behind) and the leader choker (to the viewer furthest along), two for the others (libtorrent's tit-for-tat
// makes one of them optimistic).
int default_unchoke_slots(ChokerOption c);
struct ClientOptions;
// The unchoke slots in force: --unchoke-slots, else the choker's own.
int unchoke_slots_of(const ClientOptions& o);
// The SSL listen port in force: --ssl-listen's, else --listen's + 1 (0 when that is 0 or 65535); nullopt
// without a certificate.
std::optional<std::uint16_t> ssl_listen_port_of(const ClientOptions& o);

// Defaults are the values written here; the help text states them.
struct ClientOptions {
    ClientCommand command = ClientCommand::stream;
    std::filesystem::path torrent;     // required
    std::filesystem::path save_dir;    // required
    std::uint16_t listen_port = 0;     // required; 0 = any free port
    std::string listen_host;           // --listen HOST:PORT; empty (--listen PORT): every interface
    std::vector<std::string> servers;  // --server, repeatable, tried after the torrent's url-list
    std::optional<BitRate> bitrate;    // overrides the torrent's bitrate
    std::filesystem::path stats_file;  // required
    PickerKind picker = PickerKind::adaptive;
    std::chrono::nanoseconds inorder_window = std::chrono::minutes(15);
    // How far past the first missing piece peers are asked for pieces (SwarmSnapshot::lookahead says why);
    // absent: the whole title. A minute keeps a viewer's peers busy with the pieces it needs next while
    // still fetching well ahead.
    std::optional<std::chrono::nanoseconds> lookahead = std::chrono::minutes(1);
    std::optional<BufferLimit> buffer_limit;  // unlimited when absent
    Behavior behavior = Behavior::stream;
    std::optional<BitRate> upload_limit;    // unlimited when absent
    std::optional<BitRate> download_limit;  // unlimited when absent
    // Nearest-behind: at upload = bitrate a streaming swarm has no upload to spare, since each viewer's
    // pieces come only from the viewers ahead of it, and the one just behind us has the fewest of those.
    // Served by whoever libtorrent ranks first, the front viewers would spend their upload on viewers far
    // behind (who have many sources) and take from the server themselves; a chain from each viewer to the
    // next leaves the server the first viewer's bytes and little more (docs/results.md, the chokers).
    ChokerOption choker = ChokerOption::nearest;
    // Unchoke slots; absent, the choker's own default (unchoke_slots_of). Few: an uploader's upload is split
    // among the viewers it unchokes, and split many ways every piece arrives slowly, so pieces peers are
    // sending reach the server's last moment unfinished. The server then takes them, and what peers had
    // sent of them is upload spent for nothing (bytes_redundant_raced).
    std::optional<int> unchoke_slots;
    // Peer connections at most (SessionConfig::max_connections says why 40).
    int max_connections = 40;
    DiskIoKind disk_io = DiskIoKind::posix;
    std::uint64_t seed = 1;
    std::chrono::nanoseconds startup_buffer{0};  // 0: the first piece is enough
    std::vector<std::string> trackers;           // --tracker, repeatable, added to the torrent's
    // --operator-peer IP:PORT, repeatable: the operator's own peers (server-side), added to the torrent's
    // "operator_peers". Every other peer, seeds included, is a viewer.
    std::vector<Endpoint> operator_peers;
    AskOperator ask_operator = AskOperator::when_needed;
    bool enable_dht = false;
    // UPnP and NAT-PMP: ask the home router to forward the listen port(s) to this box.
    bool upnp = false;
    bool natpmp = false;
    // The box's credentials for private swarms: its tracker passkey, written into every tracker URL of the
    // torrent (client/core/tracker_url.hpp), and its certificate and key (PEM files) signed by the
    // operator's CA, which peers of an SSL torrent must present. Both files or neither.
    std::optional<std::string> passkey;
    std::filesystem::path ssl_cert;
    std::filesystem::path ssl_key;
    // Where SSL torrents' peers connect, on --listen's address(es): --ssl-listen PORT; absent, --listen's
    // port + 1 (any free port when that is 0). Only with a certificate.
    std::optional<std::uint16_t> ssl_listen_port;
    std::string log_level = "info";
    // The operator's server: signed URLs, TLS, QoE reports.
    std::string token;  // --token: every request to the server carries it (renewed before expiry)
    std::filesystem::path token_file;  // --token-file: the token, read at start-up (and written when renewed)
    std::filesystem::path ca_file;     // --ca-file: https:// servers are verified against this CA (PEM)
    std::string telemetry;             // --telemetry URL|off; empty: the first server's /telemetry
    std::chrono::nanoseconds telemetry_interval = std::chrono::minutes(5);
    // play
    Endpoint http{"127.0.0.1", 0};
    PlayerKind player = PlayerKind::none;
    std::vector<std::string> player_args;  // --player-arg, in order, before the URL
};

struct ParseResult {
    std::optional<ClientOptions> options;  // set on success
    bool help = false;                     // --help or -h: print client_help_text() and exit 0
    std::string error;                     // set on failure: names the option and the value
};

// `args` excludes the program name: {"stream", "a.torrent", "--save-dir", "d", ...}. Accepts "--opt value"
// and
// "--opt=value".
ParseResult parse_client_args(const std::vector<std::string>& args);

std::string client_help_text();

}  // namespace toast::client
