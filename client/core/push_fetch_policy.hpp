// When and how fast a box fetches its push assignment, decided purely (the clock is passed in):
//   - only while the box is idle (no title playing) and inside the assignment's off-peak window; the moment
//     a title plays or the window closes, every fetch in flight is cancelled: a push never takes the box's
//     download or upload from its user;
//   - at most `rate` on average: a token bucket that fills at `rate` while fetching is allowed, holds at most
//     `depth` (a second at `rate` plus the largest missing piece), starts empty, and pays for a piece when
//     its fetch starts, so the bytes started over any span of t allowed seconds are at most depth + rate x t;
//   - within the push quota: what the box holds by push, plus what is in flight, plus the next piece, never
//     exceeds `quota`;
//   - at most `max_in_flight` pieces at once, in the order the caller lists them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "client/core/piece_types.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

enum class PushState {
    off,             // push is not configured (no --push-quota or no --server)
    no_assignment,   // no assignment accepted yet
    waiting_window,  // outside the off-peak window
    paused_playing,  // a title is playing
    fetching,        // fetching assigned pieces
    complete,        // every assigned piece is held
    over_quota,      // the next piece would pass the push quota
};
std::string_view to_string(PushState state);

struct PushPiece {
    std::size_t title = 0;  // the caller's index
    PieceIndex piece;
    Bytes size{0};
    bool operator==(const PushPiece&) const = default;
};

struct PushFetchInput {
    bool assigned = false;  // an assignment is accepted
    bool playing = false;
    std::int64_t unix_ms = 0;
    std::int64_t window_start_ms = 0;
    std::int64_t window_end_ms = 0;
    std::vector<PushPiece> missing;  // assigned pieces neither held nor in flight, in fetch order
    std::size_t in_flight = 0;
    Bytes in_flight_bytes{0};
    Bytes held{0};  // bytes the box holds by push now
};

struct PushFetchDecision {
    PushState state = PushState::no_assignment;
    std::vector<PushPiece> start;  // fetches to start now
    bool cancel = false;           // stop every fetch in flight
};

class PushFetchPolicy {
  public:
    using Time = std::chrono::steady_clock::time_point;
    struct Settings {
        BitRate rate{0};
        Bytes quota{0};
        std::size_t max_in_flight = 2;
    };
    explicit PushFetchPolicy(Settings settings);
    void set_settings(Settings settings) { settings_ = settings; }
    const Settings& settings() const { return settings_; }

    PushFetchDecision decide(const PushFetchInput& input, Time now);
    double tokens() const { return tokens_; }  // bytes

  private:
    Settings settings_;
    double tokens_ = 0;
    bool filling_ = false;
    Time last_{};
};

}  // namespace toast::client
