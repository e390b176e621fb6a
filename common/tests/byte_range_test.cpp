#include <catch2/catch.hpp>

#include <string>

#include "toast/common/byte_range.hpp"

using namespace toast;

namespace Catch {
template <>
struct StringMaker<ByteRange> {
    static std::string convert(const ByteRange& r) {
        return std::to_string(r.first) + "-" + std::to_string(r.last);
    }
};
}  // namespace Catch

namespace {

std::vector<ByteRange> ranges_of(std::string_view header, std::uint64_t length, RangeLimits limits = {}) {
    auto r = parse_range_header(header, length, limits);
    REQUIRE(r.status == RangeStatus::satisfiable);
    return r.ranges;
}

RangeStatus status_of(std::string_view header, std::uint64_t length, RangeLimits limits = {}) {
    return parse_range_header(header, length, limits).status;
}

}  // namespace

TEST_CASE("a first-last range selects exactly those bytes", "[common][range]") {
    CHECK(ranges_of("bytes=0-499", 10000) == std::vector<ByteRange>{{0, 499}});
    CHECK(ranges_of("bytes=500-999", 10000) == std::vector<ByteRange>{{500, 999}});
    CHECK(ranges_of("bytes=9999-9999", 10000) == std::vector<ByteRange>{{9999, 9999}});
    CHECK(ranges_of("bytes=0-0", 1) == std::vector<ByteRange>{{0, 0}});
    CHECK(ByteRange{500, 999}.length() == 500);
}

TEST_CASE("a last-pos past the end is clamped to the last byte", "[common][range]") {
    CHECK(ranges_of("bytes=9500-20000", 10000) == std::vector<ByteRange>{{9500, 9999}});
}

TEST_CASE("an open range runs to the end of the representation", "[common][range]") {
    CHECK(ranges_of("bytes=9500-", 10000) == std::vector<ByteRange>{{9500, 9999}});
    CHECK(ranges_of("bytes=0-", 10000) == std::vector<ByteRange>{{0, 9999}});
}

TEST_CASE("a suffix range selects the last N bytes, or everything when N is larger", "[common][range]") {
    CHECK(ranges_of("bytes=-500", 10000) == std::vector<ByteRange>{{9500, 9999}});
    CHECK(ranges_of("bytes=-10000", 10000) == std::vector<ByteRange>{{0, 9999}});
    CHECK(ranges_of("bytes=-20000", 10000) == std::vector<ByteRange>{{0, 9999}});
}

TEST_CASE("the bytes unit is case-insensitive and whitespace around list elements is allowed",
          "[common][range]") {
    CHECK(ranges_of("Bytes=1-2", 10) == std::vector<ByteRange>{{1, 2}});
    CHECK(ranges_of("BYTES=1-2", 10) == std::vector<ByteRange>{{1, 2}});
    RangeLimits no_gap{16, 0};
    CHECK(ranges_of("  bytes=0-1 ,\t 5-6  ", 10, no_gap) == std::vector<ByteRange>{{0, 1}, {5, 6}});
    CHECK(ranges_of("bytes=, 0-1,,,5-6,", 10, no_gap) == std::vector<ByteRange>{{0, 1}, {5, 6}});
}

TEST_CASE("an empty header value means no range was requested", "[common][range]") {
    CHECK(status_of("", 10) == RangeStatus::absent);
    CHECK(status_of("   ", 10) == RangeStatus::absent);
    CHECK(parse_range_header("", 10).ignored());
}

TEST_CASE("a range unit other than bytes is ignored", "[common][range]") {
    CHECK(status_of("items=0-5", 10) == RangeStatus::unsupported_unit);
    CHECK(status_of("pages=1", 10) == RangeStatus::unsupported_unit);
    CHECK(parse_range_header("items=0-5", 10).ignored());
}

