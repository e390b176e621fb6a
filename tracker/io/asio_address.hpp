// Conversions between asio addresses and the core's plain IpAddress (IPv4-mapped IPv6 becomes IPv4, so a
// dual-stack socket records the same peer as an IPv4 one would).
#pragma once

#include <boost/asio/ip/address.hpp>

#include "tracker/core/ids.hpp"

namespace toast::tracker {

inline IpAddress to_ip(const boost::asio::ip::address& a) {
    if (a.is_v4()) return IpAddress::v4_from(a.to_v4().to_uint());
    return IpAddress::v6_from(a.to_v6().to_bytes());
}

}  // namespace toast::tracker
