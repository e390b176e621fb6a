// The human forms of sizes, bitrates and durations ("256KiB", "2Mbps", "15min") every config and command
// line accepts: parse_bytes, parse_bitrate, parse_duration. Checks: no parsed duration is negative, and a
// formatted duration parses back to itself.
#include "fuzz_support.hpp"
#include "toast/common/units.hpp"

using namespace toast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::as_text(data, size);
    (void)parse_bytes(text);
    (void)parse_bitrate(text);
    if (auto d = parse_duration(text)) {
        TOAST_FUZZ_CHECK(d->count() >= 0);
        // Numbers are read as doubles: exact up to 2^53 ns (about 104 days), far beyond any bound in use.
        if (d->count() <= (std::int64_t{1} << 53))
            TOAST_FUZZ_CHECK(parse_duration(format_duration(*d)) == *d);
    }
    if (auto b = parse_bytes(text)) (void)format_bytes(*b);
    if (auto r = parse_bitrate(text)) (void)format_bitrate(*r);
    return 0;
}
