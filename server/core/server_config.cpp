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

namespace {

Endpoint endpoint_field(ConfigReader& r, std::string_view key, std::string fallback) {
    auto text = r.string(key, std::move(fallback));
    auto ep = parse_endpoint(text);
    if (!ep) r.fail(key, "expected HOST:PORT, got \"" + text + "\"");
    return *ep;
}

DiskFault load_fault(ConfigReader r) {
    DiskFault f;
    f.stutter_pct = r.number("stutter_pct", 0.0, 0.0, 10000.0);
    f.added_latency = r.duration("added_latency", std::chrono::nanoseconds(0));
    f.offline = r.boolean("offline", false);
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
        em.access_time = e.duration("t_a");
        em.transfer_rate = e.bitrate("r_d");
        if (em.transfer_rate.value() == 0) e.fail("r_d", "must be greater than 0");
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

    c.public_url = r.string("public_url", "http://" + c.listen.to_string());
    if (c.public_url.rfind("http://", 0) != 0 && c.public_url.rfind("https://", 0) != 0) {
        r.fail("public_url", "expected an http:// or https:// URL, got \"" + c.public_url + "\"");
    }
    while (!c.public_url.empty() && c.public_url.back() == '/')
        c.public_url.pop_back();
    c.placement_seed = r.uint("placement_seed", c.placement_seed);
    c.time_slice = r.duration("time_slice", c.time_slice);
    if (c.time_slice.count() <= 0) r.fail("time_slice", "must be greater than 0");
    if (r.has("block_size")) {
        c.block_size = r.bytes("block_size");
        if (c.block_size->value() == 0) r.fail("block_size", "must be greater than 0");
    }
    c.default_bitrate = r.bitrate("default_bitrate", c.default_bitrate);
    if (c.default_bitrate.value() == 0) r.fail("default_bitrate", "must be greater than 0");
    c.piece_size = r.bytes("piece_size", c.piece_size);
    auto ps = c.piece_size.value();
    if (ps < 16 * 1024 || (ps & (ps - 1)) != 0) {
        r.fail("piece_size", "must be a power of two of at least 16 KiB, got " + std::to_string(ps));
    }

    c.open_files = r.uint("open_files", c.open_files, 16, 1'048'576);
    c.service_model_half_life = r.duration("service_model_half_life", c.service_model_half_life);
    if (c.service_model_half_life.count() <= 0) r.fail("service_model_half_life", "must be greater than 0");

    c.io_threads = static_cast<unsigned>(r.uint("io_threads", c.io_threads, 1, 256));
    c.max_connections = r.uint("max_connections", c.max_connections, 1, 1'000'000);
    c.idle_timeout = r.duration("idle_timeout", c.idle_timeout);
    c.header_limit = r.uint("header_limit", c.header_limit, 512, 1 << 20);
    c.max_pipelined = r.uint("max_pipelined", c.max_pipelined, 1, 1024);
    c.max_ranges = r.uint("max_ranges", c.max_ranges, 1, 1024);
    c.max_multipart_bytes = r.bytes("max_multipart_bytes", c.max_multipart_bytes);
    if (r.has("admin_listen")) c.admin_listen = endpoint_field(r, "admin_listen", "");
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
