#include "client/core/service_options.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include "client/core/tracker_url.hpp"
#include "toast/common/config.hpp"
#include "toast/common/log.hpp"
#include "toast/common/text.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

namespace {

constexpr BitRate kMinRate{1'000};
constexpr BitRate kMaxRate{100'000'000'000};

bool is_loopback(const std::string& host) {
    return host == "::1" || host.rfind("127.", 0) == 0;
}

std::string apply(ServeOptions& o, const std::string& name, const std::string& v) {
    auto quoted = "'" + v + "'";
    if (name == "--save-dir") {
        if (v.empty()) return "must not be empty";
        o.save_dir = v;
    } else if (name == "--listen" && v.find(':') == std::string::npos) {
        // PORT alone: every interface, as BitTorrent clients listen.
        unsigned port = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() || port > 65535)
            return quoted + " is not PORT or HOST:PORT";
        o.listen = Endpoint{"", static_cast<std::uint16_t>(port)};
    } else if (name == "--ssl-listen") {
        unsigned port = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() || port > 65535)
            return quoted + " is not a port (it listens on --listen's address)";
        o.ssl_listen_port = static_cast<std::uint16_t>(port);
    } else if (name == "--passkey") {
        if (!valid_passkey(v)) return "a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -";
        o.passkey = v;
    } else if (name == "--ssl-cert" || name == "--ssl-key") {
        if (v.empty()) return "must not be empty";
        (name == "--ssl-cert" ? o.ssl_cert : o.ssl_key) = v;
    } else if (name == "--upnp" || name == "--natpmp") {
        (name == "--upnp" ? o.upnp : o.natpmp) = true;
    } else if (name == "--api" || name == "--listen") {
        auto e = parse_endpoint(v);
        if (!e) return quoted + " is not HOST:PORT";
        if (name == "--api" && !is_loopback(e->host))
            return quoted + " is not a loopback address: the control API has no authentication";
        (name == "--api" ? o.api : o.listen) = *e;
    } else if (name == "--server") {
        if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0)
            return quoted + " is not an http:// or https:// URL";
        o.servers.push_back(v);
    } else if (name == "--token") {
        if (v.empty() || v.find_first_of(" \t\r\n") != std::string::npos) return "expected a token (v1~...)";
        o.token = v;
    } else if (name == "--token-file" || name == "--ca-file") {
        if (v.empty()) return "must not be empty";
        (name == "--token-file" ? o.token_file : o.ca_file) = v;
    } else if (name == "--telemetry") {
        if (v != "off" && v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0)
            return quoted + " is not an http:// or https:// URL, or off";
        o.telemetry = v;
    } else if (name == "--telemetry-interval") {
        auto d = parse_duration(v);
        if (!d || *d < std::chrono::seconds(1) || *d > std::chrono::hours(24))
            return quoted + " is not a duration from 1s to 24h";
        o.telemetry_interval = *d;
    } else if (name == "--tracker") {
        if (v.empty()) return "must not be empty";
        o.trackers.push_back(v);
    } else if (name == "--disk-quota") {
        auto b = parse_bytes(v);
        if (!b || b->value() == 0) return quoted + " is not a positive size such as 20GiB";
        o.disk_quota = *b;
    } else if (name == "--upload-limit" || name == "--download-limit") {
        auto r = parse_bitrate(v);
        if (!r) return quoted + " is not a rate such as 8Mbps";
        if (*r < kMinRate || *r > kMaxRate)
            return quoted + " is outside [" + format_bitrate(kMinRate) + ", " + format_bitrate(kMaxRate) +
                   "]";
        (name == "--upload-limit" ? o.upload_limit : o.download_limit) = *r;
    } else if (name == "--max-connections") {
        int n = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || end != v.data() + v.size() || n < 2 || n > 10'000)
            return quoted + " is not a whole number in [2, 10000]";
        o.max_connections = n;
    } else if (name == "--disk-io") {
        auto kind = parse_disk_io(v);
        if (!kind) return quoted + " is not a disk I/O (posix, mmap)";
        o.disk_io = *kind;
    } else if (name == "--cache") {
        auto policy = parse_cache_policy(v);
        if (!policy) return quoted + " is not a cache policy (none, lru, popularity)";
        o.cache = *policy;
    } else if (name == "--picker") {
        auto k = parse_picker_kind(v);
        if (!k) return quoted + " is not a picker (rarest, inorder, beta, hybrid, adaptive)";
        o.picker = *k;
    } else if (name == "--choker") {
        auto c = parse_choker_option(v);
        if (!c) return quoted + " is not a choker (nearest, leader, tit-for-tat, seed)";
        o.choker = *c;
    } else if (name == "--box-id") {
        if (!is_box_id(v)) return quoted + " is not a box id (1 to 64 of A-Z a-z 0-9 . _ -)";
        o.box_id = v;
    } else if (name == "--push-quota") {
        auto b = parse_bytes(v);
        if (!b || b->value() == 0) return quoted + " is not a positive size such as 4GiB";
        o.push_quota = *b;
    } else if (name == "--push-rate") {
        auto r = parse_bitrate(v);
        if (!r) return quoted + " is not a rate such as 2Mbps";
        if (*r < kMinRate || *r > kMaxRate)
            return quoted + " is outside [" + format_bitrate(kMinRate) + ", " + format_bitrate(kMaxRate) +
                   "]";
        o.push_rate = *r;
    } else if (name == "--log-level") {
        if (!parse_log_level(v)) return quoted + " is not a log level (trace, debug, info, warn, error, off)";
        o.log_level = v;
    } else {
        return "unknown option";
    }
    return {};
}

