// toast-server: the VoD server's command line. Subcommands validate the config, ingest and verify titles,
// and serve.
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/app/access_commands.hpp"
#include "server/app/config_reload.hpp"
#include "server/core/fd_budget.hpp"
#include "server/core/server_config.hpp"
#include "server/http/http_service.hpp"
#include "server/io/block_store.hpp"
#include "server/io/catalogue.hpp"
#include "server/io/ingest.hpp"
#include "server/io/tier_client.hpp"
#include "server/io/tier_store.hpp"
#include "server/io/tier_verify.hpp"
#include "server/io/verify.hpp"
#include "toast/common/config.hpp"
#include "toast/common/endpoint.hpp"
#include "toast/common/log.hpp"
#include "toast/common/metrics.hpp"
#include "toast/common/units.hpp"

namespace {

using namespace toast;
using namespace toast::server;

constexpr const char* kUsage =
    "usage: toast-server --config CONFIG <command> [args]\n"
    "       toast-server --help\n"
    "commands:\n"
    "  check                 validate the configuration and the disk directories, count titles, and exit\n"
    "  serve                 serve the store's titles over HTTP on the config's \"listen\" address until\n"
    "                        SIGTERM or SIGINT (GET/HEAD /titles/NAME with byte ranges, /stream/NAME, "
    "/metrics)\n"
    "  ingest NAME MEDIA_FILE [--torrent OUT.torrent] [options]\n"
    "                        store MEDIA_FILE as title NAME ([A-Za-z0-9._-], 1-128 chars, not starting with\n"
    "                        '.') with its .torrent (served at /torrents/NAME.torrent, and written to\n"
    "                        OUT.torrent if given); replaces an existing NAME atomically. The file inside\n"
    "                        the torrent is NAME plus the container's extension (e.g. NAME.ts)\n"
    "      --policy P        naive | raid0 | raid1 | random | rda (default: the config's \"policy\")\n"
    "      --bitrate RATE    the title's bitrate, e.g. 6Mbps (default: the demand trace's average, else the\n"
    "                        config's \"default_bitrate\")\n"
    "      --announce URL    tracker announce URL (http, https or udp); repeat for more, one tier each\n"
    "      --operator-peer IP:PORT\n"
    "                        a peer of the operator's (e.g. a seed beside this server) that clients count "
    "as\n"
    "                        server-side, not as a viewer; repeat for more (written to "
    "\"toast\".\"operator_peers\")\n"
    "      --block-size SIZE block size, e.g. 4MiB (default: config \"block_size\", else bitrate x "
    "time_slice)\n"
    "      --piece-size SIZE torrent piece size, a power of two >= 16KiB (default: config \"piece_size\")\n"
    "      --no-trace        do not record an MPEG-TS or MP4 file's demand trace: pace it at the bitrate\n"
    "      --private         a private torrent (BEP 27 \"private\": 1 in the info dictionary): clients use "
    "its\n"
    "                        trackers only, no DHT, PEX or local discovery (default: the config's\n"
    "                        \"private_torrents\", false)\n"
    "      --peer-ca CA.pem  the CA whose certificates the swarm's peers must present: written to the info\n"
    "                        dictionary as \"ssl-cert\", which makes it a libtorrent SSL torrent (default: "
    "the\n"
    "                        config's \"peer_ca\"; none)\n"
    "                        The torrent is BitTorrent v1 with a BEP 19 url-list entry "
    "PUBLIC_URL/titles/NAME and,\n"
    "                        outside the info dictionary, \"toast\": {\"bitrate\": BITS_PER_S, \"title\": "
    "NAME}.\n"
    "  sign --subscriber ID --scope SCOPE [options]\n"
    "                        print a signed token for the config's \"access\" keys (signed URLs)\n"
    "      --subscriber ID   the subscriber, [A-Za-z0-9._-], 1-64 chars (required)\n"
    "      --scope SCOPE     catalog (/catalog and every title) or title:NAME (one title) (required)\n"
    "      --lifetime D      how long the token is valid, 1s..366d (default 24h)\n"
    "      --key-id KID      the key that signs it (default: the config's access.signing_key)\n"
    "  verify [NAME] [--local]\n"
    "                        re-read every replica of every block (or of NAME) and check it against its\n"
    "                        checksum; on a tier also every block the other nodes hold, read from them\n"
    "                        (--local: this node's disks only); exit 0 when all are intact, 1 otherwise\n"
    "exit status: 0 success, 1 failure (bad config, bad input, damaged store), 2 bad command line\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "toast-server: %s (see toast-server --help)\n", message.c_str());
    return 2;
}

int fail(const std::string& message) {
    std::fprintf(stderr, "toast-server: %s\n", message.c_str());
    return 1;
}

