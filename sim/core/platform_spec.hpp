// The simulated network and servers, as plain data: the generator decides names, capacities and latencies;
// the SimGrid adapter (sim/sg/platform_builder) only builds what this describes.
//
// Shape: every box sits behind its own asymmetric access link (an uplink and, when given a capacity, a
// downlink, each a SimGrid link shared max-min by the flows crossing it), under an aggregation node (a DSLAM
// or OLT: `boxes_per_aggregation` boxes each) whose uplink and downlink to the core are modelled only when
// given a capacity (a link every flow of the node crosses ties them all into one sharing problem, which costs
// the simulation dearly, and at the operator's scale the access links are what binds). The same holds for a
// box's downlink: it ties every flow into the box to every other flow of its uploaders, and with downlinks a
// few times the bitrate it rarely binds; it is modelled when the scenario (download_limit) or the command
// line gives it. The head end holds the VoD server nodes, each with its NIC (100 Gbps when no capacity is
// given: the simulation then measures the bandwidth the service needs) and its disk array by the thesis's ch.
// 3 model, and the operator's seed beside them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "server/core/disk_model.hpp"

namespace toast::sim {

struct LinkSpec {
    std::string name;
    double bandwidth = 0;  // bytes per second
    double latency = 0;    // seconds
};

struct HostSpec {
    std::string name;
    int up = -1;    // index into PlatformSpec::links, or -1: none
    int down = -1;  // likewise
};

// A group of hosts behind one router, with the group's uplink and downlink to the core (-1: none).
struct ZoneSpec {
    std::string name;
    std::vector<HostSpec> hosts;
    int up = -1;
    int down = -1;
};

struct PlatformConfig {
    double access_latency_s = 0.0005;        // one way, box to its aggregation node
    std::optional<double> box_downlink_bps;  // absent: no downlink link (not a bound, as on the testbed)
    int boxes_per_aggregation = 1000;
    std::optional<double> aggregation_uplink_bps;  // absent: not modelled (no link)
    std::optional<double> aggregation_downlink_bps;
    double aggregation_latency_s = 0.001;
    int server_nodes = 1;
    std::optional<double> server_link_bps;  // per node; absent: kServerNicBps
    double server_latency_s = 0.0005;
    server::DiskArrayModel disks{4, std::chrono::milliseconds(0), BitRate(0)};  // r_d 0: reads cost nothing
    bool seed = false;
    double seed_uplink_bps = 0;  // 0: unlimited (1 Gbps)
};

struct PlatformSpec {
    std::vector<LinkSpec> links;
    std::vector<ZoneSpec> zones;  // aggregation zones first, then the head end
    // Where each box, server node and the seed are: (zone, host) indices.
    std::vector<std::pair<int, int>> box_at;
    std::vector<std::pair<int, int>> server_at;
    std::optional<std::pair<int, int>> seed_at;
    PlatformConfig config;

    // One-way latency between a box and a server node (links on the path).
    double box_server_latency(int box) const;
    double box_box_latency(int a, int b) const;
};

// One host per box with its uplink `uplinks_bps[b]`; bandwidths in bits per second in, bytes per second out.
PlatformSpec make_platform(const std::vector<double>& uplinks_bps, const PlatformConfig& config);

// Unlimited, for links the scenario does not bound: 1 Gbps, well above any access rate here.
inline constexpr double kUnboundedBps = 1e9;
// A server node's NIC when none is given: far above what any run here asks of it.
inline constexpr double kServerNicBps = 100e9;

}  // namespace toast::sim
