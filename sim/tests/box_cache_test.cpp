#include <catch2/catch.hpp>

#include "sim/core/box_cache.hpp"

using namespace toast::sim;

TEST_CASE("lru drops the least recently watched title past the quota", "[sim][cache]") {
    BoxCache c("lru", 3);
    CHECK(c.keep(5, 1, 0).empty());
    CHECK(c.keep(6, 1, 1).empty());
    CHECK(c.keep(7, 1, 2).empty());
    CHECK(c.keep(5, 1, 3).empty());  // 5 used again
    CHECK(c.keep(8, 1, 4) == std::vector<int>{6});
    CHECK(c.holds(5));
    CHECK(!c.holds(6));
    CHECK(c.bytes() == 3);
}

TEST_CASE("popularity drops the least popular title, even the one just watched", "[sim][cache]") {
    BoxCache c("popularity", 2);
    c.keep(0, 1, 0);
    c.keep(1, 1, 1);
    CHECK(c.keep(9, 1, 2) == std::vector<int>{9});
    CHECK(c.keep(0, 1, 3).empty());
}

TEST_CASE("no cache keeps nothing, and a title past the quota alone is not kept", "[sim][cache]") {
    BoxCache none("none", 10);
    CHECK(none.keep(1, 2, 0) == std::vector<int>{1});
    CHECK(!none.holds(1));
    BoxCache small("lru", 1);
    CHECK(small.keep(1, 2, 0) == std::vector<int>{1});
    CHECK(small.entries().empty());
}
