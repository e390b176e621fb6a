#include "server/core/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace toast::server {

RateLimiter::RateLimiter(Limits limits) : limits_(limits), overall_tokens_(limits.overall_burst) {}

void RateLimiter::set_limits(Limits limits) {
    limits_ = limits;
    overall_tokens_ = std::min(overall_tokens_, limits_.overall_burst);
    for (auto& [key, b] : buckets_)
        b.tokens = std::min(b.tokens, limits_.burst);
    while (buckets_.size() > limits_.max_keys) {
        buckets_.erase(order_.front());
        order_.pop_front();
    }
}

void RateLimiter::refill(double& tokens, Time& updated, Time now, double rate, double burst) {
    if (now > updated) {
        tokens = std::min(burst, tokens + std::chrono::duration<double>(now - updated).count() * rate);
        updated = now;
    }
}

std::chrono::seconds RateLimiter::wait_for_token(double tokens, double rate) {
    const double missing = std::max(0.0, 1.0 - tokens);
    const double seconds = rate > 0 ? missing / rate : 3600.0;
    return std::chrono::seconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(seconds))));
}

RateLimiter::Decision RateLimiter::take(std::string_view key, Time now) {
    if (!overall_started_) {
        overall_updated_ = now;
        overall_started_ = true;
    }
    refill(overall_tokens_, overall_updated_, now, limits_.overall_rate, limits_.overall_burst);

    auto it = buckets_.find(std::string(key));
    if (it == buckets_.end()) {
        if (buckets_.size() >= limits_.max_keys && !order_.empty()) {
            buckets_.erase(order_.front());
            order_.pop_front();
        }
        order_.emplace_back(key);
        it = buckets_.emplace(std::string(key), Bucket{limits_.burst, now, std::prev(order_.end())}).first;
    } else {
        order_.splice(order_.end(), order_, it->second.order);
    }
    auto& b = it->second;
    refill(b.tokens, b.updated, now, limits_.rate, limits_.burst);

    Decision d;
    if (b.tokens < 1.0) {
        d.retry_after = wait_for_token(b.tokens, limits_.rate);
        return d;
    }
    if (overall_tokens_ < 1.0) {
        d.overall = true;
        d.retry_after = wait_for_token(overall_tokens_, limits_.overall_rate);
        return d;
    }
    b.tokens -= 1.0;
    overall_tokens_ -= 1.0;
    d.allowed = true;
    return d;
}

}  // namespace toast::server
