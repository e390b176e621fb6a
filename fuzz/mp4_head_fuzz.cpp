// MP4 head inspection (where the 'moov' index is): inspect_mp4_head over the title's first bytes, for a
// title exactly that long and for longer ones. Checks: a tail index lies inside the title and ends at its
// end.
#include <span>

#include "client/core/mp4_layout.hpp"
#include "fuzz_support.hpp"

using namespace toast;
using namespace toast::client;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::span<const std::uint8_t> head(data, size);
    for (std::uint64_t total :
         {std::uint64_t{size}, std::uint64_t{size} + 1'000'000, std::uint64_t{UINT64_MAX}}) {
        auto layout = inspect_mp4_head(head, Bytes(total));
        TOAST_FUZZ_CHECK(!to_string(layout.placement).empty());
        if (layout.placement == Mp4IndexPlacement::index_at_end) {
            TOAST_FUZZ_CHECK(layout.index_begin.value() < layout.index_end.value());
            TOAST_FUZZ_CHECK(layout.index_end.value() == total);
        }
    }
    return 0;
}
