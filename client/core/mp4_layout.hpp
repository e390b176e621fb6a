// Where an MP4 keeps its index. A player cannot decode an MP4 before it has read the 'moov' box; a file
// written without "faststart" has it after the media data ('mdat'), at the end of the file, so a player first
// reads the head, then jumps to the end, then comes back. For such files the streaming client fetches the
// first pieces and the tail first, and does not mistake the player's jump to the index for a seek.
// Pure: the caller hands in the title's first bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "client/core/piece_types.hpp"

namespace toast::client {

enum class Mp4IndexPlacement {
    not_mp4,       // the first box is not 'ftyp': not an ISO base media file (MPEG-TS, ...)
    index_first,   // 'moov' comes before 'mdat' (faststart, or fragmented MP4): nothing special to do
    index_at_end,  // 'mdat' comes first: everything after it (the 'moov' and any trailing boxes) is the index
    unknown,       // an MP4 whose box structure ends, or is damaged, before either answer
};
std::string_view to_string(Mp4IndexPlacement p);

struct Mp4Layout {
    Mp4IndexPlacement placement = Mp4IndexPlacement::not_mp4;
    // index_at_end: [index_begin, index_end) is the tail after 'mdat' (index_end is the title's end).
    ByteOffset index_begin{0};
    ByteOffset index_end{0};
};

// Walks the top-level boxes found in `head` (the first bytes of a title of `total_size` bytes). Box sizes
// are 32-bit, 64-bit ("largesize" when the 32-bit size is 1) or 0 ("to the end of the file"). Never reads
// past `head`; a box claiming to end past total_size makes the answer `unknown`.
Mp4Layout inspect_mp4_head(std::span<const std::uint8_t> head, Bytes total_size);

}  // namespace toast::client
