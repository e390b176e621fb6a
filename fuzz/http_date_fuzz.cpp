// HTTP-date parsing (RFC 9110 §5.6.7: IMF-fixdate, RFC 850, asctime) as used by If-Modified-Since,
// If-Unmodified-Since and If-Range. Checks: a parsed date formats as an IMF-fixdate that parses back to the
// same instant.
#include "fuzz_support.hpp"
#include "server/core/http_date.hpp"

using namespace toast;
using namespace toast::server;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto t = parse_http_date(fuzz::as_text(data, size));
    if (!t) return 0;
    auto text = format_http_date(*t);
    TOAST_FUZZ_CHECK(text.size() == 29 && text.substr(26) == "GMT");
    auto again = parse_http_date(text);
    TOAST_FUZZ_CHECK(again && *again == *t);
    return 0;
}
