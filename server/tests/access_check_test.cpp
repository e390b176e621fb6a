#include <catch2/catch.hpp>

#include "server/core/access_check.hpp"

using namespace toast;
using namespace toast::server;

namespace {

constexpr std::int64_t kNow = 1'700'000'000;

AccessPolicy policy() {
    AccessPolicy p;
    p.keys.push_back({"k1", std::string(32, '\x11')});
    p.keys.push_back({"k2", std::string(32, '\x22')});
    p.signing_key = "k2";
    return p;
}

std::optional<Credential> bearer(const std::string& token) {
    return Credential{token, false};
}

std::string hex(const std::string& bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

}  // namespace

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[server][access]") {
    CHECK(hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("a token signed with a configured key is allowed until its expiry", "[server][access]") {
    const auto p = policy();
    const auto token = sign_token(*p.key("k1"), "alice", AccessScope::catalog(), kNow - 10, kNow + 60);
    auto v = check_credential(p, bearer(token), kNow);
    CHECK(v.allowed());
    REQUIRE(v.token);
    CHECK(v.token->subscriber == "alice");
    CHECK(v.token->key_id == "k1");
    CHECK(v.reason.empty());
    // Signing is deterministic: the same fields under the same key give the same token.
    CHECK(token == sign_token(*p.key("k1"), "alice", AccessScope::catalog(), kNow - 10, kNow + 60));
    CHECK(token != sign_token(*p.key("k2"), "alice", AccessScope::catalog(), kNow - 10, kNow + 60));
}

TEST_CASE("expiry is exact: valid one second before, refused at the second it names", "[server][access]") {
    const auto p = policy();
    const auto token = sign_token(*p.key("k1"), "alice", AccessScope::catalog(), kNow - 100, kNow);
    CHECK(check_credential(p, bearer(token), kNow - 1).allowed());
    auto at = check_credential(p, bearer(token), kNow);
    CHECK(at.denial == AccessDenial::expired);
    CHECK(at.reason == "token of alice expired 0 s ago");
    CHECK(check_credential(p, bearer(token), kNow + 3600).denial == AccessDenial::expired);
}

TEST_CASE("every byte of a token is covered by its signature", "[server][access]") {
    const auto p = policy();
    const auto token =
        sign_token(*p.key("k1"), "alice", AccessScope::for_title("movie"), kNow - 10, kNow + 60);
    // Change each character in turn to another character the format allows: nothing passes. The key id
    // field gives unknown_key (or bad_signature when it becomes k2), the others a bad signature or a
    // malformed token, never an allowed one.
    int refused = 0;
    for (std::size_t i = 0; i < token.size(); ++i) {
        for (char c : {'A', 'z', '0', '9', '_', '-', '.'}) {
            if (token[i] == c || token[i] == '~') continue;
            auto tampered = token;
            tampered[i] = c;
            auto v = check_credential(p, bearer(tampered), kNow);
            INFO(tampered);
            CHECK_FALSE(v.allowed());
            ++refused;
        }
    }
    CHECK(refused > 500);
    // Raising the expiry or widening the scope keeps the old MAC: refused.
    auto t = parse_access_token(token).token;
    REQUIRE(t);
    auto longer = *t;
    longer.expires += 86400;
    CHECK(check_credential(p, bearer(format_access_token(longer)), kNow).denial ==
          AccessDenial::bad_signature);
    auto wider = *t;
    wider.scope = AccessScope::catalog();
    CHECK(check_credential(p, bearer(format_access_token(wider)), kNow).denial ==
          AccessDenial::bad_signature);
    auto other = *t;
    other.subscriber = "mallory";
    CHECK(check_credential(p, bearer(format_access_token(other)), kNow).denial ==
          AccessDenial::bad_signature);
}

TEST_CASE("a token names its key: an unknown or removed key id is refused", "[server][access]") {
    auto p = policy();
    const auto token = sign_token(*p.key("k1"), "alice", AccessScope::catalog(), kNow - 10, kNow + 60);
    // Signed with k1 but claiming k2: the MAC does not match k2's.
    auto t = *parse_access_token(token).token;
    t.key_id = "k2";
    CHECK(check_credential(p, bearer(format_access_token(t)), kNow).denial == AccessDenial::bad_signature);
    t.key_id = "k9";
    auto v = check_credential(p, bearer(format_access_token(t)), kNow);
    CHECK(v.denial == AccessDenial::unknown_key);
    CHECK(v.reason == "token signed with unknown key id k9");
    // Rotation: k1 removed from the config, its tokens stop working; k2's keep working.
    p.keys.erase(p.keys.begin());
    CHECK(check_credential(p, bearer(token), kNow).denial == AccessDenial::unknown_key);
    CHECK(check_credential(
              p, bearer(sign_token(*p.key("k2"), "alice", AccessScope::catalog(), kNow, kNow + 5)), kNow)
              .allowed());
}

TEST_CASE("missing, malformed and revoked credentials are refused with their reason", "[server][access]") {
    auto p = policy();
    CHECK(check_credential(p, std::nullopt, kNow).denial == AccessDenial::missing);
    CHECK(check_credential(p, bearer(""), kNow).denial == AccessDenial::missing);
    auto bad = check_credential(p, bearer("v1~k1~alice"), kNow);
    CHECK(bad.denial == AccessDenial::malformed);
    CHECK(bad.reason == "malformed token: token has 3 fields, expected 7");
    p.revoked_subscribers.insert("alice");
    const auto token = sign_token(*p.key("k1"), "alice", AccessScope::catalog(), kNow - 10, kNow + 60);
    auto revoked = check_credential(p, bearer(token), kNow);
    CHECK(revoked.denial == AccessDenial::revoked);
    CHECK(revoked.reason == "subscriber alice is revoked");
}

TEST_CASE("a title scope covers that title only and the catalogue scope covers all", "[server][access]") {
    CHECK(scope_covers_title(AccessScope::catalog(), "anything"));
    CHECK(scope_covers_catalog(AccessScope::catalog()));
    CHECK(scope_covers_title(AccessScope::for_title("movie"), "movie"));
    CHECK_FALSE(scope_covers_title(AccessScope::for_title("movie"), "movie2"));
    CHECK_FALSE(scope_covers_title(AccessScope::for_title("movie"), "movi"));
    CHECK_FALSE(scope_covers_catalog(AccessScope::for_title("movie")));

    const auto p = policy();
    auto v = check_credential(
        p, bearer(sign_token(*p.key("k1"), "bob", AccessScope::for_title("movie"), kNow, kNow + 9)), kNow);
    require_scope(v, scope_covers_title(v.token->scope, "other"), "title 'other'");
    CHECK(v.denial == AccessDenial::out_of_scope);
    CHECK(v.reason == "token scope title:movie does not cover title 'other'");
}

TEST_CASE("the Authorization header's bearer token wins over the query's", "[server][access]") {
    auto c = request_credential("Bearer abc", "/titles/m?token=xyz");
    REQUIRE(c);
    CHECK(c->token == "abc");
    CHECK_FALSE(c->from_query);
    auto lower = request_credential("bearer  abc ", "/titles/m");
    REQUIRE(lower);
    CHECK(lower->token == "abc");
    auto q = request_credential("Basic dXNlcjpwdw==", "/titles/m?token=xyz");
    REQUIRE(q);
    CHECK(q->token == "xyz");
    CHECK(q->from_query);
    CHECK_FALSE(request_credential("", "/titles/m"));
    CHECK_FALSE(request_credential("Bearer", "/titles/m"));
}

TEST_CASE("renewal keeps subscriber, scope and lifetime, signed with the signing key", "[server][access]") {
    const auto p = policy();
    const auto token =
        sign_token(*p.key("k1"), "alice", AccessScope::for_title("movie"), kNow - 100, kNow + 500);
    auto v = check_credential(p, bearer(token), kNow);
    REQUIRE(v.allowed());
    auto fresh = renew_token(p, *v.token, kNow);
    REQUIRE(fresh);
    auto t = parse_access_token(*fresh).token;
    REQUIRE(t);
    CHECK(t->key_id == "k2");
    CHECK(t->subscriber == "alice");
    CHECK(t->scope == AccessScope::for_title("movie"));
    CHECK(t->issued == kNow);
    CHECK(t->expires == kNow + 600);
    CHECK(check_credential(p, bearer(*fresh), kNow + 599).allowed());
    CHECK_FALSE(renew_token(AccessPolicy{}, *v.token, kNow));
}
