// What a trial's viewers share (the spec, the result they add to, the counts of open and streaming viewers)
// and the interface the trial drives them through. Not thread-safe: one io_context thread runs them all.
#pragma once

#include <chrono>
#include <cstddef>

#include "server/bench/loadgen/trial.hpp"

namespace toast::loadgen {

struct Shared {
    const TrialSpec& spec;
    TrialResult& result;
    std::size_t open = 0;
    std::size_t streaming = 0;
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

}  // namespace toast::loadgen
