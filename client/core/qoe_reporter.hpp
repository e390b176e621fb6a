// What a box reports to the operator about one viewing session (toast/common/qoe_report.hpp), decided
// purely: fed the session's running totals each stats tick, it says when a report is due (every `interval`
// while the session lasts, so a long session reaches the dashboard before it ends, and once at its end) and
// what the report holds: the change since the previous report. Stalls are reported when they end, with their
// lengths (at most kMaxStallDurations per report; the count and seconds cover them all).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toast/common/qoe_report.hpp"

namespace toast::client {

using SteadyTime = std::chrono::steady_clock::time_point;

// A session's totals so far.
struct QoeSample {
    std::optional<std::int64_t> startup_ms;                         // null until playback started
    const std::vector<std::chrono::nanoseconds>* stalls = nullptr;  // every stall that ended, in order
    std::uint32_t seeks = 0;
    std::chrono::nanoseconds played{0};
    std::uint64_t bytes_from_peers = 0;
    std::uint64_t bytes_from_server = 0;
    std::uint64_t bytes_uploaded = 0;
};

class QoeReporter {
  public:
    QoeReporter(std::string session_id, std::string title, std::chrono::nanoseconds interval,
                SteadyTime start);

    // A report when `interval` has passed since the previous one (or the session's start).
    std::optional<QoeReport> on_tick(const QoeSample& sample, SteadyTime now);
    // The session's last report (final: true). Once only: later calls return nullopt.
    std::optional<QoeReport> on_end(const QoeSample& sample);
    std::uint64_t reports() const { return sequence_; }

  private:
    QoeReport make(const QoeSample& sample, bool final);

    std::string session_;
    std::string title_;
    std::chrono::nanoseconds interval_;
    SteadyTime last_;
    std::uint64_t sequence_ = 0;
    bool startup_sent_ = false;
    bool ended_ = false;
    std::size_t stalls_sent_ = 0;
    QoeSample sent_;  // the totals the previous report covered (its `stalls` unused)
};

}  // namespace toast::client
