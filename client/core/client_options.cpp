#include "client/core/client_options.hpp"

#include <charconv>
#include <functional>
#include <map>
#include <set>

#include "client/core/tracker_url.hpp"
#include "toast/common/endpoint.hpp"
#include "toast/common/log.hpp"

namespace toast::client {

std::string_view to_string(ClientCommand c) {
    return c == ClientCommand::stream ? "stream" : "play";
}

std::string_view to_string(Behavior b) {
    switch (b) {
        case Behavior::download:
            return "download";
        case Behavior::stream:
            return "stream";
        case Behavior::seed:
            return "seed";
    }
    return "unknown";
}

int default_unchoke_slots(ChokerOption c) {
    return c == ChokerOption::nearest || c == ChokerOption::leader ? 1 : 2;
}

int unchoke_slots_of(const ClientOptions& o) {
    return o.unchoke_slots ? *o.unchoke_slots : default_unchoke_slots(o.choker);
}

std::optional<std::uint16_t> ssl_listen_port_of(const ClientOptions& o) {
    if (o.ssl_cert.empty()) return std::nullopt;
    if (o.ssl_listen_port) return o.ssl_listen_port;
    if (o.listen_port == 0 || o.listen_port == 65535) return std::uint16_t{0};
    return static_cast<std::uint16_t>(o.listen_port + 1);
}

std::string_view to_string(ChokerOption c) {
    switch (c) {
        case ChokerOption::tit_for_tat:
            return "tit-for-tat";
        case ChokerOption::seed:
            return "seed";
        case ChokerOption::nearest:
            return "nearest";
        case ChokerOption::leader:
            return "leader";
    }
    return "tit-for-tat";
}

std::optional<ChokerOption> parse_choker_option(std::string_view text) {
    for (auto c :
         {ChokerOption::tit_for_tat, ChokerOption::seed, ChokerOption::nearest, ChokerOption::leader})
        if (text == to_string(c)) return c;
    return std::nullopt;
}

std::string_view to_string(PlayerKind p) {
    switch (p) {
        case PlayerKind::mpv:
            return "mpv";
        case PlayerKind::vlc:
            return "vlc";
        case PlayerKind::ffplay:
            return "ffplay";
        case PlayerKind::none:
            return "none";
    }
    return "unknown";
}

namespace {

struct OptionSpec {
    std::string_view name;
    bool takes_value;
    bool repeatable;
    // Returns an empty string on success, else what is wrong with the value (the caller adds the option
    // name).
    std::function<std::string(ClientOptions&, const std::string&)> apply;
};

std::string quoted(const std::string& v) {
    return "'" + v + "'";
}

// Bounds of the quantities on the command line, so that no value can reach arithmetic that overflows or a
// setting that makes streaming impossible: bitrates from audio to far beyond 8K video, limits on the same
// scale, an in-order window and a lookahead of at least a second (they are converted to pieces) and a
// start-up buffer that a viewer would wait for.
constexpr BitRate kMinRate{1'000};
constexpr BitRate kMaxRate{100'000'000'000};
constexpr std::chrono::nanoseconds kMinInorderWindow = std::chrono::seconds(1);
constexpr std::chrono::nanoseconds kMaxInorderWindow = std::chrono::hours(24);
constexpr std::chrono::nanoseconds kMaxStartupBuffer = std::chrono::hours(1);
constexpr std::chrono::nanoseconds kMinLookahead = std::chrono::seconds(1);
constexpr std::chrono::nanoseconds kMaxLookahead = std::chrono::hours(24);

std::string rate_outside(const std::string& v) {
    return quoted(v) + " is outside [" + format_bitrate(kMinRate) + ", " + format_bitrate(kMaxRate) + "]";
}

std::string duration_outside(const std::string& v, std::chrono::nanoseconds min,
                             std::chrono::nanoseconds max) {
    return quoted(v) + " is outside [" + format_duration(min) + ", " + format_duration(max) + "]";
}

// Reads `v` into `out` if it is a duration within [min, max]; otherwise says what is wrong with it, giving
// `examples` of valid values (the caller adds the option name).
std::string duration_within(const std::string& v, std::chrono::nanoseconds min, std::chrono::nanoseconds max,
                            std::string_view examples, std::chrono::nanoseconds& out) {
    auto d = parse_duration(v);
    if (!d) return "invalid duration " + quoted(v) + " (e.g. " + std::string(examples) + ")";
    if (*d < min || *d > max) return duration_outside(v, min, max);
    out = *d;
    return "";
}

// --lookahead: a duration, or "none" for the whole title.
std::string apply_lookahead(ClientOptions& o, const std::string& v) {
    if (v == "none") {
        o.lookahead.reset();
        return "";
    }
    std::chrono::nanoseconds d{0};
    auto problem = duration_within(v, kMinLookahead, kMaxLookahead, "60s, or none", d);
    if (problem.empty()) o.lookahead = d;
    return problem;
}

// --listen and --ssl-listen: PORT (every interface: `host` empty) or HOST:PORT.
std::string parse_listen(const std::string& v, std::string& host, std::uint16_t& port) {
    if (v.find(':') != std::string::npos) {
        auto ep = parse_endpoint(v, true);
        if (!ep) return "invalid address " + quoted(v) + " (expected PORT or HOST:PORT)";
        host = ep->host;
        port = ep->port;
        return "";
    }
    unsigned p = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), p);
    if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || p > 65535)
        return "invalid port " + quoted(v) + " (expected 0..65535)";
    host.clear();
    port = static_cast<std::uint16_t>(p);
    return "";
}

bool is_http_url(const std::string& v) {
    auto rest = [&](std::string_view scheme) {
        return v.size() > scheme.size() && std::string_view(v).substr(0, scheme.size()) == scheme;
    };
    return rest("http://") || rest("https://");
}

// Where the title's bytes come from and go.
std::vector<OptionSpec> source_specs() {
    return {
        {"--save-dir", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty directory";
             o.save_dir = v;
             return "";
         }},
        {"--listen", true, false,
         [](ClientOptions& o, const std::string& v) {
             // PORT alone listens on every interface, as BitTorrent clients do; HOST:PORT binds one address.
             return parse_listen(v, o.listen_host, o.listen_port);
         }},
        {"--ssl-listen", true, false,
         [](ClientOptions& o, const std::string& v) {
             std::string host;
             std::uint16_t port = 0;
             auto problem = parse_listen(v, host, port);
             if (problem.empty() && !host.empty())
                 problem = "expected a PORT (it listens on --listen's address), got " + quoted(v);
             o.ssl_listen_port = port;
             return problem;
         }},
        {"--passkey", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (!valid_passkey(v)) return "a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -";
             o.passkey = v;
             return "";
         }},
        {"--ssl-cert", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty file name";
             o.ssl_cert = v;
             return "";
         }},
        {"--ssl-key", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty file name";
             o.ssl_key = v;
             return "";
         }},
        {"--upnp", false, false,
         [](ClientOptions& o, const std::string&) -> std::string {
             o.upnp = true;
             return "";
         }},
        {"--natpmp", false, false,
         [](ClientOptions& o, const std::string&) -> std::string {
             o.natpmp = true;
             return "";
         }},
        {"--server", true, true,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (!is_http_url(v)) return "invalid URL " + quoted(v) + " (expected http://HOST:PORT/...)";
             o.servers.push_back(v);
             return "";
         }},
        {"--bitrate", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto r = parse_bitrate(v);
             if (!r) return "invalid bitrate " + quoted(v) + " (e.g. 2Mbps)";
             if (*r < kMinRate || *r > kMaxRate) return rate_outside(v);
             o.bitrate = *r;
             return "";
         }},
        {"--stats", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty file name";
             o.stats_file = v;
             return "";
         }},
    };
}

