// A title's demand trace (seed 004 §2, seed 001 §2.4): how many bytes of the file a player first needs in
// each round of playback. A variable-bit-rate title is paced and admitted by this trace instead of one
// constant rate.
//
// need(t) is the end of the last file byte of any access unit (PES packet, MP4 sample) whose decode time is
// at most t, so everything in the file before it (headers, tables, other tracks interleaved with it) is
// included; bytes[k] = need(end of round k) - need(end of round k - 1). Round 0 also holds whatever precedes
// the first timed unit (MP4 `moov` when it comes first, TS tables), and the last round holds whatever
// follows the last one, so the bytes always sum to the file size. Time starts at the earliest decode time in
// the file.
//
// Pure: the caller maps the file and passes its bytes; nothing here reads files or allocates per byte.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "toast/common/units.hpp"

namespace toast::server {

struct DemandTrace {
    std::chrono::nanoseconds round{0};
    std::vector<std::uint64_t> bytes;  // per round; sums to the file size
    bool operator==(const DemandTrace&) const = default;

    std::uint64_t total() const;
    // Mean rate over the whole trace, and the rate of its largest round.
    BitRate average_rate() const;
    BitRate peak_rate() const;
    // Bytes needed by the end of round k (k past the end: the total).
    std::uint64_t needed_by(std::size_t round) const;
};

enum class MediaContainer { unknown, mpeg_ts, mp4 };
std::string_view to_string(MediaContainer c);

// Recognises an MPEG transport stream (188-byte packets: sync bytes at 0, 188 and 376, or one full packet in
// a shorter file) or an ISO base media file (MP4/MOV: a first box of type ftyp, moov, mdat, free, skip or
// wide).
MediaContainer detect_container(std::span<const std::uint8_t> file);

struct TraceResult {
    std::optional<DemandTrace> trace;
    std::string error;  // when trace is empty: what is wrong with the file, naming the byte offset
};

// Dispatches on detect_container(); an unknown container is an error. Precondition: round > 0.
TraceResult extract_demand_trace(std::span<const std::uint8_t> file, std::chrono::nanoseconds round);
// MPEG-TS: each PES packet's DTS (else PTS) at 90 kHz, unwrapped per PID; the bytes of a PES end with its
// last transport packet.
TraceResult extract_ts_trace(std::span<const std::uint8_t> file, std::chrono::nanoseconds round);
// MP4: every track's samples from stts/stsz (or stz2)/stsc/stco (or co64), in each track's mdhd timescale,
// moved onto the movie's timeline by the track's edit list (elst).
// Fragmented files (moof) are refused with a message saying how to remux them.
TraceResult extract_mp4_trace(std::span<const std::uint8_t> file, std::chrono::nanoseconds round);

// The same file's trace in rounds of another length. An old round's bytes count as needed from the moment
// that round starts, so a new round needs every old round that starts before the new round ends: a resampled
// trace never promises less, or later, than the original needs. Precondition: round > 0.
DemandTrace resample(const DemandTrace& trace, std::chrono::nanoseconds round);

}  // namespace toast::server
