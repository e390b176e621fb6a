// The tracker's passkeys: the passkey file (parse_passkey_file), a request target carrying a key
// (parse_tracker_target, the HTTP and the BEP 41 URLData forms), BEP 41 options (udp_url_data), the access
// log's redaction and the client's side (with_passkey). The input is split at the first NUL: the file before
// it, the target after it. Checks: a file error names a line inside the text and never holds a key; an
// admitted key is well-formed; a redacted target carries no key; a URL the client writes a key into
// carries that key to the tracker.
#include <algorithm>

#include "client/core/tracker_url.hpp"
#include "fuzz_support.hpp"
#include "tracker/core/passkeys.hpp"

using namespace toast;
using namespace toast::tracker;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = fuzz::as_text(data, size);
    const auto nul = input.find('\0');
    const auto file = input.substr(0, nul);
    const auto target = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);

    auto store = parse_passkey_file(file);
    if (!store) {
        const auto lines = static_cast<std::size_t>(std::count(file.begin(), file.end(), '\n')) + 1;
        TOAST_FUZZ_CHECK(store.error().line >= 1 && store.error().line <= lines);
        TOAST_FUZZ_CHECK(!store.error().message.empty());
    }

    auto t = parse_tracker_target(target);
    if (t && t->passkey) {
        TOAST_FUZZ_CHECK(valid_passkey(*t->passkey));
        // The redacted target carries no key any more.
        auto again = parse_tracker_target(redact_passkey(target));
        TOAST_FUZZ_CHECK(!again || !again->passkey);
        if (store) {
            PasskeyGate gate(SipKey{1, 2});
            gate.replace(std::move(store).value());
            auto admitted = gate.admit(t->passkey);
            if (admitted) TOAST_FUZZ_CHECK(admitted.value() != 0);
        }
    }
    (void)udp_url_data(target);

    // The client's side: a key written into a URL reaches the tracker as that key.
    const std::string key = "fuzzfuzzfuzzfuzz";
    const std::string url = "http://t:1" + std::string(target.substr(0, target.find_first_of("#\r\n ")));
    const auto with = client::with_passkey(url, key);
    const auto at = with.find("://t:1");
    if (at != std::string::npos) {
        auto back = parse_tracker_target(std::string_view(with).substr(at + 6));
        if (back && back->passkey) TOAST_FUZZ_CHECK(*back->passkey == key);
    }
    return 0;
}
