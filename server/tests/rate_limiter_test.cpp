#include <catch2/catch.hpp>

#include "server/core/rate_limiter.hpp"

using namespace toast::server;
using namespace std::chrono_literals;

namespace {

RateLimiter::Limits limits() {
    RateLimiter::Limits l;
    l.rate = 0.5;  // one every 2 s
    l.burst = 3;
    l.overall_rate = 10;
    l.overall_burst = 5;
    l.max_keys = 3;
    return l;
}

int allowed(RateLimiter& r, const std::string& key, int tries, RateLimiter::Time at) {
    int n = 0;
    for (int i = 0; i < tries; ++i)
        n += r.take(key, at).allowed ? 1 : 0;
    return n;
}

}  // namespace

TEST_CASE("a key gets its burst at once, then its rate", "[server][ratelimit]") {
    RateLimiter r(limits());
    const RateLimiter::Time t0{};
    CHECK(allowed(r, "a", 10, t0) == 3);
    auto refused = r.take("a", t0);
    CHECK_FALSE(refused.allowed);
    CHECK_FALSE(refused.overall);
    CHECK(refused.retry_after == 2s);
    CHECK(allowed(r, "a", 10, t0 + 1s) == 0);
    CHECK(allowed(r, "a", 10, t0 + 2s) == 1);
    CHECK(allowed(r, "a", 10, t0 + 100s) == 3);  // the bucket holds at most its burst
}

TEST_CASE("every key together is bounded by the overall bucket", "[server][ratelimit]") {
    RateLimiter r(limits());
    const RateLimiter::Time t0{};
    CHECK(allowed(r, "a", 3, t0) == 3);
    CHECK(allowed(r, "b", 3, t0) == 2);
    auto refused = r.take("c", t0);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.overall);
    CHECK(refused.retry_after == 1s);
    // A refusal by the overall bucket takes nothing from the key's own.
    CHECK(allowed(r, "c", 3, t0 + 300ms) == 3);
}

TEST_CASE("at most max_keys buckets are kept, the longest idle pushed out", "[server][ratelimit]") {
    RateLimiter r(limits());
    const RateLimiter::Time t0{};
    CHECK(allowed(r, "a", 3, t0) == 3);
    r.take("b", t0 + 1s);
    r.take("c", t0 + 1s);
    r.take("a", t0 + 1s);  // refused, but "a" is now the most recent
    CHECK(r.tracked() == 3);
    r.take("d", t0 + 1s);  // pushes out "b"
    CHECK(r.tracked() == 3);
    CHECK_FALSE(r.take("a", t0 + 1s).allowed);  // "a" was kept with its empty bucket
    r.set_limits([] {
        auto l = limits();
        l.max_keys = 1;
        return l;
    }());
    CHECK(r.tracked() == 1);
}
