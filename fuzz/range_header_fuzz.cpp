// The Range header parser shared by the server and the player endpoint (RFC 9110 §14), against several
// representation lengths and range limits. Checks the parser's stated invariants: satisfiable ranges are
// non-empty, inside the representation, within the limit, and never overlap or touch within the coalescing
// gap; the Content-Range values are well formed.
#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "toast/common/byte_range.hpp"

using namespace toast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto value = fuzz::as_text(data, size);
    for (std::uint64_t length : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1000},
                                 std::uint64_t{1} << 40, std::uint64_t{UINT64_MAX}}) {
        for (RangeLimits limits : {RangeLimits{}, RangeLimits{1, 0}, RangeLimits{1024, 80}}) {
            auto set = parse_range_header(value, length, limits);
            TOAST_FUZZ_CHECK(!to_string(set.status).empty());
            TOAST_FUZZ_CHECK((set.status == RangeStatus::satisfiable) == !set.ranges.empty());
            TOAST_FUZZ_CHECK(set.ranges.size() <= limits.max_ranges);
            for (std::size_t i = 0; i < set.ranges.size(); ++i) {
                const auto& r = set.ranges[i];
                TOAST_FUZZ_CHECK(r.first <= r.last && r.last < length);
                for (std::size_t j = 0; j < i; ++j) {
                    // Coalesced: the later of two ranges starts more than the gap after the earlier ends.
                    const auto& lo = set.ranges[j].first < r.first ? set.ranges[j] : r;
                    const auto& hi = set.ranges[j].first < r.first ? r : set.ranges[j];
                    TOAST_FUZZ_CHECK(hi.first > lo.last && hi.first - lo.last - 1 > limits.coalesce_gap);
                }
                auto cr = content_range(r, length);
                TOAST_FUZZ_CHECK(cr.rfind("bytes ", 0) == 0 && !fuzz::breaks_header_line(cr));
            }
            if (set.status == RangeStatus::unsatisfiable) {
                TOAST_FUZZ_CHECK(unsatisfied_content_range(length) == "bytes */" + std::to_string(length));
            }
        }
    }
    return 0;
}
