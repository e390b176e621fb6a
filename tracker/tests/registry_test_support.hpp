// What the SwarmRegistry tests share: a fixed clock origin, ids and announces built from small numbers, and a
// registry with a fixed hash key.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker::testing {

inline const TimePoint t0 = TimePoint{} + std::chrono::hours(1000);

inline InfoHash hash(char c) {
    return *InfoHash::from_bytes(std::string(20, c));
}

inline PeerId peer_id(int n) {
    std::string digits = std::to_string(n);
    return *PeerId::from_bytes("-TT0001-" + std::string(12 - digits.size(), '0') + digits);
}

inline IpAddress ip(const std::string& text) {
    return *IpAddress::parse(text);
}

inline AnnounceRequest req(const InfoHash& h, int id, std::uint16_t port, std::uint64_t left,
                           AnnounceEvent event = AnnounceEvent::none) {
    AnnounceRequest r;
    r.info_hash = h;
    r.peer_id = peer_id(id);
    r.port = port;
    r.left = left;
    r.event = event;
    return r;
}

inline SwarmRegistry make(RegistryPolicy p = {}) {
    return SwarmRegistry(p, SipKey{1, 2});
}

}  // namespace toast::tracker::testing
