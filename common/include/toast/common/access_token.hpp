// Signed access tokens as text (the server's signed URLs, like nginx's secure_link with HMAC-SHA256): what
// a token says, read without its key. The server checks the signature (server/core/access_check); a box
// reads the expiry to renew in time and the scope to know what it may fetch. Pure and never throws: a token
// comes from the network, a command line or a file.
//
//   v1~KID~SUBSCRIBER~SCOPE~ISSUED~EXPIRES~MAC
//
//   v1          the format's version; another version is refused, not guessed at
//   KID         the key's id, [A-Za-z0-9._-], 1-32 characters (several keys are valid at once)
//   SUBSCRIBER  the operator's subscriber id, [A-Za-z0-9._-], 1-64 characters
//   SCOPE       "catalog" (/catalog and every title) or "title:NAME" (one title's /titles, /stream and
//               /torrents; NAME as ingest accepts it)
//   ISSUED      Unix seconds, decimal, when it was signed
//   EXPIRES     Unix seconds, decimal, > ISSUED: valid while now < EXPIRES
//   MAC         base64url (no padding, 43 characters) of HMAC-SHA256(key, everything before "~MAC")
//
// Every character is unreserved in a URL (RFC 3986 §2.3) but ':', which a query may carry as it is, so a
// token goes into a query string or an Authorization header without escaping. '~' separates the fields
// because no field may contain it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toast {

struct AccessScope {
    enum class Kind { catalog, title };
    Kind kind = Kind::catalog;
    std::string title;  // Kind::title

    static AccessScope catalog() { return {}; }
    static AccessScope for_title(std::string name) { return {Kind::title, std::move(name)}; }
    bool operator==(const AccessScope&) const = default;
};

struct AccessToken {
    std::string key_id;
    std::string subscriber;
    AccessScope scope;
    std::int64_t issued = 0;   // Unix seconds
    std::int64_t expires = 0;  // Unix seconds; the token is valid while now < expires
    std::string mac;           // base64url, 43 characters
    bool operator==(const AccessToken&) const = default;
};

struct TokenParse {
    std::optional<AccessToken> token;  // set when the text is a well-formed token
    std::string error;                 // otherwise: what is wrong, without echoing the text
};

TokenParse parse_access_token(std::string_view text);

// The text the MAC covers: "v1~KID~SUBSCRIBER~SCOPE~ISSUED~EXPIRES".
std::string token_signed_text(const AccessToken& token);
// The whole token: the signed text, '~', the MAC.
std::string format_access_token(const AccessToken& token);

// "catalog" or "title:NAME".
std::string to_string(const AccessScope& scope);
std::optional<AccessScope> parse_access_scope(std::string_view text);

bool valid_key_id(std::string_view id);
bool valid_subscriber(std::string_view id);
// A title name as ingest accepts it: [A-Za-z0-9._-], 1-128 characters, not starting with '.'.
bool valid_title_name(std::string_view name);

// RFC 4648 §5 base64url without padding.
std::string base64url_encode(std::string_view bytes);

// The value of the first query parameter called `name` in a request target ("/titles/x?token=...&a=b"),
// percent-decoded; nullopt when absent or malformed.
std::optional<std::string> query_parameter(std::string_view target, std::string_view name);
// `target` with the value of every "token" query parameter replaced by "REDACTED", for log lines: a token
// in a log is a credential anyone reading the log can use until it expires.
std::string redact_token(std::string_view target);

}  // namespace toast
