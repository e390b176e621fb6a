// toast-tracker: a BitTorrent tracker (HTTP and UDP) for Toast swarms and stock clients. Wiring and the
// command line; every decision lives in tracker/core and TrackerService.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "toast/common/config.hpp"
#include "toast/common/endpoint.hpp"
#include "toast/common/log.hpp"
#include "toast/common/metrics.hpp"
#include "tracker/core/tracker_config.hpp"
#include "tracker/io/http_server.hpp"
#include "tracker/io/state_saver.hpp"
#include "tracker/io/tracker_service.hpp"
#include "tracker/io/udp_server.hpp"

namespace {

namespace asio = boost::asio;
using namespace toast::tracker;

constexpr const char* kUsage =
    "usage: toast-tracker --listen HOST:PORT [--udp HOST:PORT] [--config CONFIG]\n"
    "       toast-tracker new-passkey [LABEL...]\n"
    "\n"
    "A BitTorrent tracker: HTTP announce at /announce, scrape at /scrape, GET /stats (JSON) and\n"
    "GET /metrics (Prometheus text); optionally the UDP tracker protocol (BEP 15).\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT  HTTP address (required; no default). Port 0 picks a free port, printed at start.\n"
    "  --udp HOST:PORT     also serve UDP announce/scrape here (default: no UDP tracker)\n"
    "  --config CONFIG     JSON configuration file (default: none, every key at its default below)\n"
    "  -h, --help          print this help and exit\n"
    "\n"
    "new-passkey prints a fresh random passkey (32 characters from /dev/urandom) followed by LABEL: one\n"
    "line to append to the passkey file. A box announces with it at /announce/PASSKEY (HTTP, and over UDP\n"
    "in BEP 41's URLData) or /announce?passkey=PASSKEY.\n"
    "\n"
    "config keys (default):\n"
    "  interval          re-announce interval sent to clients (\"300s\")\n"
    "  min_interval      minimum re-announce interval (\"30s\")\n"
    "  peer_expiry       a peer silent this long is dropped (2 x interval + 60s)\n"
    "  numwant_default   peers returned when the client does not say (50)\n"
    "  numwant_max       most peers returned in one answer (200)\n"
    "  max_swarms        swarms kept before new info-hashes are refused with 503 (1000000)\n"
    "  whitelist         file with one hex info-hash per line; reloaded on SIGHUP (default: serve all)\n"
    "  passkeys          file with one passkey per line (\"KEY [LABEL]\"); every announce and scrape\n"
    "                    must carry one; reloaded on SIGHUP, a key taken out is refused at once and its\n"
    "                    peers leave every swarm (default: none, announces need no passkey)\n"
    "  rate_limit        {\"per_second\": 20, \"burst\": 100, \"max_tracked\": 1000000, \"exempt\": [],\n"
    "                     \"ipv6_prefix\": 64} announces+scrapes per IPv4 address or IPv6 /64;\n"
    "                     per_second 0 disables; exempt: addresses/prefixes never limited\n"
    "  ip_param_from     addresses/prefixes whose ip= (UDP: IP field) is honoured ([]: never)\n"
    "  admin_allow       who may read /stats and /metrics ([\"127.0.0.0/8\", \"::1\"])\n"
    "  stats_page_limit  most swarms in one /stats page (1000)\n"
    "  access_log        {\"path\": FILE, \"udp\": false} one line per request (combined format)\n"
    "                     (default: no access log)\n"
    "  max_scrape_hashes info-hashes accepted in one HTTP scrape (64)\n"
    "  http              {\"idle_timeout\": \"15s\", \"header_limit\": 8192, \"max_target_length\": 2048,\n"
    "                     \"max_connections\": 4096}\n"
    "  state_file        file the swarms are saved to and restored from at start (default: none, a\n"
    "                     restart forgets every swarm)\n"
    "  state_save_interval  how often the state file is saved; also at SIGINT/SIGTERM (\"10s\")\n"
    "  log_level         trace, debug, info, warn, error or off (\"info\")\n"
    "\n"
    "signals: SIGHUP re-reads CONFIG and applies every key (log level, limits, whitelist, passkeys, access\n"
    "         log, ...) and reopens the access log; a bad config changes nothing, a bad whitelist or\n"
    "         passkey file keeps the old one.\n"
    "         SIGINT/SIGTERM save the state file (with state_file) and stop.\n"
    "logs go to stderr (journald under systemd); the access log only where access_log.path says.\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "toast-tracker: %s\n(run toast-tracker --help for usage)\n", message.c_str());
    return 2;
}

