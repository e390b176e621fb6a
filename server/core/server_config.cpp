#include "server/core/server_config.hpp"

#include "toast/common/access_token.hpp"
#include "toast/common/config.hpp"
#include "toast/common/read_file.hpp"
#include "toast/common/text.hpp"

namespace toast::server {

std::optional<PlacementPolicy> parse_placement_policy(std::string_view text) {
    if (text == "naive") return PlacementPolicy::naive;
    if (text == "raid0") return PlacementPolicy::raid0;
    if (text == "raid1") return PlacementPolicy::raid1;
    if (text == "random") return PlacementPolicy::random;
    if (text == "rda") return PlacementPolicy::rda;
    return std::nullopt;
}

std::optional<QueueOrder> parse_queue_order(std::string_view text) {
    if (text == "fifo") return QueueOrder::fifo;
    if (text == "cscan") return QueueOrder::cscan;
    if (text == "edf") return QueueOrder::edf;
    return std::nullopt;
}

std::string_view to_string(QueueOrder order) {
    switch (order) {
        case QueueOrder::cscan:
            return "cscan";
        case QueueOrder::edf:
            return "edf";
        case QueueOrder::fifo:
            break;
    }
    return "fifo";
}

std::optional<StartPolicy> parse_start_policy(std::string_view text) {
    if (text == "greedy") return StartPolicy::greedy;
    if (text == "minimal_load") return StartPolicy::minimal_load;
    if (text == "last_scheduled") return StartPolicy::last_scheduled;
    return std::nullopt;
}

std::string_view to_string(StartPolicy policy) {
    switch (policy) {
        case StartPolicy::minimal_load:
            return "minimal_load";
        case StartPolicy::last_scheduled:
            return "last_scheduled";
        default:
            return "greedy";
    }
}

std::vector<std::filesystem::path> disk_paths(const ServerConfig& config) {
    std::vector<std::filesystem::path> out;
    for (const auto& d : config.disks)
        out.push_back(d.path);
    return out;
}

std::string_view to_string(PlacementPolicy p) {
    switch (p) {
        case PlacementPolicy::naive:
            return "naive";
        case PlacementPolicy::raid0:
            return "raid0";
        case PlacementPolicy::raid1:
            return "raid1";
        case PlacementPolicy::random:
            return "random";
        case PlacementPolicy::rda:
            return "rda";
    }
    return "?";
}

using namespace std::chrono_literals;

void read_disk_fault(ConfigReader& r, DiskFault& f) {
    f.stutter_pct = r.number("stutter_pct", f.stutter_pct, 0.0, 10000.0);
    // Every read of the disk waits this long: beyond minutes the disk is offline in all but name.
    f.added_latency = r.duration("added_latency", f.added_latency, 0s, 10min);
    f.offline = r.boolean("offline", f.offline);
}

namespace {

Endpoint endpoint_field(ConfigReader& r, std::string_view key, std::string fallback) {
    auto text = r.string(key, std::move(fallback));
    auto ep = parse_endpoint(text);
    if (!ep) r.fail(key, "expected HOST:PORT, got \"" + text + "\"");
    return *ep;
}

DiskFault load_fault(ConfigReader r) {
    DiskFault f;
    read_disk_fault(r, f);
    r.finish();
    return f;
}

DiskConfig load_disk(ConfigReader r) {
    DiskConfig d;
    d.path = r.string("path");
    if (d.path.empty()) r.fail("path", "must not be empty");
    d.workers = static_cast<unsigned>(r.uint("workers", 1, 1, 64));
    if (r.has("emulate")) {
        auto e = r.object("emulate");
        DiskEmulation em;
        em.access_time = e.duration("t_a", std::nullopt, 0s, 10s);
        em.transfer_rate = e.bitrate("r_d", std::nullopt, BitRate(1'000'000), BitRate(100'000'000'000));
        em.full_seek = e.duration("full_seek", 0s, 0s, 30s);
        // The seek model keeps t_a as the mean over random positions: its fixed part t_a - full_seek/3 must
        // not be negative.
        if (em.full_seek > 3 * em.access_time) e.fail("full_seek", "must be at most 3 x t_a");
        e.finish();
        d.emulation = em;
    }
    d.fault = load_fault(r.object("fault"));
    r.finish();
    return d;
}

// `disks`: each a directory, or an object with its path, workers, emulation and fault.
void load_disks(ConfigReader& r, ServerConfig& c) {
    const auto& disks = r.raw("disks");
    if (!disks.is_array() || disks.empty()) r.fail("disks", "expected a non-empty array of directories");
    for (std::size_t i = 0; i < disks.size(); ++i) {
        const auto& d = disks[i];
        std::string name = "disks[" + std::to_string(i) + "]";
        if (d.is_string()) {
            if (d.get<std::string>().empty()) r.fail(name, "must not be empty");
            DiskConfig dc;
            dc.path = d.get<std::string>();
            c.disks.push_back(dc);
        } else {
            c.disks.push_back(load_disk(ConfigReader(d, name)));
        }
    }
}

// `policy`, checked against the number of disks.
void load_policy(ConfigReader& r, ServerConfig& c) {
    auto policy_text = r.string("policy", "rda");
    auto policy = parse_placement_policy(policy_text);
    if (!policy) r.fail("policy", "expected naive, raid0, raid1, random or rda, got \"" + policy_text + "\"");
    c.policy = *policy;
    if (c.policy == PlacementPolicy::rda && c.disks.size() < 2)
        r.fail("policy", "rda needs at least 2 disks");
    if (c.policy == PlacementPolicy::raid1 && c.disks.size() % 2 != 0) {
        r.fail("policy", "raid1 needs an even number of disks, got " + std::to_string(c.disks.size()));
    }
}

// `public_url`. A node of a tier is reached at its url in the tier list: torrents list every node's, so its
// own must be the one the node is known by.
void load_public_url(ConfigReader& r, ServerConfig& c) {
    const auto default_url =
        c.tier ? c.tier->self_node().url : (c.tls ? "https://" : "http://") + c.listen.to_string();
    c.public_url = r.string("public_url", default_url);
    if (c.tier && c.public_url != default_url && c.public_url != default_url + "/") {
        r.fail("public_url", "\"" + c.public_url + "\" is not this node's url in the tier (\"" + default_url +
                                 "\", tier.self \"" + c.tier->self_node().id + "\"); leave public_url out");
    }
    if ((c.public_url.rfind("http://", 0) != 0 || c.public_url.size() == 7) &&
        (c.public_url.rfind("https://", 0) != 0 || c.public_url.size() == 8)) {
        r.fail("public_url", "expected an http:// or https:// URL, got \"" + c.public_url + "\"");
    }
    while (!c.public_url.empty() && c.public_url.back() == '/')
        c.public_url.pop_back();
}

// How titles are cut and stored: placement seed, time slice, disk queue order, block, bitrate and piece
// defaults, open files, the service-time model.
void load_storage(ConfigReader& r, ServerConfig& c) {
    c.placement_seed = r.uint("placement_seed", c.placement_seed);
    c.time_slice = r.duration("time_slice", c.time_slice, 100ms, 10min);
    const auto order_text = r.string("disk_order", std::string(to_string(c.disk_order)));
    const auto order = parse_queue_order(order_text);
    if (!order) r.fail("disk_order", "expected fifo, cscan or edf, got \"" + order_text + "\"");
    c.disk_order = *order;
    if (r.has("block_size")) {
        c.block_size = r.bytes("block_size", std::nullopt, kMinBlockSize, kMaxBlockSize);
    }
    c.default_bitrate = r.bitrate("default_bitrate", c.default_bitrate, kMinBitrate, kMaxBitrate);
    c.piece_size = r.bytes("piece_size", c.piece_size, Bytes(16 * 1024), Bytes(64 * 1024 * 1024));
    auto ps = c.piece_size.value();
    if ((ps & (ps - 1)) != 0) r.fail("piece_size", "must be a power of two, got " + std::to_string(ps));
    c.private_torrents = r.boolean("private_torrents", c.private_torrents);
    if (r.has("peer_ca")) {
        const auto path = r.string("peer_ca");
        if (path.empty()) r.fail("peer_ca", "must not be empty (leave it out for torrents without a CA)");
        c.peer_ca = path;
    }
    c.open_files = r.uint("open_files", c.open_files, 16, 1'048'576);
    c.service_model_half_life = r.duration("service_model_half_life", c.service_model_half_life, 10ms, 24h);
}

// The HTTP side: threads, connections and their limits, the admin listener.
void load_http(ConfigReader& r, ServerConfig& c) {
    c.io_threads = static_cast<unsigned>(r.uint("io_threads", c.io_threads, 1, 256));
    c.max_connections = r.uint("max_connections", c.max_connections, 1, 1'000'000);
    // Below a tenth of a second a client cannot even send its request line before the connection is closed.
    c.idle_timeout = r.duration("idle_timeout", c.idle_timeout, 100ms, 1h);
    c.header_limit = r.uint("header_limit", c.header_limit, 512, 1 << 20);
    c.max_pipelined = r.uint("max_pipelined", c.max_pipelined, 1, 1024);
    c.max_ranges = r.uint("max_ranges", c.max_ranges, 1, 1024);
    c.max_multipart_bytes =
        r.bytes("max_multipart_bytes", c.max_multipart_bytes, Bytes(1024), Bytes(16ull * 1024 * 1024 * 1024));
    if (r.has("admin_listen")) c.admin_listen = endpoint_field(r, "admin_listen", "");
}

// `admission`: on unless it says otherwise, present or not.
AdmissionConfig load_admission(ConfigReader a, AdmissionConfig ac) {
    ac.enabled = a.boolean("enabled", ac.enabled);
    ac.disk_share = a.number("disk_share", ac.disk_share, 0.01, 1.0);
    ac.network = a.bitrate("network", ac.network, BitRate(0), kMaxBitrate);
    ac.buffer = a.bytes("buffer", ac.buffer, Bytes(0), Bytes(1ull << 40));
    if (a.has("start_latency")) ac.start_latency = a.duration("start_latency", std::nullopt, 0s, 1h);
    const auto policy_name = a.string("start_policy", std::string(to_string(ac.start_policy)));
    const auto sp = parse_start_policy(policy_name);
    if (!sp)
        a.fail("start_policy",
               "expected greedy, minimal_load or last_scheduled, got \"" + policy_name + "\"");
    ac.start_policy = *sp;
    const auto reservation = a.string("reserve", ac.reserve_peak ? "peak" : "trace");
    if (reservation != "peak" && reservation != "trace")
        a.fail("reserve", "expected trace or peak, got \"" + reservation + "\"");
    ac.reserve_peak = reservation == "peak";
    a.finish();
    return ac;
}

// `access_log` and `log_level`.
void load_logging(ConfigReader& r, ServerConfig& c) {
    if (r.has("access_log")) {
        auto log = r.object("access_log");
        auto path = log.string("path");
        if (path.empty()) log.fail("path", "must not be empty (leave access_log out for no access log)");
        c.access_log = path;
        log.finish();
    }
    c.log_level = r.string("log_level", c.log_level);
    if (c.log_level != "trace" && c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" &&
        c.log_level != "error" && c.log_level != "off") {
        r.fail("log_level", "expected trace, debug, info, warn, error or off, got \"" + c.log_level + "\"");
    }
}

// Messages never show a secret: only where it came from and what is wrong with it.
std::string secret_from_hex(ConfigReader& r, std::string_view field, std::string_view hex) {
    while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r' || hex.back() == ' '))
        hex.remove_suffix(1);
    if (hex.size() % 2 != 0) r.fail(field, "expected hex digits in pairs");
    std::string out;
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const int hi = hex_digit(hex[i]);
        const int lo = hex_digit(hex[i + 1]);
        if (hi < 0 || lo < 0) r.fail(field, "expected hex digits only");
        out += static_cast<char>(hi * 16 + lo);
    }
    if (out.size() < kMinSecretBytes || out.size() > kMaxSecretBytes) {
        r.fail(field, "expected " + std::to_string(kMinSecretBytes) + " to " +
                          std::to_string(kMaxSecretBytes) + " bytes (" + std::to_string(2 * kMinSecretBytes) +
                          "+ hex digits, e.g. `openssl rand -hex 32`), got " + std::to_string(out.size()));
    }
    return out;
}

AccessKey load_access_key(ConfigReader r) {
    AccessKey k;
    k.id = r.string("id");
    if (!valid_key_id(k.id)) r.fail("id", "expected 1-32 characters of [A-Za-z0-9._-], got \"" + k.id + "\"");
    const bool inline_secret = r.has("secret");
    const bool file_secret = r.has("secret_file");
    if (inline_secret == file_secret) r.fail("secret", "give exactly one of secret (hex) and secret_file");
    if (inline_secret) {
        k.secret = secret_from_hex(r, "secret", r.string("secret"));
    } else {
        const auto path = r.string("secret_file");
        std::string text;
        try {
            text = read_file(path);
        } catch (const FileReadError& e) {
            r.fail("secret_file", e.what());
        }
        k.secret = secret_from_hex(r, "secret_file", text);
    }
    r.finish();
    return k;
}

AccessPolicy load_access(ConfigReader r) {
    AccessPolicy a;
    if (r.has("keys")) {
        const auto& keys = r.raw("keys");
        if (!keys.is_array())
            r.fail("keys", "expected an array of {\"id\", \"secret\" or \"secret_file\"} objects");
        for (std::size_t i = 0; i < keys.size(); ++i) {
            const auto name = "access.keys[" + std::to_string(i) + "]";
            if (!keys[i].is_object()) throw ConfigError("config field '" + name + "': expected an object");
            // Checked here rather than by finish(), whose message shows the value: a misspelt "secret" would
            // print the secret.
            for (const auto& [field, value] : keys[i].items()) {
                if (field != "id" && field != "secret" && field != "secret_file")
                    throw ConfigError("config field '" + name + "." + field +
                                      "': unknown field (value not shown)");
            }
            auto k = load_access_key(ConfigReader(keys[i], name));
            if (a.key(k.id)) r.fail("keys", "two keys have the id \"" + k.id + "\"");
            a.keys.push_back(std::move(k));
        }
    }
    if (!a.keys.empty()) a.signing_key = a.keys.front().id;
    if (r.has("signing_key")) {
        a.signing_key = r.string("signing_key");
        if (!a.key(a.signing_key)) r.fail("signing_key", "names no key in keys: \"" + a.signing_key + "\"");
    }
    for (const auto& s : r.strings("revoked_subscribers", std::vector<std::string>{})) {
        if (!valid_subscriber(s)) r.fail("revoked_subscribers", "not a subscriber id: \"" + s + "\"");
        a.revoked_subscribers.insert(s);
    }
    r.finish();
    return a;
}

TlsConfig load_tls(ConfigReader r) {
    TlsConfig t;
    t.certificate_chain = r.string("certificate_chain");
    if (t.certificate_chain.empty()) r.fail("certificate_chain", "must not be empty");
    t.private_key = r.string("private_key");
    if (t.private_key.empty()) r.fail("private_key", "must not be empty");
    r.finish();
    return t;
}

TelemetryConfig load_telemetry(ConfigReader r) {
    TelemetryConfig t;
    t.enabled = r.boolean("enabled", t.enabled);
    t.max_body = r.bytes("max_body", Bytes(t.max_body), Bytes(256), Bytes(64 * 1024)).value();
    t.per_subscriber_per_minute =
        r.number("per_subscriber_per_minute", t.per_subscriber_per_minute, 0.01, 6000);
    t.per_subscriber_burst = r.uint("per_subscriber_burst", t.per_subscriber_burst, 1, 10'000);
    t.overall_per_second = r.number("overall_per_second", t.overall_per_second, 0.01, 1'000'000);
    t.overall_burst = r.uint("overall_burst", t.overall_burst, 1, 10'000'000);
    t.tracked_subscribers = r.uint("tracked_subscribers", t.tracked_subscribers, 16, 100'000'000);
    r.finish();
    return t;
}

}  // namespace

ServerConfig load_server_config(const nlohmann::json& json) {
    ConfigReader r(json);
    ServerConfig c;
    c.listen = endpoint_field(r, "listen", c.listen.to_string());
    load_disks(r, c);
    load_policy(r, c);
    if (r.has("tls")) c.tls = load_tls(r.object("tls"));
    if (r.has("tier")) c.tier = load_tier_config(r.object("tier"));
    // The nodes of a tier read each other's blocks over plain HTTP (tier URLs are http://).
    if (c.tier && c.tls)
        r.fail("tier",
               "a node of a tier cannot serve TLS (the nodes relay to each other over http://); "
               "leave out tls, or put a TLS proxy in front of each node");
    load_public_url(r, c);
    load_storage(r, c);
    load_http(r, c);
    if (r.has("admission")) c.admission = load_admission(r.object("admission"), c.admission);
    if (r.has("demand")) c.demand = load_demand_config(r.object("demand"));
    if (r.has("push")) c.push = load_push_config(r.object("push"));
    if (r.has("access")) c.access = load_access(r.object("access"));
    if (r.has("telemetry")) c.telemetry = load_telemetry(r.object("telemetry"));
    load_logging(r, c);
    r.finish();
    return c;
}

ServerConfig load_server_config_file(const std::filesystem::path& path) {
    return load_server_config(load_json_file(path));
}

}  // namespace toast::server
