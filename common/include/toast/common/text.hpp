// Small text rules every HTTP-facing part shares: header names and tokens compare case-insensitively in
// ASCII (RFC 9110 §5.1), and field values lose their optional whitespace (OWS: spaces and tabs, §5.6.3).
// Locale-free on purpose: a server's answers must not change with the environment's LC_CTYPE.
#pragma once

#include <cstdint>
#include <string_view>

namespace toast {

constexpr char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

// The value of a hex digit (either case), or -1.
constexpr int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

constexpr std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The characters of an identifier a URL or a file name carries unescaped: a box id, a subscriber, a key id.
constexpr bool is_name_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

// 1 to max_size name characters.
constexpr bool is_name(std::string_view s, std::size_t max_size) {
    if (s.empty() || s.size() > max_size) return false;
    for (char c : s)
        if (!is_name_char(c)) return false;
    return true;
}

// A box's id, as the service is started with it and as the operator's push routes name it.
constexpr bool is_box_id(std::string_view s) {
    return is_name(s, 64);
}

// FNV-1a, 64 bits: stable across runs and machines, for validators and placement seeds (not a secure hash).
constexpr std::uint64_t fnv1a(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

}  // namespace toast
