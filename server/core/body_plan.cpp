#include "server/core/body_plan.hpp"

#include <algorithm>

namespace toast::server {

std::vector<BodyItem> plan_body(const HttpResponse& r, std::uint64_t window, std::uint64_t slice) {
    std::vector<BodyItem> items;
    std::uint64_t body_pos = 0;  // title bytes planned so far, for slice boundaries
    for (std::size_t i = 0; i < r.parts.size(); ++i) {
        const auto& part = r.parts[i];
        if (!part.prefix.empty()) items.push_back(BodyItem{true, i, 0, part.prefix.size(), false, false});
        std::uint64_t pos = part.range.first;
        const std::uint64_t end = part.range.last + 1;
        while (pos < end) {
            BodyItem item{false, i, pos, std::min(window, end - pos), false, false};
            if (slice > 0) {
                const std::uint64_t into = body_pos % slice;
                item.length = std::min(item.length, slice - into);
                item.slice_start = into == 0;
                item.slice_end = into + item.length == slice || pos + item.length == end;
            }
            items.push_back(item);
            pos += item.length;
            body_pos += item.length;
        }
    }
    if (!r.trailer.empty())
        items.push_back(BodyItem{true, BodyItem::kTrailer, 0, r.trailer.size(), false, false});
    return items;
}

}  // namespace toast::server
