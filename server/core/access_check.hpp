// The server's signed-URL decisions, pure: a request's credential in, allowed or the reason for a 403 out.
// The token's text format is common's (toast/common/access_token.hpp); here it is checked against the
// policy's keys with HMAC-SHA256 (OpenSSL), compared in constant time, and its expiry and scope judged
// against a clock the caller passes.
//
// Order of the checks, so that the reason names the first thing wrong: a credential present, well formed,
// signed with a known key, the signature right, not expired (valid while now < EXPIRES: at EXPIRES it is
// refused), the subscriber not revoked; the scope last, once the request's resource is known.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/core/access_policy.hpp"
#include "toast/common/access_token.hpp"

namespace toast::server {

enum class AccessDenial { missing, malformed, unknown_key, bad_signature, expired, revoked, out_of_scope };
std::string_view to_string(AccessDenial denial);

struct AccessVerdict {
    std::optional<AccessToken> token;  // the token as read (set from unknown_key on)
    std::optional<AccessDenial> denial;
    std::string reason;       // for the 403's body and the log line; never the token itself
    bool from_query = false;  // the token came as a query parameter (not an Authorization header)
    bool allowed() const { return !denial.has_value(); }
};

// The token a request carries: an "Authorization: Bearer TOKEN" header wins over a "token" query parameter
// (a box's header is its current token; a URL it was handed may carry an older one). An Authorization
// header of another scheme is not a token.
struct Credential {
    std::string token;
    bool from_query = false;
};
std::optional<Credential> request_credential(std::string_view authorization, std::string_view target);

// Everything but the scope. `now` is Unix seconds.
AccessVerdict check_credential(const AccessPolicy& policy, const std::optional<Credential>& credential,
                               std::int64_t now);

// Scope: "catalog" covers /catalog and every title; "title:NAME" covers the title NAME only.
bool scope_covers_catalog(const AccessScope& scope);
bool scope_covers_title(const AccessScope& scope, std::string_view title);
// Marks `verdict` out_of_scope unless `covered`.
void require_scope(AccessVerdict& verdict, bool covered, std::string_view what);

// HMAC-SHA256 of `text` under `secret`: 32 raw bytes.
std::string hmac_sha256(std::string_view secret, std::string_view text);

// A signed token's text. The caller has checked the subscriber and the times (issued < expires).
std::string sign_token(const AccessKey& key, std::string subscriber, AccessScope scope, std::int64_t issued,
                       std::int64_t expires);

// A fresh token for the holder of `valid` (a token check_credential allowed): same subscriber and scope, the
// same lifetime from `now`, signed with the policy's signing key. Nullopt when the policy has no key.
std::optional<std::string> renew_token(const AccessPolicy& policy, const AccessToken& valid,
                                       std::int64_t now);

}  // namespace toast::server
