// A signed URL's token (toast/common/access_token.hpp, server/core/access_check.hpp), as an Authorization
// header and as a query parameter. Checks: parsing never throws; a token that parses prints back as exactly
// its text; no input is allowed but one carrying the MAC the key gives its fields (a forgery would need the
// key); the 403 reason never repeats the input's MAC.
#include <string>

#include "fuzz_support.hpp"
#include "server/core/access_check.hpp"
#include "toast/common/access_token.hpp"

namespace {

using namespace toast;
using namespace toast::server;

const AccessPolicy& policy() {
    static const AccessPolicy p = [] {
        AccessPolicy a;
        a.keys.push_back({"k1", std::string(32, '\x42')});
        a.keys.push_back({"k2", std::string(16, '\x17')});
        a.signing_key = "k1";
        a.revoked_subscribers.insert("mallory");
        return a;
    }();
    return p;
}

void check(const std::optional<Credential>& credential) {
    constexpr std::int64_t kNow = 1'700'000'000;
    auto v = check_credential(policy(), credential, kNow);
    if (!v.allowed()) {
        TOAST_FUZZ_CHECK(!v.reason.empty());
        if (v.token) TOAST_FUZZ_CHECK(v.reason.find(v.token->mac) == std::string::npos);
        return;
    }
    TOAST_FUZZ_CHECK(v.token.has_value());
    const auto& t = *v.token;
    TOAST_FUZZ_CHECK(t.expires > kNow);
    TOAST_FUZZ_CHECK(t.subscriber != "mallory");
    const auto* key = policy().key(t.key_id);
    TOAST_FUZZ_CHECK(key != nullptr);
    TOAST_FUZZ_CHECK(sign_token(*key, t.subscriber, t.scope, t.issued, t.expires) == credential->token);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::as_text(data, size);
    auto parsed = parse_access_token(text);
    if (parsed.token) {
        TOAST_FUZZ_CHECK(format_access_token(*parsed.token) == text);
        TOAST_FUZZ_CHECK(parsed.error.empty());
    } else {
        TOAST_FUZZ_CHECK(!parsed.error.empty());
    }
    check(request_credential("Bearer " + std::string(text), "/titles/movie"));
    check(request_credential("", "/titles/movie?token=" + std::string(text)));
    (void)redact_token("/t?token=" + std::string(text));
    return 0;
}
