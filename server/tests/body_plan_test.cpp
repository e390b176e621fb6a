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
    CHECK(items[0] == BodyItem{.offset = 100, .length = 100});
    CHECK(items[1] == BodyItem{.offset = 200, .length = 100});
    CHECK(items[2] == BodyItem{.offset = 300, .length = 50});
}

TEST_CASE("a multipart body interleaves prefixes with windows and ends with the trailer",
          "[server][http][plan]") {
    auto r = title_response(1000, {{0, 9}, {500, 649}}, "END");
    auto items = plan_body(r, 100);
    REQUIRE(items.size() == 6);
    CHECK(items[0] == BodyItem{.literal = true, .length = 2});  // "P0"
    CHECK(items[1] == BodyItem{.length = 10});
    CHECK(items[2] == BodyItem{.literal = true, .part = 1, .length = 2});
    CHECK(items[3] == BodyItem{.part = 1, .offset = 500, .length = 100});
    CHECK(items[4] == BodyItem{.part = 1, .offset = 600, .length = 50});
    CHECK(items[5] == BodyItem{.literal = true, .part = BodyItem::kTrailer, .length = 3});
}

TEST_CASE("a paced body is cut at every slice boundary and marks where slices start and end",
          "[server][http][plan]") {
    auto r = title_response(250, {{0, 249}});
    // Slices of 100 bytes, windows of 60: 60+40 | 60+40 | 50.
    const std::vector<std::uint64_t> slices{100, 100, 50};
    auto items = plan_body(r, 60, slices);
    REQUIRE(items.size() == 5);
    CHECK(items[0] == BodyItem{.length = 60, .slice_start = true});
    CHECK(items[1] == BodyItem{.offset = 60, .length = 40, .slice_end = true});
    CHECK(items[2] == BodyItem{.offset = 100, .length = 60, .slice_start = true});
    CHECK(items[3] == BodyItem{.offset = 160, .length = 40, .slice_end = true});
    CHECK(items[4] == BodyItem{.offset = 200, .length = 50, .slice_start = true, .slice_end = true});
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
    CHECK(items[0] == BodyItem{.length = 30, .slice_start = true, .slice_end = true});
    CHECK(items[1] == BodyItem{.offset = 30, .length = 60, .slice_start = true, .idle_before = 2});
    CHECK(items[2] == BodyItem{.offset = 90, .length = 60, .slice_end = true});
    CHECK(items[3] == BodyItem{.offset = 150, .length = 60, .slice_start = true});
    CHECK(items[4] == BodyItem{.offset = 210, .length = 40, .slice_end = true});
    // Bytes past the slices' sum are one last slice.
    const std::vector<std::uint64_t> short_slices{100};
    auto rest = plan_body(r, 200, short_slices);
    REQUIRE(rest.size() == 2);
    CHECK(rest[0] == BodyItem{.length = 100, .slice_start = true, .slice_end = true});
    CHECK(rest[1] == BodyItem{.offset = 100, .length = 150, .slice_start = true, .slice_end = true});
}
