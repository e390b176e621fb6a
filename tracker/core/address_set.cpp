#include "tracker/core/address_set.hpp"

#include <charconv>

namespace toast::tracker {

IpAddress mask(const IpAddress& ip, unsigned length) {
    IpAddress out = ip;
    const unsigned bits = static_cast<unsigned>(ip.size()) * 8;
    for (unsigned byte = 0; byte < ip.size(); ++byte) {
        const unsigned first_bit = byte * 8;
        if (first_bit >= length) {
            out.bytes[byte] = 0;
        } else if (first_bit + 8 > length && length < bits) {
            const unsigned keep = length - first_bit;
            out.bytes[byte] = static_cast<std::uint8_t>(out.bytes[byte] & (0xffu << (8 - keep)));
        }
    }
    return out;
}

std::optional<AddressPrefix> AddressPrefix::parse(std::string_view text) {
    const auto slash = text.find('/');
    auto ip = IpAddress::parse(text.substr(0, slash));
    if (!ip) return std::nullopt;
    const unsigned bits = static_cast<unsigned>(ip->size()) * 8;
    unsigned length = bits;
    if (slash != std::string_view::npos) {
        auto digits = text.substr(slash + 1);
        if (digits.empty() || digits.size() > 3) return std::nullopt;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
        if (ec != std::errc() || end != digits.data() + digits.size() || length > bits) return std::nullopt;
    }
    if (mask(*ip, length) != *ip) return std::nullopt;  // "10.0.0.1/8" is probably a typo for 10.0.0.0/8
    return AddressPrefix{*ip, static_cast<std::uint8_t>(length)};
}

bool AddressPrefix::contains(const IpAddress& ip) const {
    return ip.v6 == base.v6 && mask(ip, length) == base;
}

std::string AddressPrefix::to_string() const {
    return base.to_string() + "/" + std::to_string(length);
}

bool AddressSet::contains(const IpAddress& ip) const {
    for (const auto& p : prefixes_) {
        if (p.contains(ip)) return true;
    }
    return false;
}

std::string AddressSet::to_string() const {
    std::string out = "[";
    for (std::size_t i = 0; i < prefixes_.size(); ++i) {
        if (i) out += ", ";
        out += prefixes_[i].to_string();
    }
    return out + "]";
}

}  // namespace toast::tracker
