#include "sim/core/platform_spec.hpp"

#include <algorithm>

namespace toast::sim {

namespace {

int add_link(PlatformSpec& p, std::string name, double bps, double latency) {
    p.links.push_back({std::move(name), bps / 8.0, latency});
    return static_cast<int>(p.links.size()) - 1;
}

}  // namespace

PlatformSpec make_platform(const std::vector<double>& uplinks_bps, const PlatformConfig& c) {
    PlatformSpec p;
    p.config = c;
    const int boxes = static_cast<int>(uplinks_bps.size());
    const int per = std::max(1, c.boxes_per_aggregation);
    for (int first = 0; first < boxes; first += per) {
        ZoneSpec z;
        z.name = "agg" + std::to_string(p.zones.size());
        if (c.aggregation_uplink_bps)
            z.up = add_link(p, z.name + "-up", *c.aggregation_uplink_bps, c.aggregation_latency_s);
        if (c.aggregation_downlink_bps)
            z.down = add_link(p, z.name + "-down", *c.aggregation_downlink_bps, c.aggregation_latency_s);
        for (int b = first; b < std::min(boxes, first + per); ++b) {
            HostSpec h;
            h.name = "box" + std::to_string(b);
            h.up = add_link(p, h.name + "-up", uplinks_bps[static_cast<std::size_t>(b)], c.access_latency_s);
            if (c.box_downlink_bps)
                h.down = add_link(p, h.name + "-down", *c.box_downlink_bps, c.access_latency_s);
            p.box_at.emplace_back(static_cast<int>(p.zones.size()), static_cast<int>(z.hosts.size()));
            z.hosts.push_back(h);
        }
        p.zones.push_back(std::move(z));
    }
    ZoneSpec head;
    head.name = "headend";
    const int head_index = static_cast<int>(p.zones.size());
    for (int n = 0; n < std::max(1, c.server_nodes); ++n) {
        HostSpec h;
        h.name = "server" + std::to_string(n);
        const double nic = c.server_link_bps.value_or(kServerNicBps);
        h.up = add_link(p, h.name + "-nic-out", nic, c.server_latency_s);
        h.down = add_link(p, h.name + "-nic-in", nic, c.server_latency_s);
        p.server_at.emplace_back(head_index, static_cast<int>(head.hosts.size()));
        head.hosts.push_back(h);
    }
    if (c.seed) {
        HostSpec h;
        h.name = "seed";
        h.up = add_link(p, "seed-up", c.seed_uplink_bps > 0 ? c.seed_uplink_bps : kUnboundedBps,
                        c.server_latency_s);
        h.down = add_link(p, "seed-down", kUnboundedBps, c.server_latency_s);
        p.seed_at = std::pair{head_index, static_cast<int>(head.hosts.size())};
        head.hosts.push_back(h);
    }
    p.zones.push_back(std::move(head));
    return p;
}

double PlatformSpec::box_server_latency(int box) const {
    const auto [z, h] = box_at.at(static_cast<std::size_t>(box));
    double lat = links
                     .at(static_cast<std::size_t>(
                         zones[static_cast<std::size_t>(z)].hosts[static_cast<std::size_t>(h)].up))
                     .latency;
    const auto& zone = zones[static_cast<std::size_t>(z)];
    if (zone.up >= 0) lat += links[static_cast<std::size_t>(zone.up)].latency;
    lat += config.server_latency_s;
    return lat;
}

double PlatformSpec::box_box_latency(int a, int b) const {
    const auto [za, ha] = box_at.at(static_cast<std::size_t>(a));
    const auto [zb, hb] = box_at.at(static_cast<std::size_t>(b));
    const auto& A = zones[static_cast<std::size_t>(za)];
    const auto& B = zones[static_cast<std::size_t>(zb)];
    const auto& down = B.hosts[static_cast<std::size_t>(hb)];
    double lat =
        links[static_cast<std::size_t>(A.hosts[static_cast<std::size_t>(ha)].up)].latency +
        (down.down >= 0 ? links[static_cast<std::size_t>(down.down)].latency : config.access_latency_s);
    if (za != zb) {
        if (A.up >= 0) lat += links[static_cast<std::size_t>(A.up)].latency;
        if (B.down >= 0) lat += links[static_cast<std::size_t>(B.down)].latency;
    }
    return lat;
}

}  // namespace toast::sim
