#include "sim/sg/platform_builder.hpp"

namespace sg4 = simgrid::s4u;

namespace toast::sim {

BuiltPlatform build_platform(const PlatformSpec& spec) {
    BuiltPlatform out;
    auto* root = sg4::create_star_zone("root");
    std::vector<sg4::Link*> links(spec.links.size(), nullptr);
    auto link = [&](sg4::NetZone* zone, int i) -> sg4::Link* {
        auto& l = links[static_cast<std::size_t>(i)];
        if (!l) {
            const auto& s = spec.links[static_cast<std::size_t>(i)];
            l = zone->create_link(s.name, s.bandwidth)->set_latency(s.latency)->seal();
        }
        return l;
    };
    std::vector<std::vector<sg4::Host*>> hosts(spec.zones.size());
    for (std::size_t z = 0; z < spec.zones.size(); ++z) {
        const auto& zs = spec.zones[z];
        auto* zone = sg4::create_star_zone(zs.name);
        zone->set_parent(root);
        auto* router = zone->create_router(zs.name + "-router");
        for (const auto& h : zs.hosts) {
            auto* host = zone->create_host(h.name, 1e9)->seal();
            std::vector<sg4::LinkInRoute> up, down;
            if (h.up >= 0) up.emplace_back(link(zone, h.up));
            if (h.down >= 0) down.emplace_back(link(zone, h.down));
            zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, false);
            zone->add_route(nullptr, host->get_netpoint(), nullptr, nullptr, down, false);
            hosts[z].push_back(host);
        }
        zone->seal();
        std::vector<sg4::LinkInRoute> up, down;
        if (zs.up >= 0) up.emplace_back(link(root, zs.up));
        if (zs.down >= 0) down.emplace_back(link(root, zs.down));
        root->add_route(zone->get_netpoint(), nullptr, router, nullptr, up, false);
        root->add_route(nullptr, zone->get_netpoint(), nullptr, router, down, false);
    }
    root->seal();
    auto at = [&](const std::pair<int, int>& p) {
        return hosts[static_cast<std::size_t>(p.first)][static_cast<std::size_t>(p.second)];
    };
    for (const auto& p : spec.box_at)
        out.boxes.push_back(at(p));
    for (const auto& p : spec.server_at)
        out.servers.push_back(at(p));
    if (spec.seed_at) out.seed = at(*spec.seed_at);
    return out;
}

}  // namespace toast::sim
