#include <catch2/catch.hpp>

#include "sim/core/platform_spec.hpp"

using namespace toast::sim;

TEST_CASE("each box gets its own uplink and downlink under its aggregation node", "[sim][platform]") {
    PlatformConfig c;
    c.boxes_per_aggregation = 2;
    c.box_downlink_bps = 20e6;
    const auto p = make_platform({1e6, 2e6, 4e6}, c);
    REQUIRE(p.zones.size() == 3);  // two aggregation nodes and the head end
    CHECK(p.zones[0].hosts.size() == 2);
    CHECK(p.zones[1].hosts.size() == 1);
    CHECK(p.zones[2].name == "headend");
    REQUIRE(p.box_at.size() == 3);
    const auto& box2 = p.zones[1].hosts[0];
    CHECK(box2.name == "box2");
    CHECK(p.links[static_cast<std::size_t>(box2.up)].bandwidth == 4e6 / 8);  // bytes per second
    CHECK(p.links[static_cast<std::size_t>(box2.down)].bandwidth == 20e6 / 8);
    CHECK(p.links[static_cast<std::size_t>(box2.up)].latency == c.access_latency_s);
    // No aggregation capacity given: no aggregation links.
    CHECK(p.zones[0].up == -1);
    CHECK(p.zones[0].down == -1);
    CHECK(p.server_at.size() == 1);
    CHECK(!p.seed_at);
    CHECK(p.box_box_latency(0, 2) == Approx(2 * c.access_latency_s));
}

TEST_CASE("aggregation links, server NICs and the seed appear when configured", "[sim][platform]") {
    PlatformConfig c;
    c.boxes_per_aggregation = 1;
    c.aggregation_uplink_bps = 1e9;
    c.aggregation_downlink_bps = 10e9;
    c.server_nodes = 3;
    c.server_link_bps = 10e9;
    c.seed = true;
    c.seed_uplink_bps = 2e6;
    const auto p = make_platform({1e6, 1e6}, c);
    REQUIRE(p.zones.size() == 3);
    CHECK(p.links[static_cast<std::size_t>(p.zones[0].up)].bandwidth == 1e9 / 8);
    CHECK(p.links[static_cast<std::size_t>(p.zones[1].down)].bandwidth == 10e9 / 8);
    CHECK(p.server_at.size() == 3);
    const auto& head = p.zones[2];
    CHECK(head.hosts.size() == 4);
    CHECK(p.links[static_cast<std::size_t>(head.hosts[0].up)].bandwidth == 10e9 / 8);
    REQUIRE(p.seed_at);
    CHECK(p.links[static_cast<std::size_t>(head.hosts[3].up)].bandwidth == 2e6 / 8);
    CHECK(p.box_server_latency(0) ==
          Approx(c.access_latency_s + c.aggregation_latency_s + c.server_latency_s));
    CHECK(p.box_box_latency(0, 1) == Approx(2 * c.access_latency_s + 2 * c.aggregation_latency_s));
}

TEST_CASE("without a downlink capacity a box has no downlink, and an unlimited seed runs at 1 Gbps",
          "[sim][platform]") {
    PlatformConfig c;
    c.seed = true;
    const auto p = make_platform({1e6}, c);
    CHECK(p.zones[0].hosts[0].down == -1);
    const auto& head = p.zones[1];
    CHECK(p.links[static_cast<std::size_t>(head.hosts[0].up)].bandwidth == kServerNicBps / 8);
    CHECK(p.links[static_cast<std::size_t>(head.hosts[1].up)].bandwidth == kUnboundedBps / 8);
}
