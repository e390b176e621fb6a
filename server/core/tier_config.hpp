// The server's place in a tier of nodes (config `tier`): every node of the tier is configured with the same
// node list and its own `self`. Blocks of each title live on `replicas` nodes by rendezvous placement
// (toast/common/tier.hpp); a node serves the blocks it holds from its disks and relays the others from a
// node that holds them. docs/server-storage.md "A tier of nodes" describes every field.
#pragma once

#include <chrono>
#include <cstddef>

#include "toast/common/tier.hpp"

namespace toast {
class ConfigReader;
}

namespace toast::server {

struct TierConfig {
    TierLayout layout;
    NodeIndex self;
    // A relayed read, or a status poll, that a node has not answered within this long fails over to the
    // block's other holder (and counts as that node's failure).
    std::chrono::nanoseconds relay_timeout = std::chrono::seconds(2);
    // How often each node asks the others for their load and their room for paced streams (GET /tier).
    std::chrono::nanoseconds status_interval = std::chrono::seconds(1);
    // Keep-alive connections this node opens to each other node for relayed reads.
    std::size_t relay_connections = 8;

    const TierNode& self_node() const { return layout.node(self); }
    bool operator==(const TierConfig&) const = default;
};

// Reads the `tier` object. Throws ConfigError naming the field ("tier.nodes[1].url") and the value.
TierConfig load_tier_config(toast::ConfigReader reader);

}  // namespace toast::server
