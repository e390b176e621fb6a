#include "server/core/access_check.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "toast/common/text.hpp"

namespace toast::server {

std::string_view to_string(AccessDenial denial) {
    switch (denial) {
        case AccessDenial::missing:
            return "missing";
        case AccessDenial::malformed:
            return "malformed";
        case AccessDenial::unknown_key:
            return "unknown_key";
        case AccessDenial::bad_signature:
            return "bad_signature";
        case AccessDenial::expired:
            return "expired";
        case AccessDenial::revoked:
            return "revoked";
        case AccessDenial::out_of_scope:
            return "out_of_scope";
    }
    return "?";
}

std::optional<Credential> request_credential(std::string_view authorization, std::string_view target) {
    authorization = trim_ows(authorization);
    constexpr std::string_view kBearer = "bearer";
    if (authorization.size() > kBearer.size() && iequals(authorization.substr(0, kBearer.size()), kBearer) &&
        (authorization[kBearer.size()] == ' ' || authorization[kBearer.size()] == '\t')) {
        return Credential{std::string(trim_ows(authorization.substr(kBearer.size()))), false};
    }
    if (auto query = query_parameter(target, "token")) return Credential{std::move(*query), true};
    return std::nullopt;
}

std::string hmac_sha256(std::string_view secret, std::string_view text) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(text.data()), text.size(), out, &length);
    return std::string(reinterpret_cast<const char*>(out), length);
}

namespace {

std::string mac_of(const AccessKey& key, const AccessToken& token) {
    return base64url_encode(hmac_sha256(key.secret, token_signed_text(token)));
}

AccessVerdict deny(AccessVerdict v, AccessDenial denial, std::string reason) {
    v.denial = denial;
    v.reason = std::move(reason);
    return v;
}

}  // namespace

AccessVerdict check_credential(const AccessPolicy& policy, const std::optional<Credential>& credential,
                               std::int64_t now) {
    AccessVerdict v;
    if (!credential || credential->token.empty()) {
        return deny(std::move(v), AccessDenial::missing,
                    "no access token (an Authorization: Bearer header or a token query parameter)");
    }
    v.from_query = credential->from_query;
    auto parsed = parse_access_token(credential->token);
    if (!parsed.token) return deny(std::move(v), AccessDenial::malformed, "malformed token: " + parsed.error);
    v.token = std::move(parsed.token);
    const auto& t = *v.token;
    const auto* key = policy.key(t.key_id);
    if (!key)
        return deny(std::move(v), AccessDenial::unknown_key, "token signed with unknown key id " + t.key_id);
    const auto expected = mac_of(*key, t);
    if (expected.size() != t.mac.size() ||
        CRYPTO_memcmp(expected.data(), t.mac.data(), expected.size()) != 0) {
        return deny(std::move(v), AccessDenial::bad_signature, "token signature does not match");
    }
    if (now >= t.expires) {
        return deny(std::move(v), AccessDenial::expired,
                    "token of " + t.subscriber + " expired " + std::to_string(now - t.expires) + " s ago");
    }
    if (policy.revoked_subscribers.count(t.subscriber) > 0) {
        return deny(std::move(v), AccessDenial::revoked, "subscriber " + t.subscriber + " is revoked");
    }
    return v;
}

bool scope_covers_catalog(const AccessScope& scope) {
    return scope.kind == AccessScope::Kind::catalog;
}

bool scope_covers_title(const AccessScope& scope, std::string_view title) {
    return scope.kind == AccessScope::Kind::catalog || scope.title == title;
}

void require_scope(AccessVerdict& verdict, bool covered, std::string_view what) {
    if (covered || !verdict.allowed()) return;
    verdict.denial = AccessDenial::out_of_scope;
    verdict.reason = "token scope " + (verdict.token ? to_string(verdict.token->scope) : std::string("?")) +
                     " does not cover " + std::string(what);
}

std::string sign_token(const AccessKey& key, std::string subscriber, AccessScope scope, std::int64_t issued,
                       std::int64_t expires) {
    AccessToken t;
    t.key_id = key.id;
    t.subscriber = std::move(subscriber);
    t.scope = std::move(scope);
    t.issued = issued;
    t.expires = expires;
    t.mac = mac_of(key, t);
    return format_access_token(t);
}

std::optional<std::string> renew_token(const AccessPolicy& policy, const AccessToken& valid,
                                       std::int64_t now) {
    const AccessKey* key = policy.key(policy.signing_key);
    if (!key && !policy.keys.empty()) key = &policy.keys.front();
    if (!key) return std::nullopt;
    const auto lifetime = valid.expires - valid.issued;
    return sign_token(*key, valid.subscriber, valid.scope, now, now + lifetime);
}

}  // namespace toast::server