struct Options {
    toast::Endpoint listen;
    std::optional<toast::Endpoint> udp;
    std::optional<std::string> config;
};

asio::ip::address resolve_host(asio::io_context& ioc, const std::string& host) {
    boost::system::error_code ec;
    auto a = asio::ip::make_address(host, ec);
    if (!ec) return a;
    asio::ip::tcp::resolver resolver(ioc);
    auto results = resolver.resolve(host, "0");
    return results.begin()->endpoint().address();
}

toast::tracker::SipKey random_key(std::random_device& rd) {
    // Secrets, not simulation randomness: they must be unpredictable, so they are not seeded from config.
    auto word = [&] { return (static_cast<std::uint64_t>(rd()) << 32) | rd(); };
    return {word(), word()};
}

// SIGHUP: re-read the config file and apply what it changes (see TrackerService::apply_config); a config
// that does not load changes nothing. Says what changed and what could not be applied.
void reload(TrackerService& service, const std::optional<std::string>& config_path) {
    if (!config_path) {
        spdlog::info("SIGHUP: started without --config; nothing to reload");
        return;
    }
    TrackerConfig next;
    try {
        next = load_tracker_config_file(*config_path);
    } catch (const std::exception& e) {
        service.count_config_reload(false);
        spdlog::error("SIGHUP: {}; keeping the running configuration", e.what());
        return;
    }
    auto result = service.apply_config(next);
    spdlog::set_level(*toast::parse_log_level(next.log_level));
    service.count_config_reload(result.not_applied.empty());
    std::string changed;
    for (const auto& c : result.changed)
        changed += (changed.empty() ? "" : "; ") + c;
    spdlog::info("SIGHUP: reloaded {} ({})", *config_path, changed.empty() ? "no changes" : changed);
    for (const auto& n : result.not_applied)
        spdlog::error("SIGHUP: not applied: {}", n);
}

// new-passkey: 32 characters of [A-Za-z0-9_-] (192 bits) from /dev/urandom, then the label.
int new_passkey(const std::vector<std::string>& label_words) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::random_device rd("/dev/urandom");
    std::string key;
    while (key.size() < 32) {
        auto word = rd();
        for (int i = 0; i < 5 && key.size() < 32; ++i, word >>= 6)
            key.push_back(kAlphabet[word & 63]);
    }
    std::string label;
    for (const auto& w : label_words)
        label += " " + w;
    std::printf("%s%s\n", key.c_str(), label.c_str());
    return 0;
}

