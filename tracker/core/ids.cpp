#include "tracker/core/ids.hpp"

#include <arpa/inet.h>

#include <algorithm>

namespace toast::tracker {

void append_hex(std::string& out, std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    const auto at = out.size();
    out.resize(at + 2 * bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        auto b = static_cast<unsigned char>(bytes[i]);
        out[at + 2 * i] = digits[b >> 4];
        out[at + 2 * i + 1] = digits[b & 0xf];
    }
}

std::string to_hex(std::string_view bytes) {
    std::string out;
    append_hex(out, bytes);
    return out;
}

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::optional<std::string> from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0) return std::nullopt;
    std::string out;
    out.reserve(hex.size() / 2);
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        int hi = hex_value(hex[i]);
        int lo = hex_value(hex[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
    }
    return out;
}

IpAddress IpAddress::v4_from(std::uint32_t host_order) {
    IpAddress a;
    a.bytes[0] = static_cast<std::uint8_t>(host_order >> 24);
    a.bytes[1] = static_cast<std::uint8_t>(host_order >> 16);
    a.bytes[2] = static_cast<std::uint8_t>(host_order >> 8);
    a.bytes[3] = static_cast<std::uint8_t>(host_order);
    return a;
}

IpAddress IpAddress::v6_from(const std::array<std::uint8_t, 16>& bytes) {
    static constexpr std::array<std::uint8_t, 12> mapped_prefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    IpAddress a;
    if (std::equal(mapped_prefix.begin(), mapped_prefix.end(), bytes.begin())) {
        std::copy(bytes.begin() + 12, bytes.end(), a.bytes.begin());
        return a;
    }
    a.bytes = bytes;
    a.v6 = true;
    return a;
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
    if (text.empty() || text.size() > 45) return std::nullopt;
    std::string s(text);
    std::array<std::uint8_t, 16> buf{};
    if (::inet_pton(AF_INET, s.c_str(), buf.data()) == 1) {
        IpAddress a;
        std::copy(buf.begin(), buf.begin() + 4, a.bytes.begin());
        return a;
    }
    if (::inet_pton(AF_INET6, s.c_str(), buf.data()) == 1) return v6_from(buf);
    return std::nullopt;
}

bool IpAddress::is_loopback() const {
    if (!v6) return bytes[0] == 127;
    return std::all_of(bytes.begin(), bytes.begin() + 15, [](std::uint8_t b) { return b == 0; }) &&
           bytes[15] == 1;
}

std::string IpAddress::to_string() const {
    std::string out;
    append_to(out);
    return out;
}

void IpAddress::append_to(std::string& out) const {
    if (v6) {
        char buf[INET6_ADDRSTRLEN] = {};
        ::inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
        out += buf;
        return;
    }
    for (std::size_t i = 0; i < 4; ++i) {
        const unsigned v = bytes[i];
        if (i) out += '.';
        if (v >= 100) out += static_cast<char>('0' + v / 100);
        if (v >= 10) out += static_cast<char>('0' + v / 10 % 10);
        out += static_cast<char>('0' + v % 10);
    }
}

}  // namespace toast::tracker
