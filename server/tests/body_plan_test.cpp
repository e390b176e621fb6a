#include <catch2/catch.hpp>

#include "server/core/body_plan.hpp"

using namespace toast;
using namespace toast::server;

namespace {

HttpResponse title_response(std::uint64_t size, std::vector<ByteRange> ranges, std::string trailer = "") {
    auto info = std::make_shared<TitleInfo>();
    info->name = "t";
    info->size = size;
    HttpResponse r;
    r.title = info;
    for (std::size_t i = 0; i < ranges.size(); ++i)
        r.parts.push_back({trailer.empty() ? "" : "P" + std::to_string(i), ranges[i]});
    r.trailer = std::move(trailer);
    return r;
}

}  // namespace

TEST_CASE("an unpaced body is cut into windows of at most the window size", "[server][http][plan]") {
    auto r = title_response(1000, {{100, 349}});
    auto items = plan_body(r, 100);
    REQUIRE(items.size() == 3);
    CHECK(items[0] == BodyItem{false, 0, 100, 100, false, false});
    CHECK(items[1] == BodyItem{false, 0, 200, 100, false, false});
    CHECK(items[2] == BodyItem{false, 0, 300, 50, false, false});
}

TEST_CASE("a multipart body interleaves prefixes with windows and ends with the trailer",
          "[server][http][plan]") {
    auto r = title_response(1000, {{0, 9}, {500, 649}}, "END");
    auto items = plan_body(r, 100);
    REQUIRE(items.size() == 6);
    CHECK(items[0] == BodyItem{true, 0, 0, 2, false, false});  // "P0"
    CHECK(items[1] == BodyItem{false, 0, 0, 10, false, false});
    CHECK(items[2] == BodyItem{true, 1, 0, 2, false, false});
    CHECK(items[3] == BodyItem{false, 1, 500, 100, false, false});
    CHECK(items[4] == BodyItem{false, 1, 600, 50, false, false});
    CHECK(items[5] == BodyItem{true, BodyItem::kTrailer, 0, 3, false, false});
}

TEST_CASE("a paced body is cut at every slice boundary and marks where slices start and end",
          "[server][http][plan]") {
    auto r = title_response(250, {{0, 249}});
    // Slices of 100 bytes, windows of 60: 60+40 | 60+40 | 50.
    const std::vector<std::uint64_t> slices{100, 100, 50};
    auto items = plan_body(r, 60, slices);
    REQUIRE(items.size() == 5);
    CHECK(items[0] == BodyItem{false, 0, 0, 60, true, false});
    CHECK(items[1] == BodyItem{false, 0, 60, 40, false, true});
    CHECK(items[2] == BodyItem{false, 0, 100, 60, true, false});
    CHECK(items[3] == BodyItem{false, 0, 160, 40, false, true});
    CHECK(items[4] == BodyItem{false, 0, 200, 50, true, true});
    std::uint64_t total = 0;
    for (const auto& i : items)
        total += i.length;
    CHECK(total == 250);
}

TEST_CASE("a variable-rate body follows its slices and waits a round for each empty slice",
          "[server][http][plan]") {
    auto r = title_response(250, {{0, 249}});
    // A trace's rounds: 30, 0, 0, 120, 100 bytes; windows of 60.
    const std::vector<std::uint64_t> slices{30, 0, 0, 120, 100};
    auto items = plan_body(r, 60, slices);
    REQUIRE(items.size() == 5);
    CHECK(items[0] == BodyItem{false, 0, 0, 30, true, true, 0});
    CHECK(items[1] == BodyItem{false, 0, 30, 60, true, false, 2});
    CHECK(items[2] == BodyItem{false, 0, 90, 60, false, true, 0});
    CHECK(items[3] == BodyItem{false, 0, 150, 60, true, false, 0});
    CHECK(items[4] == BodyItem{false, 0, 210, 40, false, true, 0});
    // Bytes past the slices' sum are one last slice.
    const std::vector<std::uint64_t> short_slices{100};
    auto rest = plan_body(r, 200, short_slices);
    REQUIRE(rest.size() == 2);
    CHECK(rest[0] == BodyItem{false, 0, 0, 100, true, true, 0});
    CHECK(rest[1] == BodyItem{false, 0, 100, 150, true, true, 0});
}
