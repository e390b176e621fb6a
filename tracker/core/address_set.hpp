// A set of address prefixes ("127.0.0.0/8", "::1", "2001:db8::/32"), for the options that single out
// sources: who may read /stats and /metrics, whose ip= is honoured, who is not rate limited. Pure.
//
// IPv4 prefixes match IPv4 sources only (IPv4-mapped IPv6 sources are IPv4 by the time they get here); a
// bare address is a full-length prefix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/core/ids.hpp"

namespace toast::tracker {

struct AddressPrefix {
    IpAddress base;  // bits past `length` are zero
    std::uint8_t length = 0;
    bool operator==(const AddressPrefix&) const = default;

    // "a.b.c.d[/n]" or an IPv6 literal "[/n]"; nullopt on anything else (including set host bits).
    static std::optional<AddressPrefix> parse(std::string_view text);
    bool contains(const IpAddress& ip) const;
    std::string to_string() const;
};

// `ip` with every bit past `length` cleared.
IpAddress mask(const IpAddress& ip, unsigned length);

class AddressSet {
  public:
    AddressSet() = default;
    explicit AddressSet(std::vector<AddressPrefix> prefixes) : prefixes_(std::move(prefixes)) {}
    bool contains(const IpAddress& ip) const;
    bool empty() const { return prefixes_.empty(); }
    const std::vector<AddressPrefix>& prefixes() const { return prefixes_; }
    std::string to_string() const;  // "[127.0.0.0/8, ::1/128]"
    bool operator==(const AddressSet&) const = default;

  private:
    std::vector<AddressPrefix> prefixes_;
};

}  // namespace toast::tracker
