// Per-source announce rate limiting: a token bucket per IPv4 address or IPv6 prefix (a /64 by default: one
// subscriber usually gets a whole /64, so limiting single IPv6 addresses would let one host use 2^64
// buckets), refilled at `per_second` up to `burst`. A request is allowed when its bucket holds a whole token.
// Buckets that have refilled completely carry no information and are dropped by prune(), so memory follows
// the number of recently active addresses; when more than `max_tracked` addresses are active at once, new
// addresses are let through untracked rather than growing without bound (documented trade-off: an attack from
// that many addresses is not one a per-IP limit can stop anyway). Sources in `exempt` are never limited;
// nothing is exempt by default, not even loopback, since behind a same-host proxy every remote client arrives
// from loopback.
#pragma once

#include <chrono>
#include <cstddef>
#include <unordered_map>

#include "tracker/core/address_set.hpp"
#include "tracker/core/ids.hpp"
#include "tracker/core/siphash.hpp"

namespace toast::tracker {

struct RateLimit {
    double per_second = 0;  // 0 disables limiting
    double burst = 1;
    std::size_t max_tracked = 1'000'000;
    AddressSet exempt{};
    unsigned ipv6_prefix = 64;  // IPv6 sources share a bucket per prefix of this length
};

class RateLimiter {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    RateLimiter(RateLimit limit, SipKey hash_key);

    bool enabled() const { return limit_.per_second > 0; }
    // Takes one token for `ip`'s bucket if it has one.
    bool allow(const IpAddress& ip, TimePoint now);
    // Drops buckets that are full again at `now`; returns how many were dropped.
    std::size_t prune(TimePoint now);
    std::size_t tracked() const { return buckets_.size(); }
    // A reload: buckets keep their tokens (capped at the new burst) unless the IPv6 prefix changed, which
    // changes what a bucket stands for, or limiting was switched off.
    void set_limit(const RateLimit& limit);

  private:
    struct Bucket {
        double tokens = 0;
        TimePoint updated;
    };
    struct Hasher {
        SipKey key;
        std::size_t operator()(const IpAddress& ip) const;
    };
    double refill(const Bucket& b, TimePoint now) const;

    RateLimit limit_;
    std::unordered_map<IpAddress, Bucket, Hasher> buckets_;
};

}  // namespace toast::tracker