int run_ingest(const ServerConfig& config, const std::vector<std::string>& args) {
    IngestOptions opt;
    std::vector<std::string> positional;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        if (a == "--torrent" || a == "--policy" || a == "--bitrate" || a == "--announce" ||
            a == "--operator-peer" || a == "--block-size" || a == "--piece-size" || a == "--peer-ca") {
            auto v = value();
            if (!v) return usage_error(a + " needs a value");
            if (a == "--torrent") {
                opt.torrent = *v;
            } else if (a == "--policy") {
                opt.policy = parse_placement_policy(*v);
                if (!opt.policy)
                    return usage_error("unknown policy '" + *v + "' (naive, raid0, raid1, random, rda)");
            } else if (a == "--bitrate") {
                opt.bitrate = parse_bitrate(*v);
                if (!opt.bitrate) return usage_error("bad bitrate '" + *v + "'");
                if (*opt.bitrate < kMinBitrate || *opt.bitrate > kMaxBitrate) {
                    return usage_error("--bitrate " + *v + " is outside [" + format_bitrate(kMinBitrate) +
                                       ", " + format_bitrate(kMaxBitrate) + "]");
                }
            } else if (a == "--announce") {
                opt.announce.push_back(*v);
            } else if (a == "--operator-peer") {
                auto peer = parse_peer_endpoint(*v);
                if (!peer) {
                    return usage_error(
                        "bad operator peer '" + *v +
                        "' (expected IP:PORT with an IP address and a port, e.g. 192.0.2.7:6881)");
                }
                opt.operator_peers.push_back(*peer);
            } else if (a == "--peer-ca") {
                if (v->empty()) return usage_error("--peer-ca needs a file");
                opt.peer_ca = *v;
            } else if (a == "--block-size") {
                opt.block_size = parse_bytes(*v);
                if (!opt.block_size) return usage_error("bad block size '" + *v + "'");
            } else {
                opt.piece_size = parse_bytes(*v);
                if (!opt.piece_size) return usage_error("bad piece size '" + *v + "'");
            }
        } else if (a == "--no-trace") {
            opt.trace = false;
        } else if (a == "--private") {
            opt.private_torrent = true;
        } else if (a.rfind("--", 0) == 0) {
            return usage_error("unknown option '" + a + "' for ingest");
        } else {
            positional.push_back(a);
        }
    }
    if (positional.size() != 2) return usage_error("ingest needs NAME and MEDIA_FILE");
    opt.name = positional[0];
    opt.media = positional[1];
    try {
        auto r = ingest_title(config, opt);
        const auto& m = r.manifest;
        std::printf("ingested %s: %llu bytes, %zu blocks of %llu bytes, policy %s, bitrate %s, version %s\n",
                    m.title.c_str(), static_cast<unsigned long long>(m.size), m.blocks.size(),
                    static_cast<unsigned long long>(m.block_size), std::string(to_string(m.policy)).c_str(),
                    format_bitrate(m.bitrate).c_str(), m.version.c_str());
        if (m.trace) {
            std::printf("  demand trace: %zu rounds of %g s, average %s, peak %s: paced by the trace\n",
                        m.trace->bytes.size(), std::chrono::duration<double>(m.trace->round).count(),
                        format_bitrate(m.trace->average_rate()).c_str(),
                        format_bitrate(m.trace->peak_rate()).c_str());
        } else {
            std::printf("  no demand trace (not MPEG-TS or MP4, or --no-trace): paced at the bitrate\n");
        }
        if (config.tier) {
            std::printf(
                "  tier: node %s holds %llu of %zu blocks (%zu nodes, %u per block); ingest the same file "
                "on every node\n",
                config.tier->self_node().id.c_str(), static_cast<unsigned long long>(r.held_blocks),
                m.blocks.size(), config.tier->layout.nodes.size(), config.tier->layout.replicas);
        }
        for (std::size_t d = 0; d < r.blocks_per_disk.size(); ++d)
            std::printf("  disk %zu (%s): %llu blocks\n", d, config.disks[d].path.c_str(),
                        static_cast<unsigned long long>(r.blocks_per_disk[d]));
        if (r.removed_versions > 0) std::printf("  replaced the previous version\n");
        if (!m.torrent) {
            std::printf(
                "no torrent written: an empty title has no pieces to share; it is served over HTTP only\n");
        } else {
            if (!opt.torrent.empty())
                std::printf("torrent %s (", opt.torrent.c_str());
            else
                std::printf("torrent /torrents/%s.torrent (", m.title.c_str());
            std::printf("file %s, info-hash %s%s%s)\n", m.torrent->name.c_str(), r.info_hash.c_str(),
                        opt.private_torrent.value_or(config.private_torrents) ? ", private" : "",
                        opt.peer_ca || config.peer_ca ? ", peers need a certificate of the peer CA" : "");
        }
        return 0;
    } catch (const IngestError& e) {
        return fail(std::string("ingest failed: ") + e.what());
    }
}

