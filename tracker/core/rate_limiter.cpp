#include "tracker/core/rate_limiter.hpp"

#include <algorithm>

namespace toast::tracker {

std::size_t RateLimiter::Hasher::operator()(const IpAddress& ip) const {
    return static_cast<std::size_t>(
        siphash24(key, std::string_view(reinterpret_cast<const char*>(ip.bytes.data()), ip.size())));
}

RateLimiter::RateLimiter(RateLimit limit, SipKey hash_key) : limit_(limit), buckets_(64, Hasher{hash_key}) {}

double RateLimiter::refill(const Bucket& b, TimePoint now) const {
    double elapsed = std::chrono::duration<double>(now - b.updated).count();
    if (elapsed < 0) elapsed = 0;
    return std::min(limit_.burst, b.tokens + elapsed * limit_.per_second);
}

bool RateLimiter::allow(const IpAddress& ip, TimePoint now) {
    if (!enabled()) return true;
    if (limit_.exempt.contains(ip)) return true;
    const IpAddress key = ip.v6 ? mask(ip, limit_.ipv6_prefix) : ip;
    auto it = buckets_.find(key);
    if (it == buckets_.end()) {
        if (buckets_.size() >= limit_.max_tracked) return true;
        it = buckets_.emplace(key, Bucket{limit_.burst, now}).first;
    }
    Bucket& b = it->second;
    b.tokens = refill(b, now);
    b.updated = now;
    if (b.tokens < 1.0) return false;
    b.tokens -= 1.0;
    return true;
}

void RateLimiter::set_limit(const RateLimit& limit) {
    const bool regroup = limit.ipv6_prefix != limit_.ipv6_prefix || limit.per_second <= 0;
    limit_ = limit;
    if (regroup) {
        buckets_.clear();
        return;
    }
    for (auto& [ip, bucket] : buckets_)
        bucket.tokens = std::min(bucket.tokens, limit_.burst);
}

std::size_t RateLimiter::prune(TimePoint now) {
    std::size_t dropped = 0;
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        if (refill(it->second, now) >= limit_.burst) {
            it = buckets_.erase(it);
            ++dropped;
        } else {
            ++it;
        }
    }
    return dropped;
}

}  // namespace toast::tracker
