// A box's QoE report (POST /telemetry, toast/common/qoe_report.hpp). Checks: parsing never throws; an
// accepted report is inside every bound, and prints and parses back to the same report.
#include <cmath>

#include "fuzz_support.hpp"
#include "toast/common/qoe_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toast;
    auto parsed = parse_qoe_report(fuzz::as_text(data, size), 8192);
    if (!parsed.report) {
        TOAST_FUZZ_CHECK(!parsed.error.empty());
        return 0;
    }
    const auto& q = *parsed.report;
    TOAST_FUZZ_CHECK(q.session.size() >= 8 && q.session.size() <= 64);
    TOAST_FUZZ_CHECK(!q.title.empty() && q.title.size() <= 128);
    TOAST_FUZZ_CHECK(q.stall_durations.size() <= kMaxStallDurations &&
                     q.stall_durations.size() <= q.stall_count);
    for (double d : q.stall_durations)
        TOAST_FUZZ_CHECK(std::isfinite(d) && d >= 0 && d <= kMaxReportSeconds);
    TOAST_FUZZ_CHECK(q.bytes_from_peers <= kMaxReportBytes && q.bytes_from_server <= kMaxReportBytes &&
                     q.bytes_uploaded <= kMaxReportBytes);
    TOAST_FUZZ_CHECK(q.stall_seconds <= kMaxReportSeconds && q.played_seconds <= kMaxReportSeconds);
    auto again = parse_qoe_report(format_qoe_report(q), 8192);
    TOAST_FUZZ_CHECK(again.report.has_value());
    TOAST_FUZZ_CHECK(*again.report == q);
    return 0;
}