// The Authorization this node sends with its reads from the other nodes of its tier (signed URLs: a token it
// signs with the config's signing key, as at start-up).
TierClient::Authorizer tier_authorizer(const ServerConfig& config) {
    if (config.access.open() || !config.tier) return {};
    return [access = config.access, self = config.tier->self_node().id](std::string_view title) {
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        return tier_authorization(access, self, title, now);
    };
}

int run_verify(const ServerConfig& config, const std::vector<std::string>& args) {
    std::optional<std::string> name;
    bool local = false;
    for (const auto& a : args) {
        if (a == "--local") {
            local = true;
        } else if (a.rfind("--", 0) == 0) {
            return usage_error("unknown option '" + a + "' for verify");
        } else if (name) {
            return usage_error("verify takes at most one title name");
        } else {
            name = a;
        }
    }
    auto report = verify_store(config, name);
    if (!local) verify_tier(config, report, name, tier_authorizer(config));
    for (const auto& n : report.notes)
        std::printf("note: %s\n", n.c_str());
    for (const auto& p : report.problems)
        std::printf("PROBLEM: %s\n", p.c_str());
    const auto elsewhere = report.nodes == 0 ? std::string()
                                             : " (and " + std::to_string(report.remote_replicas) + " on " +
                                                   std::to_string(report.nodes) + " other nodes)";
    std::printf("verify: %zu titles, %zu blocks, %zu replicas%s, %llu bytes checked: %s\n", report.titles,
                report.blocks, report.replicas, elsewhere.c_str(),
                static_cast<unsigned long long>(report.bytes),
                report.clean() ? "clean" : (std::to_string(report.problems.size()) + " problems").c_str());
    return report.clean() ? 0 : 1;
}

int run_check(const ServerConfig& config) {
    for (std::size_t d = 0; d < config.disks.size(); ++d) {
        std::error_code ec;
        if (!std::filesystem::is_directory(config.disks[d].path, ec)) {
            return fail("disk " + std::to_string(d) + " (" + config.disks[d].path.string() +
                        ") is not a directory");
        }
    }
    std::vector<std::filesystem::path> disks;
    for (const auto& d : config.disks)
        disks.push_back(d.path);
    auto scan = Catalogue(disks).scan();
    // Identities: a disk without one is new (ingest gives it one) unless titles name a disk that is not
    // found; two disks with one identity are one directory listed twice or a copy, and reads would go to the
    // wrong one.
    std::map<std::string, std::size_t> seen;
    bool duplicate = false;
    for (std::size_t d = 0; d < disks.size(); ++d) {
        const auto id = read_disk_id(disks[d]);
        std::error_code ec;
        if (id.empty() && std::filesystem::exists(disk_id_path(disks[d]), ec)) {
            std::printf("warning: disk %zu (%s): %s is not a disk id\n", d, disks[d].c_str(),
                        disk_id_path(disks[d]).c_str());
        } else if (id.empty()) {
            std::printf("disk %zu (%s): no identity yet (the next ingest writes %s)\n", d, disks[d].c_str(),
                        disk_id_path(disks[d]).c_str());
        } else if (auto [it, fresh] = seen.emplace(id, d); !fresh) {
            std::printf(
                "error: disks %zu and %zu have the same identity %s: one directory listed twice, or a copy\n",
                it->second, d, id.c_str());
            duplicate = true;
        } else {
            std::printf("disk %zu (%s): identity %s\n", d, disks[d].c_str(), id.c_str());
        }
    }
    for (const auto& p : scan.problems)
        std::printf("warning: %s\n", p.c_str());
    if (duplicate) return fail("two configured disks have the same identity");
    if (config.tier) {
        std::string nodes;
        for (const auto& n : config.tier->layout.nodes)
            nodes += (nodes.empty() ? "" : ", ") + n.id + " " + n.url;
        std::printf("tier: this is node %s of %zu (%s); %u nodes per block, %s placement\n",
                    config.tier->self_node().id.c_str(), config.tier->layout.nodes.size(), nodes.c_str(),
                    config.tier->layout.replicas,
                    std::string(to_string(config.tier->layout.placement)).c_str());
    }
    std::printf("%s\n", access_summary(config.access).c_str());
    if (config.tls) {
        std::printf("tls: certificate chain %s, key %s\n", config.tls->certificate_chain.c_str(),
                    config.tls->private_key.c_str());
    }
    std::printf("config OK: %zu disks, policy %s, listen %s, %zu titles\n", config.disks.size(),
                std::string(to_string(config.policy)).c_str(), config.listen.to_string().c_str(),
                scan.titles.size());
    return 0;
}

