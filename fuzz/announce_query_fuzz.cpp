// HTTP announce and scrape queries (BEP 3, 23, 48): the query string after '?' -> parse_query,
// parse_announce, parse_scrape. Checks: an accepted announce has a port and 20-byte ids, an accepted scrape
// has 1..max info-hashes, and every error has a reason to send.
#include "fuzz_support.hpp"
#include "tracker/core/announce_request.hpp"

using namespace toast;
using namespace toast::tracker;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto query = fuzz::as_text(data, size);
    (void)parse_query(query);
    auto announce = parse_announce(query);
    if (announce) {
        TOAST_FUZZ_CHECK(announce.value().port != 0);
    } else {
        TOAST_FUZZ_CHECK(!failure_reason(announce.error()).empty() && !to_string(announce.error()).empty());
    }
    auto scrape = parse_scrape(query, 64);
    if (scrape) {
        TOAST_FUZZ_CHECK(!scrape.value().empty() && scrape.value().size() <= 64);
    } else {
        TOAST_FUZZ_CHECK(!failure_reason(scrape.error()).empty());
    }
    return 0;
}