// Options that take no value.
bool is_flag(const std::string& name) {
    return name == "--upnp" || name == "--natpmp";
}

}  // namespace

std::string serve_options_problem(const ServeOptions& o) {
    if (o.ssl_cert.empty() != o.ssl_key.empty())
        return o.ssl_cert.empty() ? "--ssl-key needs --ssl-cert (the certificate it belongs to)"
                                  : "--ssl-cert needs --ssl-key (the certificate's private key)";
    if (o.ssl_listen_port && o.ssl_cert.empty())
        return "--ssl-listen needs --ssl-cert and --ssl-key (only peers with certificates use it)";
    if (o.ssl_listen_port && *o.ssl_listen_port != 0 && *o.ssl_listen_port == o.listen.port)
        return "--ssl-listen: port " + std::to_string(o.listen.port) + " is --listen's already";
    return {};
}

std::optional<std::uint16_t> ssl_listen_port_of(const ServeOptions& o) {
    if (o.ssl_cert.empty()) return std::nullopt;
    if (o.ssl_listen_port) return o.ssl_listen_port;
    if (o.listen.port == 0 || o.listen.port == 65535) return std::uint16_t{0};
    return static_cast<std::uint16_t>(o.listen.port + 1);
}

ServeParse parse_serve_args(const std::vector<std::string>& args, const ServeOptions& base) {
    ServeParse r;
    ServeOptions o = base;
    bool have_save_dir = !base.save_dir.empty();
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        if (a == "--help" || a == "-h") {
            r.help = true;
            return r;
        }
        if (a.rfind("--", 0) != 0) {
            r.error = "unexpected argument '" + a + "' (serve takes options only)";
            return r;
        }
        std::string name = a, value;
        auto eq = a.find('=');
        if (is_flag(a)) {
            // no value
        } else if (eq != std::string::npos) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
        } else {
            if (i + 1 >= args.size()) {
                r.error = name + ": missing value";
                return r;
            }
            value = args[++i];
        }
        if (name == "--config") {
            if (value.empty()) {
                r.error = "--config: must not be empty";
                return r;
            }
            r.config = value;
            continue;
        }
        auto problem = apply(o, name, value);
        if (!problem.empty()) {
            r.error = name + ": " + problem;
            return r;
        }
        have_save_dir = have_save_dir || name == "--save-dir";
    }
    if (!o.token.empty() && !o.token_file.empty()) {
        r.error = "--token-file: give either a token or a token file, not both";
        return r;
    }
    if (!have_save_dir && r.config.empty()) {
        r.error = "--save-dir is required";
        return r;
    }
    // With --config, once the file's options are the base (serve_main's second parse).
    if (r.config.empty()) {
        if (auto problem = serve_options_problem(o); !problem.empty()) {
            r.error = problem;
            return r;
        }
    }
    r.options = std::move(o);
    return r;
}