// What is asked of peers, and what is kept.
std::vector<OptionSpec> policy_specs() {
    return {
        {"--picker", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto k = parse_picker_kind(v);
             if (!k) return "unknown picker " + quoted(v) + " (expected rarest|inorder|beta|hybrid|adaptive)";
             o.picker = *k;
             return "";
         }},
        {"--inorder-window", true, false,
         [](ClientOptions& o, const std::string& v) {
             return duration_within(v, kMinInorderWindow, kMaxInorderWindow, "15min, 90s", o.inorder_window);
         }},
        {"--lookahead", true, false, apply_lookahead},
        {"--buffer-limit", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto l = BufferLimit::parse(v);
             if (!l)
                 return "invalid limit " + quoted(v) + " (expected BYTES like 512MiB or PERCENT like 25%)";
             o.buffer_limit = *l;
             return "";
         }},
        {"--behavior", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v == "download")
                 o.behavior = Behavior::download;
             else if (v == "stream")
                 o.behavior = Behavior::stream;
             else if (v == "seed")
                 o.behavior = Behavior::seed;
             else
                 return "unknown behavior " + quoted(v) + " (expected download|stream|seed)";
             return "";
         }},
    };
}

// The swarm's rates, choking and connections.
std::vector<OptionSpec> swarm_specs() {
    return {
        {"--upload-limit", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto r = parse_bitrate(v);
             if (!r) return "invalid rate " + quoted(v) + " (e.g. 2Mbps)";
             if (*r < kMinRate || *r > kMaxRate) return rate_outside(v);
             o.upload_limit = *r;
             return "";
         }},
        {"--download-limit", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto r = parse_bitrate(v);
             if (!r) return "invalid rate " + quoted(v) + " (e.g. 8Mbps)";
             if (*r < kMinRate || *r > kMaxRate) return rate_outside(v);
             o.download_limit = *r;
             return "";
         }},
        {"--choker", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto c = parse_choker_option(v);
             if (!c) return "unknown choker " + quoted(v) + " (expected tit-for-tat|seed|nearest|leader)";
             o.choker = *c;
             return "";
         }},
        {"--unchoke-slots", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             int n = 0;
             auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
             if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < 1 || n > 1000)
                 return "invalid slot count " + quoted(v) + " (expected 1..1000)";
             o.unchoke_slots = n;
             return "";
         }},
        {"--max-connections", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             int n = 0;
             auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
             if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < 2 || n > 10000)
                 return "invalid connection count " + quoted(v) + " (expected 2..10000)";
             o.max_connections = n;
             return "";
         }},
    };
}

