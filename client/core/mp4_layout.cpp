#include "client/core/mp4_layout.hpp"

namespace toast::client {

std::string_view to_string(Mp4IndexPlacement p) {
    switch (p) {
        case Mp4IndexPlacement::not_mp4:
            return "not_mp4";
        case Mp4IndexPlacement::index_first:
            return "index_first";
        case Mp4IndexPlacement::index_at_end:
            return "index_at_end";
        case Mp4IndexPlacement::unknown:
            return "unknown";
    }
    return "unknown";
}

namespace {

std::uint64_t be(std::span<const std::uint8_t> bytes) {
    std::uint64_t v = 0;
    for (auto b : bytes)
        v = (v << 8) | b;
    return v;
}

}  // namespace

Mp4Layout inspect_mp4_head(std::span<const std::uint8_t> head, Bytes total_size) {
    const std::uint64_t total = total_size.value();
    Mp4Layout out;
    std::uint64_t at = 0;
    bool first = true;
    while (true) {
        // Written as differences: `at` can reach the title's end, and at + 8 would wrap for a title of
        // nearly 2^64 bytes (at <= total always holds).
        if (at >= head.size() || head.size() - at < 8 || total - at < 8) {
            if (!first) out.placement = Mp4IndexPlacement::unknown;
            return out;
        }
        std::uint64_t size = be(head.subspan(at, 4));
        std::string_view type(reinterpret_cast<const char*>(head.data() + at + 4), 4);
        if (first) {
            if (type != "ftyp") return out;  // not_mp4
            first = false;
        }
        std::uint64_t header = 8;
        if (size == 1) {
            if (head.size() - at < 16) {
                out.placement = Mp4IndexPlacement::unknown;
                return out;
            }
            size = be(head.subspan(at + 8, 8));
            header = 16;
        } else if (size == 0) {
            size = total - at;
        }
        if (size < header || size > total - at) {
            out.placement = Mp4IndexPlacement::unknown;
            return out;
        }
        if (type == "moov" || type == "moof") {
            out.placement = Mp4IndexPlacement::index_first;
            return out;
        }
        if (type == "mdat") {
            auto end = at + size;
            // An 'mdat' reaching the end of the file leaves no room for an index: damaged or unfinished.
            out.placement = end < total ? Mp4IndexPlacement::index_at_end : Mp4IndexPlacement::unknown;
            if (end < total) {
                out.index_begin = ByteOffset(end);
                out.index_end = ByteOffset(total);
            }
            return out;
        }
        at += size;
    }
}

}  // namespace toast::client
