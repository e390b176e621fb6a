// One viewer of a paced stream, as the thesis's load generator judged it (seed 002 §3.2, §4.3): it starts
// playing once it holds its initial buffer and then consumes the title at its playback schedule; it starves
// whenever the playhead needs a byte that has not arrived, until that byte arrives. Starvation during the
// initial buffering does not count.
//
// The schedule is a need curve: the bytes the player must hold at playback time t. For a constant-rate title
// that is rate · t; for a title with a demand trace, everything up to the end of round k from the start of
// round k on (what the server's trace promises).
//
// Pure: the caller reports arrivals with their times. A stall that starts between two arrivals is placed at
// the exact moment the playhead ran dry.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace toast::loadgen {

class NeedCurve {
  public:
    // Constant rate, bytes per second.
    static NeedCurve constant(double bytes_per_second, std::uint64_t size);
    // Bytes first needed in each round of `round`.
    static NeedCurve rounds(std::chrono::nanoseconds round, const std::vector<std::uint64_t>& bytes);

    std::uint64_t size() const { return size_; }
    // Playback seconds the player can reach holding `bytes` (the whole duration once it holds everything).
    double playable(std::uint64_t bytes) const;
    double duration() const;

  private:
    double rate_ = 0;  // bytes per second, for a constant curve
    double round_ = 0;
    std::vector<std::uint64_t> cumulative_;  // for a round curve: needed by the end of round k
    std::uint64_t size_ = 0;
};

class Playback {
  public:
    using Clock = std::chrono::steady_clock;
    struct Stall {
        double start = 0;  // seconds since the request
        double seconds = 0;
    };

    // `initial`: bytes held before playback starts (capped at the title size). `watch`: the viewer leaves
    // after this much playback (nullopt: the whole title).
    Playback(NeedCurve need, std::uint64_t initial, Clock::time_point requested,
             std::optional<double> watch = std::nullopt);

    // `received` bytes of the body have arrived by `now` (non-decreasing).
    void on_bytes(Clock::time_point now, std::uint64_t received);
    // The viewer gives up or the connection ends at `now`: an open stall ends here.
    void finish(Clock::time_point now);

    bool started() const { return started_; }
    bool done() const;                            // watched all it wanted (or the whole title), or finished
    std::optional<double> start_latency() const;  // seconds from the request to playback start
    const std::vector<Stall>& stalls() const { return stalls_; }
    double played() const { return position_; }
    std::uint64_t received() const { return received_; }

  private:
    double seconds_since_request(Clock::time_point t) const;
    void advance(double now);

    NeedCurve need_;
    std::uint64_t initial_;
    Clock::time_point requested_;
    double limit_;
    bool started_ = false;
    bool finished_ = false;
    double start_ = 0;
    double last_ = 0;      // when position_ was last brought up to date
    double position_ = 0;  // playback seconds played
    std::uint64_t received_ = 0;
    std::optional<double> stalled_since_;
    std::vector<Stall> stalls_;
};

}  // namespace toast::loadgen
