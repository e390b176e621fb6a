#include "server/core/body_plan.hpp"

#include <algorithm>
#include <limits>

namespace toast::server {

std::vector<BodyItem> plan_body(const HttpResponse& r, std::uint64_t window,
                                std::span<const std::uint64_t> slices) {
    std::vector<BodyItem> items;
    const bool paced = !slices.empty();
    std::size_t slice = 0;
    // Past the last slice, the rest of the body is one slice.
    auto slice_size = [&](std::size_t k) {
        return k < slices.size() ? slices[k] : std::numeric_limits<std::uint64_t>::max();
    };
    std::uint32_t idle = 0;
    auto skip_empty = [&] {
        while (slice < slices.size() && slices[slice] == 0) {
            ++slice;
            ++idle;
        }
    };
    if (paced) skip_empty();
    std::uint64_t into = 0;
    for (std::size_t i = 0; i < r.parts.size(); ++i) {
        const auto& part = r.parts[i];
        if (!part.prefix.empty())
            items.push_back(BodyItem{.literal = true, .part = i, .length = part.prefix.size()});
        std::uint64_t pos = part.range.first;
        const std::uint64_t end = part.range.last + 1;
        while (pos < end) {
            BodyItem item{.part = i, .offset = pos, .length = std::min(window, end - pos)};
            if (paced) {
                const auto size = slice_size(slice);
                item.length = std::min(item.length, size - into);
                item.slice_start = into == 0;
                if (item.slice_start) {
                    item.idle_before = idle;
                    idle = 0;
                }
                into += item.length;
                item.slice_end = into == size || pos + item.length == end;
                if (into == size) {
                    into = 0;
                    ++slice;
                    skip_empty();
                }
            }
            items.push_back(item);
            pos += item.length;
        }
    }
    if (!r.trailer.empty())
        items.push_back(BodyItem{.literal = true, .part = BodyItem::kTrailer, .length = r.trailer.size()});
    return items;
}

}  // namespace toast::server