// Raises the soft RLIMIT_NOFILE towards the hard limit (as far as the config needs) and returns how many
// block files the store may keep open under whatever limit is in force.
std::size_t raise_descriptor_limit(const ServerConfig& config) {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
        spdlog::warn("getrlimit(RLIMIT_NOFILE) failed: {}; keeping open_files at {}", std::strerror(errno),
                     config.open_files);
        return config.open_files;
    }
    const auto hard = lim.rlim_max == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(lim.rlim_max);
    const auto soft = lim.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(lim.rlim_cur);
    const auto want = wanted_nofile_limit(config.open_files, config.max_connections, soft, hard);
    std::uint64_t got = soft;
    if (want > soft) {
        rlimit raised = lim;
        raised.rlim_cur = static_cast<rlim_t>(want);
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            got = want;
        } else {
            spdlog::warn("could not raise RLIMIT_NOFILE from {} to {}: {}", soft, want, std::strerror(errno));
        }
    }
    const auto files = open_file_budget(config.open_files, config.max_connections, got);
    if (files < config.open_files) {
        spdlog::warn(
            "descriptor limit {} (hard {}) leaves room for {} open block files next to {} connections, "
            "not the configured open_files {}",
            got, hard, files, config.max_connections, config.open_files);
    } else {
        spdlog::info("descriptor limit {} (hard {}): up to {} open block files and {} connections", got, hard,
                     files, config.max_connections);
    }
    return files;
}

int run_serve(const std::filesystem::path& config_path, const ServerConfig& config) {
    MetricsRegistry metrics;
    BlockStoreOptions options;
    options.open_file_cache = raise_descriptor_limit(config);
    BlockStore store(config, metrics, options);
    const auto titles = store.rescan();
    spdlog::info("block store: {} disks, {} titles", config.disks.size(), titles);
    // A node of a tier serves the blocks other nodes hold by relaying them (TierStore).
    std::unique_ptr<TierClient> tier_client;
    std::unique_ptr<TierStore> tier_store;
    if (config.tier) {
        tier_client = std::make_unique<TierClient>(*config.tier, metrics);
        tier_client->set_authorizer(tier_authorizer(config));
        tier_store = std::make_unique<TierStore>(store, *tier_client);
        spdlog::info("tier: node {} of {} ({} per block)", config.tier->self_node().id,
                     config.tier->layout.nodes.size(), config.tier->layout.replicas);
    }
    TitleStore& served = tier_store ? static_cast<TitleStore&>(*tier_store) : store;
    HttpService service(config, served, store, metrics, tier_client.get());
    if (config.access.open()) {
        spdlog::warn("{}", access_summary(config.access));
    } else {
        spdlog::info("{}", access_summary(config.access));
    }
    ConfigReloader reloader(config_path, config, store, service, metrics);
    spdlog::info("serving HTTP on {}:{} with {} event loop{}{}{}", config.listen.host, service.port(),
                 config.io_threads, config.io_threads == 1 ? "" : "s",
                 service.admin_port() ? " (admin on port " + std::to_string(*service.admin_port()) + ")" : "",
                 config.access_log ? ", access log " + config.access_log->string() : "");
    service.run(true, [&reloader] { reloader.reload(); });
    spdlog::info("HTTP server stopped");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string config_path;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (rest.empty() && (args[i] == "--help" || args[i] == "-h")) {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (rest.empty() && args[i] == "--config") {
            if (i + 1 >= args.size()) return usage_error("--config needs a file");
            config_path = args[++i];
        } else {
            rest.push_back(args[i]);
        }
    }
    if (config_path.empty()) return usage_error("--config CONFIG is required");
    if (rest.empty()) return usage_error("no command given");
    const std::string command = rest[0];
    const std::vector<std::string> command_args(rest.begin() + 1, rest.end());
    try {
        auto config = load_server_config_file(config_path);
        init_logging("server", config.log_level);
        if (command == "check") {
            if (!command_args.empty()) return usage_error("check takes no arguments");
            return run_check(config);
        }
        if (command == "ingest") return run_ingest(config, command_args);
        if (command == "verify") return run_verify(config, command_args);
        if (command == "sign") {
            const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
            return run_sign(config, command_args, now);
        }
        if (command == "serve") {
            if (!command_args.empty()) return usage_error("serve takes no arguments");
            return run_serve(config_path, config);
        }
        return usage_error("unknown command '" + command + "'");
    } catch (const ConfigError& e) {
        return fail(e.what());
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
