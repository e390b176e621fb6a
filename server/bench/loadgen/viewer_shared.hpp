// What a trial's viewers share (the spec, the result they add to, the counts of open and streaming viewers)
// and the interface the trial drives them through. Not thread-safe: one io_context thread runs them all.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "server/bench/loadgen/playback.hpp"
#include "server/bench/loadgen/trial.hpp"

namespace toast::loadgen {

struct Shared {
    const TrialSpec& spec;
    TrialResult& result;
    std::size_t open = 0;
    std::size_t streaming = 0;
    std::vector<std::uint64_t> node_asks;  // direct viewers' requests to each node since the last sample
};

class TrialViewer {
  public:
    using Clock = std::chrono::steady_clock;
    virtual ~TrialViewer() = default;
    virtual void start() = 0;
    // Far behind any schedule a server could keep: the trial cuts it off.
    virtual bool overdue(Clock::time_point now) const = 0;
    virtual void cut_off() = 0;
};

// A viewer that played to its end (or was judged done): its start latency and stalls go into the result.
inline void record_finish(TrialResult& r, Playback& playback, std::chrono::steady_clock::time_point now) {
    playback.finish(now);
    if (const auto latency = playback.start_latency()) r.start_latencies.push_back(*latency);
    const auto& stalls = playback.stalls();
    if (!stalls.empty()) ++r.starved;
    for (const auto& s : stalls) {
        ++r.stalls;
        r.stall_seconds += s.seconds;
        r.stall_max = std::max(r.stall_max, s.seconds);
    }
}

// A viewer that failed: an error (the first five named), and starved if it had stalled before the failure.
inline void record_failure(TrialResult& r, std::optional<Playback>& playback, const std::string& title,
                           const std::string& why) {
    ++r.errors;
    if (r.error_samples.size() < 5) r.error_samples.push_back(title + ": " + why);
    if (playback) {
        playback->finish(std::chrono::steady_clock::now());
        if (!playback->stalls().empty()) ++r.starved;
    }
}

}  // namespace toast::loadgen