// The session: disk, seed, startup, trackers and peers.
std::vector<OptionSpec> session_specs() {
    return {
        {"--disk-io", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto kind = parse_disk_io(v);
             if (!kind) return "unknown disk I/O " + quoted(v) + " (expected posix|mmap)";
             o.disk_io = *kind;
             return "";
         }},
        {"--seed", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             std::uint64_t n = 0;
             auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
             if (v.empty() || ec != std::errc() || ptr != v.data() + v.size())
                 return "invalid seed " + quoted(v) + " (expected a non-negative integer)";
             o.seed = n;
             return "";
         }},
        {"--startup-buffer", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto d = parse_duration(v);
             if (!d) return "invalid duration " + quoted(v) + " (e.g. 2s)";
             if (*d > kMaxStartupBuffer)
                 return duration_outside(v, std::chrono::nanoseconds(0), kMaxStartupBuffer);
             o.startup_buffer = *d;
             return "";
         }},
        {"--tracker", true, true,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (!is_http_url(v) && v.rfind("udp://", 0) != 0)
                 return "invalid tracker URL " + quoted(v) + " (expected http://, https:// or udp://)";
             o.trackers.push_back(v);
             return "";
         }},
        {"--operator-peer", true, true,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto ep = parse_peer_endpoint(v);
             if (!ep) return "invalid peer address " + quoted(v) + " (expected IP:PORT, e.g. 10.0.0.5:6881)";
             o.operator_peers.push_back(*ep);
             return "";
         }},
        {"--ask-operator", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v == "when-needed")
                 o.ask_operator = AskOperator::when_needed;
             else if (v == "always")
                 o.ask_operator = AskOperator::always;
             else
                 return "unknown mode " + quoted(v) + " (expected when-needed|always)";
             return "";
         }},
        {"--enable-dht", false, false,
         [](ClientOptions& o, const std::string&) -> std::string {
             o.enable_dht = true;
             return "";
         }},
    };
}

// The log, the local endpoint and the player.
std::vector<OptionSpec> player_specs() {
    return {
        {"--log-level", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (!parse_log_level(v))
                 return "unknown level " + quoted(v) + " (expected trace|debug|info|warn|error|off)";
             o.log_level = v;
             return "";
         }},
        {"--http", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             auto e = parse_endpoint(v, true);
             if (!e) return "invalid endpoint " + quoted(v) + " (expected HOST:PORT)";
             o.http = *e;
             return "";
         }},
        {"--player", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v == "mpv")
                 o.player = PlayerKind::mpv;
             else if (v == "vlc")
                 o.player = PlayerKind::vlc;
             else if (v == "ffplay")
                 o.player = PlayerKind::ffplay;
             else if (v == "none")
                 o.player = PlayerKind::none;
             else
                 return "unknown player " + quoted(v) + " (expected mpv|vlc|ffplay|none)";
             return "";
         }},
        // clang-format 14 splits this last entry's return type (std:: / string) and indents its body past
        // the others.
        // clang-format off
        {"--token", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty() || v.find_first_of(" \t\r\n") != std::string::npos) return "expected a token (v1~...)";
             o.token = v;
             return "";
         }},
        {"--token-file", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty path";
             o.token_file = v;
             return "";
         }},
        {"--ca-file", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty path";
             o.ca_file = v;
             return "";
         }},
        {"--telemetry", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v != "off" && !is_http_url(v)) return "expected an http:// or https:// URL, or off, got " + quoted(v);
             o.telemetry = v;
             return "";
         }},
        {"--telemetry-interval", true, false,
         [](ClientOptions& o, const std::string& v) -> std::string {
             return duration_within(v, std::chrono::seconds(1), std::chrono::hours(24), "5min",
                                    o.telemetry_interval);
         }},
        {"--player-arg", true, true,
         [](ClientOptions& o, const std::string& v) -> std::string {
             if (v.empty()) return "empty argument";
             o.player_args.push_back(v);
             return "";
         }},
        // clang-format on
    };
}

