// The tracker's whitelist file (one hex info-hash per line, comments): parse_whitelist. Checks: an
// error names a line inside the text.
#include <algorithm>

#include "fuzz_support.hpp"
#include "tracker/core/whitelist.hpp"

using namespace toast;
using namespace toast::tracker;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::as_text(data, size);
    auto list = parse_whitelist(text);
    if (!list) {
        const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
        TOAST_FUZZ_CHECK(list.error().line >= 1 && list.error().line <= lines);
        TOAST_FUZZ_CHECK(!list.error().message.empty());
    }
    return 0;
}
