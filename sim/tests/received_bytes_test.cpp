#include <catch2/catch.hpp>

#include "sim/core/received_bytes.hpp"

using toast::sim::ReceivedBytes;

TEST_CASE("received bytes merge into disjoint spans and answer gaps", "[sim][swarm]") {
    ReceivedBytes r;
    CHECK(r.gap_from(0, 100) == std::pair<std::uint64_t, std::uint64_t>{0, 100});
    r.add(10, 20);
    r.add(30, 40);
    CHECK(r.spans().size() == 2);
    CHECK(r.gap_from(0, 100) == std::pair<std::uint64_t, std::uint64_t>{0, 10});
    CHECK(r.gap_from(10, 100) == std::pair<std::uint64_t, std::uint64_t>{20, 30});
    r.add(20, 30);
    CHECK(r.spans().size() == 1);
    CHECK(r.covers(10, 40));
    CHECK(!r.covers(5, 40));
    CHECK(r.total() == 30);
    r.add(0, 10);
    r.add(35, 100);
    CHECK(r.covers(0, 100));
    CHECK(r.gap_from(0, 100) == std::pair<std::uint64_t, std::uint64_t>{100, 100});
}
