#include <catch2/catch.hpp>

#include <limits>

#include "toast/common/units.hpp"

using namespace toast;
using namespace std::chrono_literals;

TEST_CASE("bitrates parse with decimal prefixes", "[common][units]") {
    CHECK(parse_bitrate("2Mbps") == BitRate(2'000'000));
    CHECK(parse_bitrate("1.5Mbit") == BitRate(1'500'000));
    CHECK(parse_bitrate("800 kbps") == BitRate(800'000));
    CHECK(parse_bitrate("2000000") == BitRate(2'000'000));
    CHECK(parse_bitrate("2M") == BitRate(2'000'000));
    CHECK_FALSE(parse_bitrate("fast"));
    CHECK_FALSE(parse_bitrate("-2Mbps"));
    CHECK_FALSE(parse_bitrate("2Mbpz"));
    CHECK_FALSE(parse_bitrate(""));
    CHECK_FALSE(parse_bitrate("1e400"));
}

TEST_CASE("sizes parse with binary and decimal prefixes", "[common][units]") {
    CHECK(parse_bytes("256KiB") == Bytes(262'144));
    CHECK(parse_bytes("4MiB") == Bytes(4'194'304));
    CHECK(parse_bytes("64k") == Bytes(65'536));
    CHECK(parse_bytes("1MB") == Bytes(1'000'000));
    CHECK(parse_bytes("17") == Bytes(17));
    CHECK_FALSE(parse_bytes("lots"));
    CHECK_FALSE(parse_bytes("99999999999999999999999TiB"));
    // Between 2^63 and 2^64: held exactly by an unsigned count, not wrapped through a signed one.
    CHECK(parse_bytes("10000000000000000000") == Bytes(10'000'000'000'000'000'000ull));
    CHECK_FALSE(parse_bytes("18446744073709551616"));  // 2^64
}

TEST_CASE("durations parse into nanoseconds", "[common][units]") {
    CHECK(parse_duration("5s") == std::chrono::nanoseconds(5s));
    CHECK(parse_duration("250ms") == std::chrono::nanoseconds(250ms));
    CHECK(parse_duration("15min") == std::chrono::nanoseconds(15min));
    CHECK(parse_duration("2.5") == std::chrono::nanoseconds(2500ms));
    CHECK_FALSE(parse_duration("soon"));
    CHECK_FALSE(parse_duration("9999999999h"));  // beyond int64 nanoseconds
}

TEST_CASE("a number of seconds converts to nanoseconds without wrapping", "[common][units]") {
    CHECK(seconds_to_duration(0.25) == std::chrono::nanoseconds(250ms));
    CHECK(seconds_to_duration(0) == std::chrono::nanoseconds(0));
    CHECK(seconds_to_duration(9.2e9) == std::chrono::nanoseconds(9'200'000'000'000'000'000));
    CHECK_FALSE(seconds_to_duration(1e10));  // 1e19 ns: past INT64_MAX
    CHECK_FALSE(seconds_to_duration(-1));
    CHECK_FALSE(seconds_to_duration(std::numeric_limits<double>::infinity()));
    CHECK_FALSE(seconds_to_duration(std::numeric_limits<double>::quiet_NaN()));
}

TEST_CASE("durations format in the largest exact unit", "[common][units]") {
    CHECK(format_duration(0ns) == "0s");
    CHECK(format_duration(1h) == "1h");
    CHECK(format_duration(90s) == "90s");
    CHECK(format_duration(15min) == "15min");
    CHECK(format_duration(250ms) == "250ms");
    CHECK(format_duration(1500us) == "1500us");
    CHECK(format_duration(7ns) == "7ns");
}

TEST_CASE("stream time and bytes convert through the bitrate", "[common][units]") {
    CHECK(bytes_in(BitRate(2'000'000), 5s) == Bytes(1'250'000));
    CHECK(duration_of(Bytes(250'000), BitRate(2'000'000)) == std::chrono::nanoseconds(1s));
    CHECK(format_bytes(Bytes(262'144)) == "256 KiB");
    CHECK(format_bitrate(BitRate(2'000'000)) == "2.00 Mbps");
}
