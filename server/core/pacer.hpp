// The thesis's rate pacing for unicast streams (seeds 002 §3.2, Fig. 3.1): send r_c*t_b as an initial
// buffer, then r_c*t_b per time slice t_b. A transmission that overruns its target adds the excess to a
// deficit t_d and the next one is targeted at t_b - t_d, so a slow client is caught up by sending faster;
// a transmission that finishes early reduces (or resets) the deficit.
//
// Pure: the caller measures time and passes it in. Invariant: deficit() >= 0 and
// 0 <= target() <= time_slice().
#pragma once

#include <chrono>
#include <cstdint>

#include "toast/common/units.hpp"

namespace toast::server {

class Pacer {
  public:
    using Clock = std::chrono::steady_clock;

    // `slice_bytes` is r_c*t_b for the stream's bitrate r_c; both must be positive.
    Pacer(Bytes slice_bytes, std::chrono::nanoseconds time_slice);
    Pacer(BitRate bitrate, std::chrono::nanoseconds time_slice);

    // Bytes per transmission (the last one of a stream may be shorter).
    Bytes slice_bytes() const { return slice_bytes_; }
    std::chrono::nanoseconds time_slice() const { return time_slice_; }
    // Catch-up debt t_d: how far the stream is behind its schedule.
    std::chrono::nanoseconds deficit() const { return deficit_; }
    // Time the next paced transmission may take, including the wait after it: t_b - t_d, at least 0.
    std::chrono::nanoseconds target() const;
    // True until the initial buffer has been sent.
    bool initial() const { return initial_; }

    // A transmission that started at `started` finished at `finished`; returns when the next one starts.
    // The initial buffer is followed at once by the first paced slice.
    Clock::time_point on_transmitted(Clock::time_point started, Clock::time_point finished);

  private:
    Bytes slice_bytes_;
    std::chrono::nanoseconds time_slice_;
    std::chrono::nanoseconds deficit_{0};
    bool initial_ = true;
};

}  // namespace toast::server
