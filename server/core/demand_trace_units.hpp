// What the container readers (demand_trace_ts.cpp, demand_trace_mp4.cpp) share: the timed units they find in
// a file and how those become a DemandTrace. Private to the demand trace's sources.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/core/demand_trace.hpp"

namespace toast::server::trace_detail {

// MPEG-TS packets: their size and first byte (container detection reads them too).
constexpr std::size_t kTsPacket = 188;
constexpr std::uint8_t kTsSync = 0x47;

// One timed unit of the file: its decode time and the end of its last byte.
struct Unit {
    std::int64_t time_ns = 0;
    std::uint64_t end = 0;
};

// bytes[k] from the units: need(k) is the running maximum of the ends of units in rounds <= k; `prefix` bytes
// (what precedes every unit, or a header the player needs first) are needed in round 0; the file's tail is in
// the last round.
DemandTrace build_trace(std::vector<Unit>& units, std::uint64_t prefix, std::uint64_t file_size,
                        std::chrono::nanoseconds round);

TraceResult failure(std::string message);

}  // namespace toast::server::trace_detail
