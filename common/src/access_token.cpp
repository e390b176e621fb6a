#include "toast/common/access_token.hpp"

#include <array>

#include "toast/common/text.hpp"

namespace toast {

namespace {

constexpr std::string_view kVersion = "v1";
constexpr std::size_t kMacLength = 43;  // 32 bytes in base64url without padding
constexpr std::size_t kMaxTokenLength = 512;
constexpr std::string_view kTitlePrefix = "title:";

bool base64url_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// A decimal Unix time: digits only, no sign or leading zero, at most 12 digits (beyond year 30000).
std::optional<std::int64_t> parse_time(std::string_view s) {
    if (s.empty() || s.size() > 12 || (s.size() > 1 && s.front() == '0')) return std::nullopt;
    std::int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

std::optional<std::string> percent_decode_query(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] != '%') {
            out += s[i];
        } else {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = hex_digit(s[i + 1]);
            const int lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        }
    }
    return out;
}

std::string_view query_of(std::string_view target) {
    const auto q = target.find('?');
    if (q == std::string_view::npos) return {};
    auto query = target.substr(q + 1);
    return query.substr(0, query.find('#'));
}

}  // namespace

bool valid_key_id(std::string_view id) {
    return is_name(id, 32);
}

bool valid_subscriber(std::string_view id) {
    return is_name(id, 64);
}

bool valid_title_name(std::string_view name) {
    return is_name(name, 128) && name.front() != '.';
}

std::string to_string(const AccessScope& scope) {
    return scope.kind == AccessScope::Kind::catalog ? std::string("catalog")
                                                    : std::string(kTitlePrefix) + scope.title;
}

std::optional<AccessScope> parse_access_scope(std::string_view text) {
    if (text == "catalog") return AccessScope::catalog();
    if (text.substr(0, kTitlePrefix.size()) != kTitlePrefix) return std::nullopt;
    auto name = text.substr(kTitlePrefix.size());
    if (!valid_title_name(name)) return std::nullopt;
    return AccessScope::for_title(std::string(name));
}

TokenParse parse_access_token(std::string_view text) {
    TokenParse out;
    if (text.empty()) {
        out.error = "empty token";
        return out;
    }
    if (text.size() > kMaxTokenLength) {
        out.error = "token longer than " + std::to_string(kMaxTokenLength) + " characters";
        return out;
    }
    std::array<std::string_view, 7> fields;
    std::size_t n = 0;
    while (true) {
        const auto sep = text.find('~');
        if (n == fields.size()) {
            out.error = "token has more than 7 fields";
            return out;
        }
        fields[n++] = text.substr(0, sep);
        if (sep == std::string_view::npos) break;
        text.remove_prefix(sep + 1);
    }
    if (fields[0] != kVersion) {
        out.error = "unsupported token version (expected v1)";
        return out;
    }
    if (n != fields.size()) {
        out.error = "token has " + std::to_string(n) + " fields, expected 7";
        return out;
    }
    AccessToken t;
    if (!valid_key_id(fields[1])) {
        out.error = "malformed key id";
        return out;
    }
    t.key_id = fields[1];
    if (!valid_subscriber(fields[2])) {
        out.error = "malformed subscriber";
        return out;
    }
    t.subscriber = fields[2];
    auto scope = parse_access_scope(fields[3]);
    if (!scope) {
        out.error = "malformed scope (expected catalog or title:NAME)";
        return out;
    }
    t.scope = std::move(*scope);
    auto issued = parse_time(fields[4]);
    auto expires = parse_time(fields[5]);
    if (!issued || !expires) {
        out.error = "malformed issue or expiry time";
        return out;
    }
    if (*expires <= *issued) {
        out.error = "expiry not after issue time";
        return out;
    }
    t.issued = *issued;
    t.expires = *expires;
    const auto mac = fields[6];
    if (mac.size() != kMacLength) {
        out.error = "malformed signature";
        return out;
    }
    for (char c : mac) {
        if (!base64url_char(c)) {
            out.error = "malformed signature";
            return out;
        }
    }
    t.mac = mac;
    out.token = std::move(t);
    return out;
}

std::string token_signed_text(const AccessToken& t) {
    std::string out(kVersion);
    for (const auto& field :
         {t.key_id, t.subscriber, to_string(t.scope), std::to_string(t.issued), std::to_string(t.expires)}) {
        out += '~';
        out += field;
    }
    return out;
}

std::string format_access_token(const AccessToken& t) {
    return token_signed_text(t) + "~" + t.mac;
}

std::string base64url_encode(std::string_view bytes) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    std::size_t i = 0;
    auto byte = [&](std::size_t k) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k]));
    };
    for (; i + 3 <= bytes.size(); i += 3) {
        const auto v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
        for (int s = 18; s >= 0; s -= 6)
            out += kAlphabet[(v >> s) & 63];
    }
    const auto left = bytes.size() - i;
    if (left == 1) {
        const auto v = byte(i) << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
    } else if (left == 2) {
        const auto v = (byte(i) << 16) | (byte(i + 1) << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
    }
    return out;
}

std::optional<std::string> query_parameter(std::string_view target, std::string_view name) {
    auto query = query_of(target);
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto param = query.substr(0, amp);
        const auto eq = param.find('=');
        if (param.substr(0, eq) == name) {
            if (eq == std::string_view::npos) return std::string();
            return percent_decode_query(param.substr(eq + 1));
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

std::string redact_token(std::string_view target) {
    const auto q = target.find('?');
    if (q == std::string_view::npos) return std::string(target);
    std::string out(target.substr(0, q + 1));
    auto rest = target.substr(q + 1);
    bool first = true;
    while (true) {
        const auto amp = rest.find_first_of("&#");
        auto param = rest.substr(0, amp);
        if (!first) out += '&';
        first = false;
        if (param.substr(0, 6) == "token=") {
            out += "token=REDACTED";
        } else {
            out += param;
        }
        if (amp == std::string_view::npos) break;
        if (rest[amp] == '#') {
            out += rest.substr(amp);
            break;
        }
        rest.remove_prefix(amp + 1);
    }
    return out;
}

}  // namespace toast
