// The line `toast-client play` keeps refreshed on a terminal: playback state and position, buffer
// health, where the bytes came from, stalls and peers. Pure formatting of figures the engine already has
// (the same figures go to the JSON-lines stats).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "client/core/stream_watcher.hpp"

namespace toast::client {

struct StatusFigures {
    PlaybackState state = PlaybackState::starting;
    std::chrono::nanoseconds position{0};
    std::chrono::nanoseconds duration{0};
    std::chrono::nanoseconds buffer_ahead{0};
    std::uint64_t bytes_from_peers = 0;
    std::uint64_t bytes_from_server = 0;
    std::uint32_t stalls = 0;
    std::chrono::nanoseconds stall_time{0};
    std::uint32_t peers = 0;
    std::optional<std::chrono::milliseconds> first_byte;
};

// One line without a newline, e.g.
// "playing 01:02/57:00 | buffer 12.5s | peers 3 | from peers 120 MiB, server 8 MiB | stalls 1 (0.4s)".
std::string format_status_line(const StatusFigures& f);

// What a terminal needs to overwrite the previous status line in place: carriage return, the line, and
// "erase to end of line" so a shorter line leaves no leftovers.
std::string refresh_in_place(const std::string& line);

// mm:ss, or h:mm:ss from one hour on.
std::string format_clock(std::chrono::nanoseconds t);

}  // namespace toast::client
