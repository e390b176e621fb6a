// What a title's StreamController counts over the title's life, defined once: the controller keeps a
// StreamCounters, every stats record carries its RecordedCounters part (StatsRecord derives from it, under
// the schema's keys of the same names), and a title's result reports the whole.
#pragma once

#include <cstdint>

namespace toast::client {

// The counters in every stats record (common/docs/client-stats.md).
struct RecordedCounters {
    std::uint64_t bytes_server_useful = 0;  // server pieces that passed the hash check and were still missing
    std::uint64_t bytes_server_wasted = 0;  // failed, corrupt, or already had from a peer by then
    std::uint64_t urgent_fetches = 0;  // server fetches for pieces a player read waited for (or an index)
    std::uint64_t late_pieces = 0;     // the server took them at their last moment: peers asked were too slow
    std::uint64_t pieces_mixed = 0;    // peers sent part of them, the server the rest
    bool operator==(const RecordedCounters&) const = default;
};

// Everything the controller counts: the recorded counters and those only a title's result reports.
struct StreamCounters : RecordedCounters {
    std::uint64_t hash_failures = 0;      // server pieces that failed the hash check
    std::uint64_t pieces_ejected = 0;     // dropped by the bounded buffer
    std::uint64_t max_buffer_bytes = 0;   // the most stored at once
    std::uint64_t admission_dropped = 0;  // pieces not asked of peers: they could not deliver them in time
    bool operator==(const StreamCounters&) const = default;
};

}  // namespace toast::client
