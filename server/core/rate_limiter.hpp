// Token buckets for requests keyed by who sends them (a subscriber), plus one for everyone together: a key
// may send `burst` requests at once and `rate` per second after that, and all keys together `overall_burst`
// and `overall_rate`. A request is taken only when both buckets have a token, and then from both. At most
// `max_keys` buckets are kept: a new key pushes out the one idle longest (it comes back with a full bucket,
// which the overall bucket still bounds). Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

namespace toast::server {

class RateLimiter {
  public:
    using Time = std::chrono::steady_clock::time_point;

    struct Limits {
        double rate = 0.1;  // per key, requests per second
        double burst = 10;
        double overall_rate = 200;
        double overall_burst = 400;
        std::size_t max_keys = 100'000;
        bool operator==(const Limits&) const = default;
    };

    struct Decision {
        bool allowed = false;
        bool overall = false;                 // refused by the overall bucket (the key's own had a token)
        std::chrono::seconds retry_after{0};  // refused: when a token will be there (at least 1 s)
    };

    explicit RateLimiter(Limits limits);
    Decision take(std::string_view key, Time now);
    // New limits apply from now; buckets keep their tokens (capped at the new burst).
    void set_limits(Limits limits);
    const Limits& limits() const { return limits_; }
    std::size_t tracked() const { return buckets_.size(); }

  private:
    struct Bucket {
        double tokens = 0;
        Time updated{};
        std::list<std::string>::iterator order;
    };

    static void refill(double& tokens, Time& updated, Time now, double rate, double burst);
    static std::chrono::seconds wait_for_token(double tokens, double rate);

    Limits limits_;
    double overall_tokens_;
    Time overall_updated_{};
    bool overall_started_ = false;
    std::unordered_map<std::string, Bucket> buckets_;
    std::list<std::string> order_;  // least recently used first
};

}  // namespace toast::server
