#include <catch2/catch.hpp>

#include "toast/common/access_token.hpp"

using namespace toast;

namespace {

const std::string kMac = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";  // 43 characters

}  // namespace

TEST_CASE("a token reads back its key id, subscriber, scope and times", "[common][token]") {
    auto p = parse_access_token("v1~k2026~alice.01~title:big-buck_bunny.v2~1700000000~1700086400~" + kMac);
    REQUIRE(p.token);
    CHECK(p.token->key_id == "k2026");
    CHECK(p.token->subscriber == "alice.01");
    CHECK(p.token->scope == AccessScope::for_title("big-buck_bunny.v2"));
    CHECK(p.token->issued == 1700000000);
    CHECK(p.token->expires == 1700086400);
    CHECK(p.token->mac == kMac);
    CHECK(format_access_token(*p.token) ==
          "v1~k2026~alice.01~title:big-buck_bunny.v2~1700000000~1700086400~" + kMac);
    CHECK(token_signed_text(*p.token) == "v1~k2026~alice.01~title:big-buck_bunny.v2~1700000000~1700086400");

    auto catalog = parse_access_token("v1~k~7~catalog~1~2~" + kMac);
    REQUIRE(catalog.token);
    CHECK(catalog.token->scope == AccessScope::catalog());
}

TEST_CASE("malformed tokens are refused with a reason and never throw", "[common][token]") {
    auto error = [](const std::string& text) {
        auto p = parse_access_token(text);
        CHECK_FALSE(p.token);
        return p.error;
    };
    CHECK(error("") == "empty token");
    CHECK(error("v2~k~a~catalog~1~2~" + kMac) == "unsupported token version (expected v1)");
    CHECK(error("v1~k~a~catalog~1~2") == "token has 6 fields, expected 7");
    CHECK(error("v1~k~a~catalog~1~2~" + kMac + "~x") == "token has more than 7 fields");
    CHECK(error("v1~~a~catalog~1~2~" + kMac) == "malformed key id");
    CHECK(error("v1~" + std::string(33, 'k') + "~a~catalog~1~2~" + kMac) == "malformed key id");
    CHECK(error("v1~k~a b~catalog~1~2~" + kMac) == "malformed subscriber");
    CHECK(error("v1~k~" + std::string(65, 's') + "~catalog~1~2~" + kMac) == "malformed subscriber");
    CHECK(error("v1~k~a~everything~1~2~" + kMac) == "malformed scope (expected catalog or title:NAME)");
    CHECK(error("v1~k~a~title:~1~2~" + kMac) == "malformed scope (expected catalog or title:NAME)");
    CHECK(error("v1~k~a~title:.hidden~1~2~" + kMac) == "malformed scope (expected catalog or title:NAME)");
    CHECK(error("v1~k~a~title:a/b~1~2~" + kMac) == "malformed scope (expected catalog or title:NAME)");
    CHECK(error("v1~k~a~catalog~-1~2~" + kMac) == "malformed issue or expiry time");
    CHECK(error("v1~k~a~catalog~01~2~" + kMac) == "malformed issue or expiry time");
    CHECK(error("v1~k~a~catalog~1~9999999999999~" + kMac) == "malformed issue or expiry time");
    CHECK(error("v1~k~a~catalog~5~5~" + kMac) == "expiry not after issue time");
    CHECK(error("v1~k~a~catalog~1~2~" + kMac.substr(1)) == "malformed signature");
    CHECK(error("v1~k~a~catalog~1~2~" + kMac.substr(1) + "=") == "malformed signature");
    CHECK(error(std::string(600, 'v')) == "token longer than 512 characters");
    // Every error says what is wrong without repeating the token.
    CHECK(error("v1~k~secret-subscriber~nope~1~2~" + kMac).find("secret") == std::string::npos);
}

TEST_CASE("scopes are catalog or title:NAME with an ingestable name", "[common][token]") {
    CHECK(parse_access_scope("catalog") == AccessScope::catalog());
    CHECK(parse_access_scope("title:movie") == AccessScope::for_title("movie"));
    CHECK(to_string(AccessScope::for_title("movie")) == "title:movie");
    CHECK_FALSE(parse_access_scope("Catalog"));
    CHECK_FALSE(parse_access_scope("title:" + std::string(129, 'm')));
    CHECK(parse_access_scope("title:" + std::string(128, 'm')));
}

TEST_CASE("base64url encodes without padding", "[common][token]") {
    // RFC 4648 §10 vectors, in the URL-safe alphabet and unpadded.
    CHECK(base64url_encode("") == "");
    CHECK(base64url_encode("f") == "Zg");
    CHECK(base64url_encode("fo") == "Zm8");
    CHECK(base64url_encode("foo") == "Zm9v");
    CHECK(base64url_encode("foob") == "Zm9vYg");
    CHECK(base64url_encode("fooba") == "Zm9vYmE");
    CHECK(base64url_encode("foobar") == "Zm9vYmFy");
    CHECK(base64url_encode("\xfb\xff") == "-_8");
}

TEST_CASE("query parameters are found and percent-decoded", "[common][token]") {
    CHECK(query_parameter("/titles/m?token=v1~k~a%3Ab&x=1", "token") == "v1~k~a:b");
    CHECK(query_parameter("/titles/m?x=1&token=abc#frag", "token") == "abc");
    CHECK(query_parameter("/titles/m?token=", "token") == "");
    CHECK_FALSE(query_parameter("/titles/m?tokens=abc", "token"));
    CHECK_FALSE(query_parameter("/titles/m", "token"));
    CHECK_FALSE(query_parameter("/titles/m?token=%zz", "token"));
}

TEST_CASE("log lines show that a URL carried a token, not the token", "[common][token]") {
    CHECK(redact_token("/titles/m?token=v1~k~a~catalog~1~2~SECRET") == "/titles/m?token=REDACTED");
    CHECK(redact_token("/titles/m?a=1&token=SECRET&b=2") == "/titles/m?a=1&token=REDACTED&b=2");
    CHECK(redact_token("/titles/m?token=SECRET#f") == "/titles/m?token=REDACTED#f");
    CHECK(redact_token("/titles/m?tokenx=1") == "/titles/m?tokenx=1");
    CHECK(redact_token("/titles/m") == "/titles/m");
}
