// The identities a tracker deals in: 20-byte info-hashes and peer ids, and peer addresses, as plain values.
// Pure: no sockets; addresses are parsed and printed with inet_pton/inet_ntop only.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toast::tracker {

// A fixed-size binary identifier; Tag keeps info-hashes and peer ids from being mixed up.
template <class Tag>
struct Id20 {
    std::array<std::uint8_t, 20> bytes{};

    auto operator<=>(const Id20&) const = default;
    bool operator==(const Id20&) const = default;
    std::string_view view() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
    // Exactly 20 bytes, else nullopt.
    static std::optional<Id20> from_bytes(std::string_view raw) {
        if (raw.size() != 20) return std::nullopt;
        Id20 id;
        for (std::size_t i = 0; i < 20; ++i)
            id.bytes[i] = static_cast<std::uint8_t>(raw[i]);
        return id;
    }
};

using InfoHash = Id20<struct InfoHashTag>;
using PeerId = Id20<struct PeerIdTag>;

// Lower-case hex of any byte string; append_hex adds it to `out` (no string of its own: a state file writes
// 100,000 of them at a time).
std::string to_hex(std::string_view bytes);
void append_hex(std::string& out, std::string_view bytes);
// Decodes an even-length hex string (either case); nullopt on any other character.
std::optional<std::string> from_hex(std::string_view hex);

// An IPv4 or IPv6 address. IPv4 addresses (and IPv4-mapped IPv6 ones, which normalise to IPv4) use the
// first 4 bytes; the rest stay zero so equality and hashing see one canonical form.
struct IpAddress {
    std::array<std::uint8_t, 16> bytes{};
    bool v6 = false;

    auto operator<=>(const IpAddress&) const = default;
    bool operator==(const IpAddress&) const = default;

    static IpAddress v4_from(std::uint32_t host_order);
    static IpAddress v6_from(const std::array<std::uint8_t, 16>& bytes);  // unmaps ::ffff:a.b.c.d
    // A numeric IPv4 or IPv6 literal (no brackets, no zone); nullopt otherwise.
    static std::optional<IpAddress> parse(std::string_view text);

    std::size_t size() const { return v6 ? 16 : 4; }
    bool is_loopback() const;
    std::string to_string() const;
    // Adds to_string()'s text to `out`. IPv4 is formatted here: glibc's inet_ntop formats it with sprintf,
    // several times slower, and a state file writes 100,000 addresses at a time.
    void append_to(std::string& out) const;
};

struct PeerEndpoint {
    IpAddress ip;
    std::uint16_t port = 0;
    auto operator<=>(const PeerEndpoint&) const = default;
    bool operator==(const PeerEndpoint&) const = default;
};

}  // namespace toast::tracker