TEST_CASE("syntactically invalid range headers are ignored, not rejected", "[common][range]") {
    for (const char* bad :
         {"bytes",      "bytes=",       "bytes=,",     "bytes= , ,",    "bytes=abc",  "bytes=5",
          "bytes=-",    "bytes=1-2-3",  "bytes=5-4",   "bytes=0x10-20", "bytes=+1-2", "bytes=1 - 2",
          "bytes=-+5",  "bytes=--5",    "bytes=1-2,3", "bytes=1-2;3-4", "=0-5",       "bytes =0-5",
          "by tes=0-5", "bytes=\x01-5", "bytes=0-5,x", "bytes=-5-"}) {
        INFO("header: " << bad);
        auto r = parse_range_header(bad, 100);
        CHECK(r.status == RangeStatus::invalid);
        CHECK(r.ignored());
        CHECK(r.ranges.empty());
    }
}

TEST_CASE("one invalid range-spec makes the whole header invalid", "[common][range]") {
    CHECK(status_of("bytes=0-5,9-3", 100) == RangeStatus::invalid);
    CHECK(status_of("bytes=0-5,-", 100) == RangeStatus::invalid);
}

TEST_CASE("ranges starting at or past the end are unsatisfiable", "[common][range]") {
    auto r = parse_range_header("bytes=10000-", 10000);
    CHECK(r.status == RangeStatus::unsatisfiable);
    CHECK_FALSE(r.ignored());
    CHECK(r.ranges.empty());
    CHECK(status_of("bytes=10000-10005", 10000) == RangeStatus::unsatisfiable);
    CHECK(status_of("bytes=20000-30000,15000-", 10000) == RangeStatus::unsatisfiable);
    CHECK(status_of("bytes=-0", 10000) == RangeStatus::unsatisfiable);
}

TEST_CASE("unsatisfiable ranges are dropped when another one is satisfiable", "[common][range]") {
    CHECK(ranges_of("bytes=20000-,5-9,-0", 10000) == std::vector<ByteRange>{{5, 9}});
}

TEST_CASE("a zero-length representation has no satisfiable range", "[common][range]") {
    CHECK(status_of("bytes=0-", 0) == RangeStatus::unsatisfiable);
    CHECK(status_of("bytes=-5", 0) == RangeStatus::unsatisfiable);
    CHECK(status_of("bytes=0-0", 0) == RangeStatus::unsatisfiable);
}

TEST_CASE("numerals longer than 64 bits saturate instead of wrapping", "[common][range]") {
    const std::uint64_t len = 1000;
    SECTION("a huge last-pos clamps to the last byte") {
        CHECK(ranges_of("bytes=10-99999999999999999999999999999999", len) ==
              std::vector<ByteRange>{{10, 999}});
        CHECK(ranges_of("bytes=10-18446744073709551615", len) == std::vector<ByteRange>{{10, 999}});
        CHECK(ranges_of("bytes=10-18446744073709551616", len) == std::vector<ByteRange>{{10, 999}});
    }
    SECTION("a huge first-pos is unsatisfiable") {
        CHECK(status_of("bytes=99999999999999999999999999-", len) == RangeStatus::unsatisfiable);
        CHECK(status_of("bytes=18446744073709551616-", len) == RangeStatus::unsatisfiable);
        CHECK(status_of("bytes=18446744073709551615-18446744073709551615", len) ==
              RangeStatus::unsatisfiable);
        CHECK(status_of("bytes=99999999999999999999999999-99999999999999999999999999999", len) ==
              RangeStatus::unsatisfiable);
    }
    SECTION("a huge suffix means the whole representation") {
        CHECK(ranges_of("bytes=-99999999999999999999999999", len) == std::vector<ByteRange>{{0, 999}});
        CHECK(ranges_of("bytes=-18446744073709551615", len) == std::vector<ByteRange>{{0, 999}});
    }
    SECTION("a huge first-pos with a smaller last-pos is invalid") {
        CHECK(status_of("bytes=99999999999999999999999999-5", len) == RangeStatus::invalid);
    }
    SECTION("a representation of 2^64-1 bytes still parses to exact ranges") {
        const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();
        CHECK(ranges_of("bytes=18446744073709551613-", huge) == std::vector<ByteRange>{{huge - 2, huge - 1}});
        CHECK(ranges_of("bytes=-1", huge) == std::vector<ByteRange>{{huge - 1, huge - 1}});
    }
}

