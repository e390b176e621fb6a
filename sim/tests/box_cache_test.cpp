#include <catch2/catch.hpp>

#include "sim/core/box_cache.hpp"

using namespace toast::sim;
using toast::client::CachePolicy;

TEST_CASE("lru makes room for a new title by evicting the least recently watched", "[sim][cache]") {
    BoxCache c(CachePolicy::lru, 3, 1);
    c.add_warm(5, -1);  // the first drawn: the most recently watched
    c.add_warm(6, -2);
    c.add_warm(7, -3);
    CHECK(c.make_room(8, 10, {}) == std::vector<int>{7});
    CHECK(c.session_ended(8, 1, 20).empty());
    CHECK(c.make_room(5, 30, {}).empty());  // held already: it fits
    CHECK(c.session_ended(5, 1, 40).empty());
    CHECK(c.make_room(9, 50, {}) == std::vector<int>{6});
    CHECK(c.holds(5));
    CHECK(c.holds(8));
    CHECK(c.holds(9));
    CHECK(c.bytes() == 2);  // 9 counts once its session ends
}

TEST_CASE("popularity evicts the title whose swarm needs it least per byte, not the oldest", "[sim][cache]") {
    // 4 Mbps titles of 120 s, boxes uploading 1 Mbps. Title 0: 100 starts an hour (3.3 viewers) but 50 other
    // copies, so its swarm lacks nothing; title 1: 10 an hour (0.33 viewers), no other copy.
    BoxCache::Context ctx;
    ctx.demand = [](int t) { return t == 0 ? 100.0 : 10.0; };
    ctx.copies = [](int t) { return t == 0 ? std::int64_t{50} : std::int64_t{0}; };
    ctx.bitrate_bps = 4e6;
    ctx.duration_s = 120;
    ctx.upload_bps = 1e6;
    BoxCache pop(CachePolicy::popularity, 120e6, 60e6);
    pop.add_warm(0, -1);
    pop.add_warm(1, -2);
    CHECK(pop.make_room(2, 5, ctx) == std::vector<int>{0});
    BoxCache lru(CachePolicy::lru, 120e6, 60e6);
    lru.add_warm(0, -1);
    lru.add_warm(1, -2);
    CHECK(lru.make_room(2, 5, ctx) == std::vector<int>{1});
}

TEST_CASE("no cache removes each title when its session ends", "[sim][cache]") {
    BoxCache none(CachePolicy::none, 10, 1);
    CHECK(none.make_room(1, 0, {}).empty());
    CHECK(none.holds(1));
    CHECK(none.session_ended(1, 1, 5) == std::vector<int>{1});
    CHECK(!none.holds(1));
    CHECK(none.entries().empty());
}

TEST_CASE("the playing title is never evicted, even alone at the quota", "[sim][cache]") {
    BoxCache c(CachePolicy::lru, 1, 1);
    c.add_warm(3, -1);
    CHECK(c.make_room(4, 1, {}) == std::vector<int>{3});
    CHECK(c.session_ended(4, 0.5, 2).empty());
    CHECK(c.holds(4));
    CHECK(c.bytes() == 0.5);
}
