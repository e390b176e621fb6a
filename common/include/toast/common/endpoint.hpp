// "HOST:PORT" endpoints as written in configs and on command lines ("127.0.0.1:8080", "[::1]:6969").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toast {

struct Endpoint {
    std::string host;  // without brackets for IPv6
    std::uint16_t port = 0;
    std::string to_string() const;  // brackets IPv6 hosts
    bool operator==(const Endpoint&) const = default;
};

// Port 0 is accepted only when `allow_zero_port` (bind to any free port).
std::optional<Endpoint> parse_endpoint(std::string_view text, bool allow_zero_port = true);

// A peer's address, "IP:PORT" ("10.0.0.5:6881", "[::1]:6881"): an IPv4 or IPv6 literal and a non-zero port.
// Peers are named by address because they are matched against connections, which have no host names.
std::optional<Endpoint> parse_peer_endpoint(std::string_view text);

}  // namespace toast
