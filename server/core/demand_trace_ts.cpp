// The demand trace of an MPEG transport stream: each PES packet with a timestamp is a unit, its bytes needed
// by its decode time.
#include <cstdint>
#include <map>

#include "server/core/demand_trace.hpp"
#include "server/core/demand_trace_units.hpp"

namespace toast::server {

using trace_detail::build_trace;
using trace_detail::failure;
using trace_detail::kTsPacket;
using trace_detail::kTsSync;
using trace_detail::Unit;

namespace {

constexpr std::int64_t kPtsWrap = std::int64_t{1} << 33;

std::int64_t read_timestamp(const std::uint8_t* p) {
    return (static_cast<std::int64_t>((p[0] >> 1) & 0x07) << 30) | (static_cast<std::int64_t>(p[1]) << 22) |
           (static_cast<std::int64_t>(p[2] >> 1) << 15) | (static_cast<std::int64_t>(p[3]) << 7) |
           static_cast<std::int64_t>(p[4] >> 1);
}

// PES stream ids without the optional header (and so without timestamps): program stream map, padding,
// private stream 2, ECM, EMM, directory, DSMCC, H.222.1 type E.
bool pes_has_header(std::uint8_t stream_id) {
    switch (stream_id) {
        case 0xBC:
        case 0xBE:
        case 0xBF:
        case 0xF0:
        case 0xF1:
        case 0xF2:
        case 0xF8:
        case 0xFF:
            return false;
        default:
            return true;
    }
}

struct PidState {
    bool open = false;      // a timed PES is being collected
    std::int64_t time = 0;  // its unwrapped timestamp, 90 kHz
    std::uint64_t end = 0;  // end of its last transport packet so far
    bool seen = false;      // a timestamp was seen on this PID (for unwrapping)
    std::int64_t last_raw = 0;
    std::int64_t wraps = 0;
};

}  // namespace

TraceResult extract_ts_trace(std::span<const std::uint8_t> file, std::chrono::nanoseconds round) {
    std::map<std::uint16_t, PidState> pids;
    std::vector<Unit> units;
    auto close = [&](PidState& s) {
        if (s.open) units.push_back(Unit{s.time * 100'000 / 9, s.end});  // 90 kHz -> ns
        s.open = false;
    };
    const std::size_t packets = file.size() / kTsPacket;
    for (std::size_t i = 0; i < packets; ++i) {
        const std::uint8_t* p = file.data() + i * kTsPacket;
        const std::uint64_t end = (i + 1) * kTsPacket;
        if (p[0] != kTsSync)
            return failure("MPEG-TS packet " + std::to_string(i) + " at byte " +
                           std::to_string(i * kTsPacket) + " does not start with the sync byte 0x47");
        const bool unit_start = (p[1] & 0x40) != 0;
        const auto pid = static_cast<std::uint16_t>(((p[1] & 0x1F) << 8) | p[2]);
        const int adaptation = (p[3] >> 4) & 0x3;
        if (pid == 0x1FFF || (adaptation & 0x1) == 0) continue;  // null packet, or no payload
        std::size_t payload = 4;
        if (adaptation & 0x2) payload = 5 + p[4];
        if (payload > kTsPacket)
            return failure("MPEG-TS packet " + std::to_string(i) + " at byte " +
                           std::to_string(i * kTsPacket) + " has an adaptation field longer than the packet");
        auto& state = pids[pid];
        const std::uint8_t* q = p + payload;
        const std::size_t left = kTsPacket - payload;
        if (unit_start && left >= 9 && q[0] == 0 && q[1] == 0 && q[2] == 1) {
            close(state);
            const std::uint8_t stream_id = q[3];
            const int flags = pes_has_header(stream_id) ? (q[7] >> 6) : 0;
            if (flags >= 2) {
                const std::size_t at = flags == 3 ? 14 : 9;  // DTS when present, else PTS
                if (left < at + 5)
                    return failure("MPEG-TS packet " + std::to_string(i) + " at byte " +
                                   std::to_string(i * kTsPacket) + " cuts its PES timestamp short");
                const std::int64_t raw = read_timestamp(q + at);
                // 33-bit timestamps wrap after about 26.5 hours; a jump back by more than half the range is a
                // wrap, not a reordering.
                if (state.seen && raw < state.last_raw - kPtsWrap / 2) ++state.wraps;
                if (state.seen && raw > state.last_raw + kPtsWrap / 2 && state.wraps > 0) --state.wraps;
                state.seen = true;
                state.last_raw = raw;
                state.open = true;
                state.time = raw + state.wraps * kPtsWrap;
            }
        }
        if (state.open) state.end = end;
    }
    for (auto& [pid, state] : pids)
        close(state);
    if (units.empty()) return failure("MPEG-TS file has no PES packet with a timestamp");
    return TraceResult{build_trace(units, 0, file.size(), round), {}};
}

}  // namespace toast::server