TEST_CASE("more range-specs than max_ranges ignore the header", "[common][range]") {
    RangeLimits limits;
    limits.max_ranges = 3;
    limits.coalesce_gap = 0;
    CHECK(ranges_of("bytes=0-0,10-10,20-20", 100, limits).size() == 3);
    CHECK(status_of("bytes=0-0,10-10,20-20,30-30", 100, limits) == RangeStatus::too_many_ranges);
    CHECK(parse_range_header("bytes=0-0,10-10,20-20,30-30", 100, limits).ignored());
    // Counted before coalescing: four overlapping specs are still four.
    CHECK(status_of("bytes=0-5,0-5,0-5,0-5", 100, limits) == RangeStatus::too_many_ranges);
    // Empty list elements do not count.
    CHECK(ranges_of("bytes=0-0,,,,,,10-10", 100, limits).size() == 2);
}

TEST_CASE("a hostile header with thousands of specs is refused without parsing them all", "[common][range]") {
    std::string header = "bytes=";
    for (int i = 0; i < 5000; ++i)
        header += std::to_string(i * 3) + "-" + std::to_string(i * 3) + ",";
    CHECK(status_of(header, 1'000'000) == RangeStatus::too_many_ranges);
}

TEST_CASE("overlapping and adjacent ranges are coalesced", "[common][range]") {
    RangeLimits limits;
    limits.coalesce_gap = 0;
    CHECK(ranges_of("bytes=0-99,50-149", 1000, limits) == std::vector<ByteRange>{{0, 149}});
    CHECK(ranges_of("bytes=0-99,100-199", 1000, limits) == std::vector<ByteRange>{{0, 199}});
    CHECK(ranges_of("bytes=0-99,0-99,0-99", 1000, limits) == std::vector<ByteRange>{{0, 99}});
    CHECK(ranges_of("bytes=10-20,0-", 1000, limits) == std::vector<ByteRange>{{0, 999}});
    CHECK(ranges_of("bytes=-100,850-899", 1000, limits) == std::vector<ByteRange>{{850, 999}});
    CHECK(ranges_of("bytes=0-99,101-199", 1000, limits) == std::vector<ByteRange>{{0, 99}, {101, 199}});
}

TEST_CASE("ranges closer than the coalesce gap are merged", "[common][range]") {
    RangeLimits limits;
    limits.coalesce_gap = 80;
    CHECK(ranges_of("bytes=0-99,180-199", 1000, limits) == std::vector<ByteRange>{{0, 199}});
    CHECK(ranges_of("bytes=0-99,181-199", 1000, limits) == std::vector<ByteRange>{{0, 99}, {181, 199}});
}

TEST_CASE("ranges that are not coalesced keep the client's order", "[common][range]") {
    RangeLimits limits;
    limits.coalesce_gap = 0;
    CHECK(ranges_of("bytes=500-599,0-9,300-399", 1000, limits) ==
          std::vector<ByteRange>{{500, 599}, {0, 9}, {300, 399}});
    // A merged group takes the place of its earliest member.
    CHECK(ranges_of("bytes=500-599,0-9,550-650,5-20", 1000, limits) ==
          std::vector<ByteRange>{{500, 650}, {0, 20}});
}

TEST_CASE("coalescing near the top of the 64-bit range does not overflow", "[common][range]") {
    const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();
    RangeLimits limits;
    limits.coalesce_gap = std::numeric_limits<std::uint64_t>::max();
    CHECK(ranges_of("bytes=0-0,-1", huge, limits) == std::vector<ByteRange>{{0, huge - 1}});
}

TEST_CASE("content-range values are exact", "[common][range]") {
    CHECK(content_range({0, 499}, 1234) == "bytes 0-499/1234");
    CHECK(content_range({1233, 1233}, 1234) == "bytes 1233-1233/1234");
    CHECK(unsatisfied_content_range(1234) == "bytes */1234");
    CHECK(to_string(RangeStatus::too_many_ranges) == "too many ranges");
}
