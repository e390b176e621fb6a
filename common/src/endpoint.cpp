#include "toast/common/endpoint.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

namespace toast {

std::string Endpoint::to_string() const {
    bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<Endpoint> parse_endpoint(std::string_view text, bool allow_zero_port) {
    Endpoint ep;
    std::string_view port_text;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return std::nullopt;
        }
        ep.host = std::string(text.substr(1, close - 1));
        port_text = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string_view::npos || text.find(':') != colon) return std::nullopt;
        ep.host = std::string(text.substr(0, colon));
        port_text = text.substr(colon + 1);
    }
    if (ep.host.empty() || port_text.empty()) return std::nullopt;
    unsigned port = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535) return std::nullopt;
    if (port == 0 && !allow_zero_port) return std::nullopt;
    ep.port = static_cast<std::uint16_t>(port);
    return ep;
}

std::optional<Endpoint> parse_peer_endpoint(std::string_view text) {
    auto ep = parse_endpoint(text, false);
    if (!ep) return std::nullopt;
    unsigned char address[sizeof(in6_addr)];
    if (::inet_pton(AF_INET, ep->host.c_str(), address) != 1 &&
        ::inet_pton(AF_INET6, ep->host.c_str(), address) != 1)
        return std::nullopt;
    return ep;
}

}  // namespace toast