ServeOptions serve_options_from_config(const nlohmann::json& config) {
    if (!config.is_object()) throw ConfigError("the config must be a JSON object");
    ConfigReader reader(config);
    ServeOptions o;
    auto set = [&](std::string_view key, const std::string& option, const std::string& value) {
        auto problem = apply(o, option, value);
        if (!problem.empty()) reader.fail(key, problem);
    };
    if (reader.has("save_dir")) set("save_dir", "--save-dir", reader.string("save_dir"));
    if (reader.has("listen")) set("listen", "--listen", reader.string("listen"));
    if (reader.has("control_listen")) set("control_listen", "--api", reader.string("control_listen"));
    for (const auto& s : reader.strings("servers", std::vector<std::string>{}))
        set("servers", "--server", s);
    for (const auto& t : reader.strings("trackers", std::vector<std::string>{}))
        set("trackers", "--tracker", t);
    constexpr Bytes kMinQuota{1};
    constexpr Bytes kMaxQuota{std::uint64_t(1) << 60};
    if (reader.has("disk_quota"))
        o.disk_quota = reader.bytes("disk_quota", std::nullopt, kMinQuota, kMaxQuota);
    if (reader.has("upload_limit"))
        o.upload_limit = reader.bitrate("upload_limit", std::nullopt, kMinRate, kMaxRate);
    if (reader.has("download_limit"))
        o.download_limit = reader.bitrate("download_limit", std::nullopt, kMinRate, kMaxRate);
    o.max_connections = static_cast<int>(reader.uint("max_connections", 200, 2, 10'000));
    if (reader.has("disk_io")) set("disk_io", "--disk-io", reader.string("disk_io"));
    o.upnp = reader.boolean("upnp", false);
    o.natpmp = reader.boolean("natpmp", false);
    if (reader.has("passkey")) set("passkey", "--passkey", reader.string("passkey"));
    if (reader.has("ssl_cert")) set("ssl_cert", "--ssl-cert", reader.string("ssl_cert"));
    if (reader.has("ssl_key")) set("ssl_key", "--ssl-key", reader.string("ssl_key"));
    if (reader.has("ssl_listen"))
        o.ssl_listen_port = static_cast<std::uint16_t>(reader.uint("ssl_listen", 0, 0, 65535));
    if (reader.has("log_level")) set("log_level", "--log-level", reader.string("log_level"));
    if (reader.has("token")) set("token", "--token", reader.string("token"));
    if (reader.has("token_file")) set("token_file", "--token-file", reader.string("token_file"));
    if (reader.has("ca_file")) set("ca_file", "--ca-file", reader.string("ca_file"));
    if (reader.has("telemetry")) set("telemetry", "--telemetry", reader.string("telemetry"));
    if (reader.has("telemetry_interval"))
        o.telemetry_interval = reader.duration("telemetry_interval", std::nullopt, std::chrono::seconds(1),
                                               std::chrono::hours(24));
    if (!o.token.empty() && !o.token_file.empty())
        reader.fail("token_file", "give either token or token_file, not both");
    if (reader.has("cache")) set("cache", "--cache", reader.string("cache"));
    if (reader.has("picker")) set("picker", "--picker", reader.string("picker"));
    if (reader.has("choker")) set("choker", "--choker", reader.string("choker"));
    if (reader.has("box_id")) set("box_id", "--box-id", reader.string("box_id"));
    if (reader.has("push_quota"))
        o.push_quota = reader.bytes("push_quota", std::nullopt, kMinQuota, kMaxQuota);
    if (reader.has("push_rate")) o.push_rate = reader.bitrate("push_rate", std::nullopt, kMinRate, kMaxRate);
    reader.finish();
    return o;
}

std::string serve_help_text() {
    return R"(usage: toast-client serve --save-dir DIR [options]
       toast-client serve --config FILE [options]

The set-top-box service: one long-running process with one BitTorrent session and one listen port for every
title, driven by a JSON control API on a loopback address (docs/box.md lists the routes). Titles watched
earlier keep seeding within the disk quota (--cache decides which leave first); with --push-quota the box
also holds what the operator's server assigns it, fetched while idle and off-peak. After a restart the
service resumes its titles, their playback positions and its assignment from DIR.

  --config FILE           JSON with the same settings (save_dir, listen, control_listen, servers, trackers,
                          disk_quota, upload_limit, download_limit, max_connections, disk_io,
                          log_level, cache, picker, choker, box_id, push_quota, push_rate, upnp,
                          natpmp, passkey,
                          ssl_cert, ssl_key, ssl_listen, token, token_file, ca_file, telemetry,
                          telemetry_interval); options given on the command line override it
  --save-dir DIR          every title (DIR/titles/ID/), its torrent and position, the title list (required)
  --api HOST:PORT         control API and live piece map, loopback only (default 127.0.0.1:8780)
  --listen [HOST:]PORT    BitTorrent listen port for every title: PORT alone on every interface (0.0.0.0
                          and [::]), HOST:PORT on one address (default 127.0.0.1:0, any free port)
  --server URL            VoD server tried after each torrent's url-list (repeatable)
  --tracker URL           tracker added to each torrent's (repeatable)
  --disk-quota SIZE       disk used by all titles together, e.g. 20GiB (default: unlimited)
  --upload-limit RATE     upload of all titles together, e.g. 8Mbps (default: unlimited)
  --download-limit RATE   download of all titles together (default: unlimited)
  --max-connections N     peer connections of the box, all titles together (default 200;
                          a title has 40 at most)
  --disk-io D             posix: pieces read and written with pread/pwrite on the network thread; mmap:
                          read from a memory map on disk threads, libtorrent's own default (default posix)
  --cache POLICY          what stays of a watched title once its play stops: none (nothing), lru (seed within
                          the disk quota, least recently watched evicted first), popularity (seed within
                          the quota, the title the swarm needs least per byte evicted first, from the
                          server's catalogue demand and the tracker's copies) (default lru)
  --picker P              what peers are asked for in a played title: rarest, inorder, beta, hybrid or
                          adaptive (as toast-client's --picker) (default adaptive)
  --choker C              whom the box uploads to: nearest, leader, tit-for-tat or seed, with the choker's
                          own unchoke slots (as toast-client's --choker) (default nearest)
  --box-id ID             this box's name to the server (default: kept in DIR/box_id, random at first start)
  --push-quota SIZE       take part in pre-placement: hold up to SIZE of what the first --server assigns,
                          beside the disk quota (default: no push)
  --push-rate RATE        fetch the assignment at most this fast (default and cap: the server's rate)
  --upnp                  ask the home router over UPnP to forward the listen ports (default: off)
  --natpmp                the same over NAT-PMP (default: off)
  --passkey KEY           this box's tracker passkey, put into every tracker URL of every title
  --ssl-cert FILE         this box's certificate (PEM) signed by the operator's CA, for SSL torrents
  --ssl-key FILE          its private key (PEM, unencrypted)
  --ssl-listen PORT       the SSL listen port, on --listen's address (default: --listen's port + 1, any
                          free port when that is 0)
  --log-level LEVEL       trace, debug, info, warn, error, off (default info)
  --token TOKEN           the operator's signed token: every request to a server carries it (Authorization:
                          Bearer), renewed at the first server before it expires
  --token-file FILE       the same, read from FILE; a renewed token is written back to it
  --ca-file FILE          PEM CA certificate(s) https:// servers (and torrent URLs) must be signed by
                          (default: the system's CAs)
  --telemetry URL|off     where QoE reports go (default: the first --server's /telemetry, else the first
                          title's server); off: none
  --telemetry-interval D  a report every D while a title plays, and one when it stops (default 5min)
)";
}

}  // namespace toast::client
