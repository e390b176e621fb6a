// Builds a PlatformSpec in SimGrid: one star zone per aggregation node (its boxes' access links as each box's
// up and down routes), a head-end star zone (the server nodes, the seed), and a root star zone joining them
// through each zone's router and, where the spec gives one, its uplink and downlink.
#pragma once

#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/core/platform_spec.hpp"

namespace toast::sim {

struct BuiltPlatform {
    std::vector<simgrid::s4u::Host*> boxes;
    std::vector<simgrid::s4u::Host*> servers;
    simgrid::s4u::Host* seed = nullptr;
};

// Call once, before the engine runs.
BuiltPlatform build_platform(const PlatformSpec& spec);

}  // namespace toast::sim