// Reads the command line into `opt`; an exit code when the program ends here (--help, a usage error).
std::optional<int> parse_command_line(const std::vector<std::string>& args, Options& opt) {
    bool have_listen = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name = args[i];
        std::optional<std::string> value;
        if (auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (name == "--help" || name == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (name != "--listen" && name != "--udp" && name != "--config") {
            return usage_error("unknown option '" + args[i] + "'");
        }
        if (!value) {
            if (i + 1 >= args.size()) return usage_error(name + " needs a value");
            value = args[++i];
        }
        if (name == "--config") {
            opt.config = *value;
            continue;
        }
        auto ep = toast::parse_endpoint(*value);
        if (!ep) return usage_error(name + ": expected HOST:PORT, got '" + *value + "'");
        if (name == "--listen") {
            opt.listen = *ep;
            have_listen = true;
        } else {
            opt.udp = *ep;
        }
    }
    if (!have_listen) return usage_error("--listen HOST:PORT is required");
    return std::nullopt;
}

// Restores the saved swarms. Once the servers are bound, so that a tracker that cannot start leaves the file
// alone, and before they answer, so that the first announce already meets the restored swarms (connections
// made meanwhile wait in the backlog).
void restore_swarms(TrackerService& service) {
    auto restored = service.restore_state(std::chrono::steady_clock::now(), std::chrono::system_clock::now());
    if (restored.message.empty()) return;
    if (restored.ok) {
        spdlog::info("{}", restored.message);
    } else {
        spdlog::error("{}", restored.message);
    }
}

// The bound addresses, in the log and on stdout (where a caller that asked for port 0 reads them).
void print_endpoints(const HttpServer& http, const std::optional<UdpServer>& udp) {
    auto http_ep = http.local_endpoint();
    spdlog::info("http tracker on {}:{} (announce at /announce)", http_ep.address().to_string(),
                 http_ep.port());
    std::printf("toast-tracker: http %s:%u\n", http_ep.address().to_string().c_str(), http_ep.port());
    if (udp) {
        auto udp_ep = udp->local_endpoint();
        spdlog::info("udp tracker on {}:{}", udp_ep.address().to_string(), udp_ep.port());
        std::printf("toast-tracker: udp %s:%u\n", udp_ep.address().to_string().c_str(), udp_ep.port());
    }
    std::fflush(stdout);
}

// Expiry and rate-limiter upkeep; often enough that a peer outlives peer_expiry by at most 10% (recomputed
// each time, since a reload may change peer_expiry).
void schedule_upkeep(asio::steady_timer& tick, TrackerService& service) {
    tick.expires_after(std::clamp<std::chrono::seconds>(service.config().registry.peer_expiry / 10,
                                                        std::chrono::seconds(1), std::chrono::seconds(30)));
    tick.async_wait([&tick, &service](boost::system::error_code ec) {
        if (ec) return;
        service.tick(std::chrono::steady_clock::now());
        schedule_upkeep(tick, service);
    });
}

// What runs on the io_context, and what the signals act on.
struct Running {
    const Options& opt;
    TrackerService& service;
    HttpServer& http;
    std::optional<UdpServer>& udp;
    asio::steady_timer& tick;
    StateSaver& saver;
    asio::io_context& ioc;
};

// SIGHUP reloads; SIGINT and SIGTERM stop everything (the saver writes the state file last).
void wait_signal(asio::signal_set& signals, Running& run) {
    signals.async_wait([&signals, &run](boost::system::error_code ec, int signo) {
        if (ec) return;
        if (signo == SIGHUP) {
            reload(run.service, run.opt.config);
            run.saver.on_reload();
            wait_signal(signals, run);
            return;
        }
        spdlog::info("signal {}: stopping", signo);
        run.http.stop();
        if (run.udp) run.udp->stop();
        run.tick.cancel();
        run.saver.stop();
        run.ioc.stop();
    });
}

void serve(const Options& opt, const TrackerConfig& config) {
    // Declared before the io_context so they outlive it: connection sessions still pending in it when it is
    // destroyed use the service.
    toast::MetricsRegistry metrics;
    std::random_device rd;
    TrackerService service(config, ServiceSecrets{random_key(rd), random_key(rd)}, metrics);
    asio::io_context ioc(1);

    HttpServer http(ioc, asio::ip::tcp::endpoint(resolve_host(ioc, opt.listen.host), opt.listen.port),
                    service);
    std::optional<UdpServer> udp;
    if (opt.udp)
        udp.emplace(ioc, asio::ip::udp::endpoint(resolve_host(ioc, opt.udp->host), opt.udp->port), service);
    restore_swarms(service);
    http.start();
    if (udp) udp->start();
    print_endpoints(http, udp);

    asio::steady_timer tick(ioc);
    schedule_upkeep(tick, service);
    StateSaver saver(ioc, service);
    saver.start();
    asio::signal_set signals(ioc, SIGINT, SIGTERM, SIGHUP);
    Running run{
        .opt = opt, .service = service, .http = http, .udp = udp, .tick = tick, .saver = saver, .ioc = ioc};
    wait_signal(signals, run);
    ioc.run();
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "new-passkey")
        return new_passkey(std::vector<std::string>(args.begin() + 1, args.end()));
    Options opt;
    if (auto exit_code = parse_command_line(args, opt)) return *exit_code;

    TrackerConfig config;
    try {
        if (opt.config) config = load_tracker_config_file(*opt.config);
        toast::init_logging("tracker", config.log_level);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toast-tracker: %s\n", e.what());
        return 1;
    }
    try {
        serve(opt, config);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toast-tracker: %s\n", e.what());
        return 1;
    }
}
