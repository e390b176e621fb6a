#include "server/core/server_config.hpp"

#include "toast/common/config.hpp"

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

}  // namespace

ServerConfig load_server_config(const nlohmann::json& json) {
    ConfigReader r(json);
    ServerConfig c;
    c.listen = endpoint_field(r, "listen", c.listen.to_string());

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

    auto policy_text = r.string("policy", "rda");
    auto policy = parse_placement_policy(policy_text);
    if (!policy) r.fail("policy", "expected naive, raid0, raid1, random or rda, got \"" + policy_text + "\"");
    c.policy = *policy;
    if (c.policy == PlacementPolicy::rda && c.disks.size() < 2)
        r.fail("policy", "rda needs at least 2 disks");
    if (c.policy == PlacementPolicy::raid1 && c.disks.size() % 2 != 0) {
        r.fail("policy", "raid1 needs an even number of disks, got " + std::to_string(c.disks.size()));
    }

    if (r.has("tier")) c.tier = load_tier_config(r.object("tier"));
    // A node of a tier is reached at its url in the tier list: torrents list every node's, so its own must be
    // the one the node is known by.
    const auto default_url = c.tier ? c.tier->self_node().url : "http://" + c.listen.to_string();
    c.public_url = r.string("public_url", default_url);
    if (c.tier && c.public_url != default_url && c.public_url != default_url + "/") {
        r.fail("public_url", "\"" + c.public_url + "\" is not this node's url in the tier (\"" + default_url +
                                 "\", tier.self \"" + c.tier->self_node().id + "\"); leave public_url out");
    }
    // The URL goes into every torrent's url-list, and the client's server fetcher speaks plain HTTP only:
    // a torrent naming an https:// server would be refused by every client that loads it.
    if (c.public_url.rfind("https://", 0) == 0) {
        r.fail("public_url",
               "https:// is not supported (toast-client fetches from the server over plain HTTP), got \"" +
                   c.public_url + "\"; use an http:// URL");
    }
    if (c.public_url.rfind("http://", 0) != 0 || c.public_url.size() == 7) {
        r.fail("public_url", "expected an http:// URL, got \"" + c.public_url + "\"");
    }
    while (!c.public_url.empty() && c.public_url.back() == '/')
        c.public_url.pop_back();
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

    c.open_files = r.uint("open_files", c.open_files, 16, 1'048'576);
    c.service_model_half_life = r.duration("service_model_half_life", c.service_model_half_life, 10ms, 24h);

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
    if (r.has("admission")) {
        auto a = r.object("admission");
        auto& ac = c.admission;
        ac.enabled = a.boolean("enabled", ac.enabled);
        ac.disk_share = a.number("disk_share", ac.disk_share, 0.01, 1.0);
        ac.network = a.bitrate("network", ac.network, BitRate(0), kMaxBitrate);
        ac.buffer = a.bytes("buffer", ac.buffer, Bytes(0), Bytes(1ull << 40));
        if (a.has("start_latency")) ac.start_latency = a.duration("start_latency", std::nullopt, 0s, 1h);
        const auto policy_name = a.string("start_policy", std::string(to_string(ac.start_policy)));
        const auto sp = parse_start_policy(policy_name);
        if (!sp) {
            a.fail("start_policy",
                   "expected greedy, minimal_load or last_scheduled, got \"" + policy_name + "\"");
        }
        ac.start_policy = *sp;
        const auto reservation = a.string("reserve", ac.reserve_peak ? "peak" : "trace");
        if (reservation != "peak" && reservation != "trace")
            a.fail("reserve", "expected trace or peak, got \"" + reservation + "\"");
        ac.reserve_peak = reservation == "peak";
        a.finish();
    }
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
    r.finish();
    return c;
}

ServerConfig load_server_config_file(const std::filesystem::path& path) {
    return load_server_config(load_json_file(path));
}

}  // namespace toast::server
