#include "server/core/tier_config.hpp"

#include "toast/common/config.hpp"

namespace toast::server {

using namespace std::chrono_literals;

TierConfig load_tier_config(ConfigReader r) {
    TierConfig c;
    auto nodes = r.objects("nodes");
    for (auto& n : nodes) {
        TierNode node;
        node.id = n.string("id");
        node.url = n.string("url");
        while (!node.url.empty() && node.url.back() == '/')
            node.url.pop_back();
        n.finish();
        c.layout.nodes.push_back(std::move(node));
    }
    c.layout.replicas = static_cast<std::uint32_t>(
        r.uint("replicas", std::min<std::uint64_t>(2, c.layout.nodes.size()), 1, kMaxTierReplicas));
    const auto placement = r.string("placement", "block");
    const auto parsed = parse_tier_placement(placement);
    if (!parsed) r.fail("placement", "expected block or title, got \"" + placement + "\"");
    c.layout.placement = *parsed;
    if (auto problem = tier_problem(c.layout)) r.fail(problem->field, problem->problem);

    const auto self = r.string("self");
    const auto found = c.layout.find(self);
    if (!found) {
        std::string ids;
        for (const auto& n : c.layout.nodes)
            ids += (ids.empty() ? "" : ", ") + n.id;
        r.fail("self", "\"" + self + "\" is not the id of a node in tier.nodes (" + ids + ")");
    }
    c.self = *found;
    c.relay_timeout = r.duration("relay_timeout", c.relay_timeout, 50ms, 10min);
    c.status_interval = r.duration("status_interval", c.status_interval, 50ms, 10min);
    c.relay_connections = r.uint("relay_connections", c.relay_connections, 1, 256);
    r.finish();
    return c;
}

}  // namespace toast::server
