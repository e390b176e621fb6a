// What a paced stream sends, and when (seed 002 §3.2 Fig. 3.1; seed 004 for variable bit rates).
//
// Chunk j leaves at t0 + j·T. Chunk 0 is the initial buffer: the first round of playback, followed at once
// by the second (the thesis's initial r_c·t_b and the slice sent right after it); chunk j >= 1 is round
// j + 1. A constant-rate title's rounds are r_c·T bytes each; a title with a demand trace sends each round
// what the trace says the player first needs in it. The last round carries whatever remains.
//
// With the client starting playback once it holds the first round, round j + 1 arrives by t0 + j·T and is
// needed from t0 + (j + 1)·T on: one round of slack at every point of the stream.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "server/core/demand_trace.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

struct StreamSchedule {
    std::chrono::nanoseconds round{0};
    std::vector<std::uint64_t> chunks;  // bytes of chunk j; sums to the title size
    bool operator==(const StreamSchedule&) const = default;

    std::uint64_t total() const;
    // Offset in the title of chunk j's first byte.
    std::uint64_t offset_of(std::size_t chunk) const;
};

// Rounds of bytes_in(bitrate, round) bytes (at least one byte). Preconditions: bitrate > 0, round > 0.
StreamSchedule constant_rate_schedule(std::uint64_t size, BitRate bitrate, std::chrono::nanoseconds round);

// Rounds from the trace, resampled to `round` when the trace was recorded in rounds of another length. A
// trace that does not sum to `size` (a title replaced under it) is not used: the caller gets nullopt.
std::optional<StreamSchedule> trace_schedule(const DemandTrace& trace, std::uint64_t size,
                                             std::chrono::nanoseconds round);

// The bytes a paced stream of the title sends per round of playback, in order, summing to `size`: the trace's
// rounds when the title has a usable one (trace_schedule's rule), else bytes_in(bitrate, round) each. Round 0
// is the initial buffer; the pacer sends round 1 right after it and each later round one `round` apart.
// Preconditions: bitrate > 0, round > 0.
std::vector<std::uint64_t> paced_rounds(std::uint64_t size, BitRate bitrate, const DemandTrace* trace,
                                        std::chrono::nanoseconds round);

// The schedule admission control reserves for a paced stream of the title: from its trace when usable.
StreamSchedule title_schedule(std::uint64_t size, BitRate bitrate, const DemandTrace* trace,
                              std::chrono::nanoseconds round);

}  // namespace toast::server
