#include <catch2/catch.hpp>

#include "client/core/client_tuning.hpp"
#include "sim/core/request_pipeline.hpp"

using toast::sim::reported_queue;
using toast::sim::RequestPipeline;

namespace {
constexpr std::uint64_t kBlock = 16 * 1024;
}

TEST_CASE("a connection starts with 4 requests and one more for every block received", "[sim][swarm]") {
    RequestPipeline p;
    CHECK(p.slow_start());
    CHECK(p.depth(0, 0) == 4);
    CHECK(p.depth(1000, kBlock - 1) == 4);
    CHECK(p.depth(1000, 3 * kBlock) == 7);
    CHECK(p.depth(1000, 10'000 * kBlock) == 500);
}

TEST_CASE("slow start ends when a second grows by 5 kB or less while the peer unchokes us", "[sim][swarm]") {
    RequestPipeline p;
    p.on_rate(10'000, 1.0, true);  // nothing came the second before
    CHECK(p.slow_start());
    p.on_rate(15'001, 1.0, true);  // grew by more than 5 kB
    CHECK(p.slow_start());
    p.on_rate(20'000, 1.0, false);  // choked: no requests could ramp up
    CHECK(p.slow_start());
    p.on_rate(25'000, 1.0, true);  // 20,000 + 5,000 >= 25,000
    CHECK_FALSE(p.slow_start());
    p.on_rate(1'000'000, 1.0, true);  // once over, it stays over
    CHECK_FALSE(p.slow_start());

    RequestPipeline q;
    q.on_rate(0, 1.0, true);
    q.on_rate(0, 1.0, true);  // nothing at all: still ramping
    CHECK(q.slow_start());
    q.on_rate(4'000, 0.5, true);  // 2,000 bytes in half a second
    q.on_rate(2'000, 2.0, true);  // 4,000 bytes in two: no growth past the slack
    CHECK_FALSE(q.slow_start());
}

TEST_CASE("losing interest ends slow start", "[sim][swarm]") {
    RequestPipeline p;
    p.on_not_interested();
    CHECK_FALSE(p.slow_start());
    CHECK(p.depth(0, 100 * kBlock) == 2);
}

TEST_CASE("after slow start the queue is the blocks the peer delivers in 3 s, 2 to 500", "[sim][swarm]") {
    RequestPipeline p;
    p.on_not_interested();
    CHECK(p.depth(0, 0) == 2);
    CHECK(p.depth(10'000, 0) == 2);  // the operator's peer shared by many viewers
    CHECK(p.depth(21'845, 0) == 3);  // 3 x 21,845 < 4 blocks
    CHECK(p.depth(21'846, 0) == 4);
    CHECK(p.depth(500'000, 0) == 91);  // a 4 Mbit/s peer
    CHECK(p.depth(1e9, 0) == 500);
    // Below the first rate that fills a queue of saturated_queue blocks the controller never samples it.
    const int saturated = toast::client::ClientTuning{}.saturated_queue;
    CHECK(p.depth(21'845, 0) < saturated);
    CHECK(p.depth(21'846, 0) >= saturated);
}

TEST_CASE("the box reads what the model asked for, as deep as libtorrent keeps it", "[sim][swarm]") {
    CHECK(reported_queue(16, 2) == 2);  // a whole piece asked of a slow peer: libtorrent asks 2 blocks
    CHECK(reported_queue(1, 4) == 1);   // the last block of a transfer
    CHECK(reported_queue(0, 4) == 0);
}
