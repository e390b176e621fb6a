// The resume-point file a viewer's save directory keeps ({"title_size":N,"offset":M}): parse_resume_point
// for titles of several sizes. Checks: an accepted point lies inside the title and survives
// format -> parse unchanged; a refusal says why.
#include <string>

#include "client/core/resume_point.hpp"
#include "fuzz_support.hpp"

using namespace toast;
using namespace toast::client;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::as_text(data, size);
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{UINT64_MAX}}) {
        std::string error;
        auto p = parse_resume_point(text, Bytes(n), &error);
        if (!p) {
            TOAST_FUZZ_CHECK(!error.empty());
            continue;
        }
        TOAST_FUZZ_CHECK(p->title_size == Bytes(n) && p->offset.value() < std::max<std::uint64_t>(n, 1));
        auto again = parse_resume_point(format_resume_point(*p), Bytes(n));
        TOAST_FUZZ_CHECK(again && *again == *p);
    }
    return 0;
}