const std::vector<OptionSpec>& specs() {
    static const std::vector<OptionSpec> list = [] {
        std::vector<OptionSpec> all;
        for (auto group : {source_specs(), policy_specs(), swarm_specs(), session_specs(), player_specs()})
            all.insert(all.end(), group.begin(), group.end());
        return all;
    }();
    return list;
}

ParseResult failure(std::string message) {
    ParseResult r;
    r.error = std::move(message);
    return r;
}

}  // namespace

ParseResult parse_client_args(const std::vector<std::string>& args) {
    for (const auto& a : args)
        if (a == "--help" || a == "-h") return ParseResult{std::nullopt, true, ""};
    if (args.empty()) return failure("missing command (expected 'stream' or 'play'; see --help)");

    ClientOptions o;
    if (args[0] == "stream")
        o.command = ClientCommand::stream;
    else if (args[0] == "play")
        o.command = ClientCommand::play;
    else
        return failure("unknown command '" + args[0] + "' (expected 'stream' or 'play')");

    std::set<std::string_view> seen;
    bool have_torrent = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.rfind("--", 0) != 0) {
            if (have_torrent)
                return failure("unexpected argument '" + arg + "' (only one TORRENT is allowed)");
            if (arg.empty()) return failure("TORRENT: empty path");
            o.torrent = arg;
            have_torrent = true;
            continue;
        }
        auto eq = arg.find('=');
        std::string name = arg.substr(0, eq);
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs())
            if (s.name == name) spec = &s;
        if (!spec) return failure("unknown option '" + name + "' (see --help)");
        if (!spec->repeatable && !seen.insert(spec->name).second)
            return failure(name + ": given more than once");
        std::string value;
        if (!spec->takes_value) {
            if (eq != std::string::npos) return failure(name + ": takes no value");
        } else if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
        } else {
            if (i + 1 >= args.size()) return failure(name + ": missing value");
            value = args[++i];
        }
        if (auto problem = spec->apply(o, value); !problem.empty()) return failure(name + ": " + problem);
        seen.insert(spec->name);
    }

    if (!have_torrent) return failure("missing TORRENT (the .torrent file to stream)");
    for (std::string_view required : {"--save-dir", "--listen", "--stats"})
        if (!seen.count(required)) return failure("missing required option " + std::string(required));
    for (std::string_view play_only : {"--player", "--http", "--player-arg"})
        if (o.command == ClientCommand::stream && seen.count(play_only))
            return failure(std::string(play_only) + ": only valid with 'play'");
    if (!o.player_args.empty() && o.player == PlayerKind::none)
        return failure("--player-arg: needs a --player to pass it to");
    if (o.ssl_cert.empty() != o.ssl_key.empty())
        return failure(o.ssl_cert.empty() ? "--ssl-key: needs --ssl-cert (the certificate it belongs to)"
                                          : "--ssl-cert: needs --ssl-key (the certificate's private key)");
    if (seen.count("--ssl-listen") && o.ssl_cert.empty())
        return failure("--ssl-listen: needs --ssl-cert and --ssl-key (only peers with certificates use it)");
    if (o.ssl_listen_port && *o.ssl_listen_port != 0 && *o.ssl_listen_port == o.listen_port)
        return failure("--ssl-listen: port " + std::to_string(o.listen_port) + " is --listen's already");
    if (seen.count("--token") && seen.count("--token-file"))
        return failure("--token-file: give either --token or --token-file, not both");
    ParseResult r;
    r.options = std::move(o);
    return r;
}

}  // namespace toast::client
