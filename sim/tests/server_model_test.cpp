#include <catch2/catch.hpp>

#include "sim/core/server_model.hpp"

using namespace toast::sim;
using namespace std::chrono_literals;

TEST_CASE("reads cost nothing when the disks have no transfer rate (the testbed's store)", "[sim][server]") {
    ServerModel m(ServerSetup{}, {{"t", 10'000'000, 2e6}});
    const auto r = m.read(0, 0, 262144, 5.0);
    CHECK(r.ready == 5.0);
    CHECK(r.node == 0);
}

TEST_CASE("a read costs t_a + B / r_d on the replica's disk that is free first", "[sim][server]") {
    ServerSetup s;
    s.disks = {2, 10ms, toast::BitRate(8'000'000)};  // 1 MB/s
    ServerModel m(s, {{"t", 100'000'000, 8e6}});
    // Blocks are r_c x t_b = 5 MB; each on both disks (two disks, RDA).
    const auto a = m.read(0, 0, 1'000'000, 0.0);
    CHECK(a.ready == Approx(1.010));
    // The same block again at once: its other replica is free.
    const auto b = m.read(0, 0, 1'000'000, 0.0);
    CHECK(b.ready == Approx(1.010));
    // A third: both disks are busy until 1.010; it waits for the first free.
    const auto c = m.read(0, 0, 500'000, 0.0);
    CHECK(c.ready == Approx(1.010 + 0.510));
    CHECK(m.reads() == 3);
    const auto& busy = m.busy();
    CHECK(busy[0][0] + busy[0][1] == Approx(1.010 + 1.010 + 0.510));
}

TEST_CASE("a read spanning two blocks waits for both", "[sim][server]") {
    ServerSetup s;
    s.disks = {2, 0ms, toast::BitRate(8'000'000)};
    s.time_slice = 1s;  // blocks of 1 MB at 8 Mbps
    ServerModel m(s, {{"t", 10'000'000, 8e6}});
    const auto r = m.read(0, 900'000, 200'000, 0.0);  // 100 kB of block 0, 100 kB of block 1
    CHECK(r.ready == Approx(0.1));
    CHECK(m.reads() == 2);
}

TEST_CASE("blocks spread over several nodes by rendezvous hashing", "[sim][server]") {
    ServerSetup s;
    s.nodes = 4;
    ServerModel m(s, {{"t", 1'000'000'000, 4e6}});
    std::vector<int> per(4, 0);
    for (std::uint64_t b = 0; b < 400; ++b)
        ++per[static_cast<std::size_t>(m.node_of(0, b))];
    for (int n : per) {
        CHECK(n > 60);
        CHECK(n < 140);
    }
    CHECK(m.node_of(0, 17) == m.node_of(0, 17));
}
