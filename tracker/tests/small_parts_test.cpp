// SipHash, the rate limiter, whitelist files and address handling.
#include <catch2/catch.hpp>

#include <string>

#include "tracker/core/address_set.hpp"
#include "tracker/core/ids.hpp"
#include "tracker/core/rate_limiter.hpp"
#include "tracker/core/siphash.hpp"
#include "tracker/core/whitelist.hpp"

using namespace toast::tracker;
using namespace std::chrono_literals;

TEST_CASE("siphash-2-4 matches the reference test vectors", "[tracker][siphash]") {
    // Key 00..0f (little-endian words), messages 00..(n-1): vectors from the SipHash paper's reference code.
    SipKey key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    std::string msg;
    for (int i = 0; i < 15; ++i)
        msg += static_cast<char>(i);
    CHECK(siphash24(key, msg) == 0xa129ca6149be45e5ull);
    CHECK(siphash24(key, "") == 0x726fdb47dd0e0e31ull);
    CHECK(siphash24(key, msg.substr(0, 8)) == 0x93f5f5799a932462ull);
}

TEST_CASE("the rate limiter allows a burst, then the refill rate, per address", "[tracker][ratelimit]") {
    RateLimiter limiter(RateLimit{.per_second = 2, .burst = 3, .max_tracked = 100, .ipv6_prefix = 64},
                        SipKey{1, 1});
    const auto t = RateLimiter::TimePoint{} + 100h;
    auto a = *IpAddress::parse("10.0.0.1");
    auto b = *IpAddress::parse("10.0.0.2");
    CHECK(limiter.allow(a, t));
    CHECK(limiter.allow(a, t));
    CHECK(limiter.allow(a, t));
    CHECK_FALSE(limiter.allow(a, t));
    CHECK(limiter.allow(b, t));                // another address has its own bucket
    CHECK_FALSE(limiter.allow(a, t + 400ms));  // 2/s: 0.8 tokens after 0.4 s
    CHECK(limiter.allow(a, t + 600ms));        // 1.2 tokens after 0.6 s
    CHECK_FALSE(limiter.allow(a, t + 600ms));  // 0.2 left
    // A bucket that has refilled completely carries no information and is pruned.
    CHECK(limiter.prune(t + 1900ms) == 1);  // b (2 tokens at t) is full; a has 0.2 + 2.6 < 3
    CHECK(limiter.tracked() == 1);
    CHECK(limiter.prune(t + 2100ms) == 1);
    CHECK(limiter.tracked() == 0);
}

TEST_CASE("only configured sources are exempt from the rate limit, loopback is not by default",
          "[tracker][ratelimit]") {
    const auto t = RateLimiter::TimePoint{} + 1h;
    const auto local = *IpAddress::parse("127.0.0.1");
    RateLimiter exempt(RateLimit{.per_second = 1,
                                 .burst = 1,
                                 .max_tracked = 100,
                                 .exempt = AddressSet({*AddressPrefix::parse("127.0.0.0/8")}),
                                 .ipv6_prefix = 64},
                       SipKey{});
    for (int i = 0; i < 100; ++i)
        REQUIRE(exempt.allow(local, t));
    CHECK(exempt.tracked() == 0);
    CHECK(exempt.allow(*IpAddress::parse("10.0.0.1"), t));
    CHECK_FALSE(exempt.allow(*IpAddress::parse("10.0.0.1"), t));
    RateLimiter strict(RateLimit{.per_second = 1, .burst = 1, .max_tracked = 100, .ipv6_prefix = 64},
                       SipKey{});
    CHECK(strict.allow(local, t));
    CHECK_FALSE(strict.allow(local, t));
}

TEST_CASE("IPv6 sources share one bucket per /64", "[tracker][ratelimit]") {
    const auto t = RateLimiter::TimePoint{} + 1h;
    RateLimiter limiter(RateLimit{.per_second = 1, .burst = 2, .max_tracked = 100, .ipv6_prefix = 64},
                        SipKey{});
    // Two addresses of one /64 (what one subscriber gets) draw from the same two tokens.
    CHECK(limiter.allow(*IpAddress::parse("2001:db8:1:2::1"), t));
    CHECK(limiter.allow(*IpAddress::parse("2001:db8:1:2:ffff:ffff:ffff:ffff"), t));
    CHECK_FALSE(limiter.allow(*IpAddress::parse("2001:db8:1:2:abcd::9"), t));
    // The neighbouring /64 has its own bucket.
    CHECK(limiter.allow(*IpAddress::parse("2001:db8:1:3::1"), t));
    CHECK(limiter.tracked() == 2);
    // IPv4 addresses are limited one by one.
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.1"), t));
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.1"), t));
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.2"), t));
    // A /128 limit treats each address alone.
    RateLimiter single(RateLimit{.per_second = 1, .burst = 1, .max_tracked = 100, .ipv6_prefix = 128},
                       SipKey{});
    CHECK(single.allow(*IpAddress::parse("2001:db8::1"), t));
    CHECK(single.allow(*IpAddress::parse("2001:db8::2"), t));
    CHECK_FALSE(single.allow(*IpAddress::parse("2001:db8::2"), t));
}

TEST_CASE("address prefixes parse, match their family and refuse host bits", "[tracker][ids]") {
    auto lo = AddressPrefix::parse("127.0.0.0/8");
    REQUIRE(lo);
    CHECK(lo->contains(*IpAddress::parse("127.1.2.3")));
    CHECK_FALSE(lo->contains(*IpAddress::parse("128.0.0.1")));
    CHECK_FALSE(lo->contains(*IpAddress::parse("::1")));
    CHECK(lo->to_string() == "127.0.0.0/8");
    auto one = AddressPrefix::parse("::1");
    REQUIRE(one);
    CHECK(one->length == 128);
    CHECK(one->contains(*IpAddress::parse("::1")));
    CHECK_FALSE(one->contains(*IpAddress::parse("::2")));
    auto net = AddressPrefix::parse("2001:db8::/33");
    REQUIRE(net);
    CHECK(net->contains(*IpAddress::parse("2001:db8:7fff::1")));
    CHECK_FALSE(net->contains(*IpAddress::parse("2001:db8:8000::1")));
    CHECK(AddressPrefix::parse("0.0.0.0/0")->contains(*IpAddress::parse("8.8.8.8")));
    // An IPv4-mapped source is IPv4 by the time it is matched.
    CHECK(lo->contains(*IpAddress::parse("::ffff:127.0.0.1")));
    for (const char* bad : {"10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "localhost", "",
                            "10.0.0.0/08x", "2001:db8::/-1"}) {
        INFO(bad);
        CHECK_FALSE(AddressPrefix::parse(bad).has_value());
    }
    CHECK(mask(*IpAddress::parse("10.255.255.255"), 12) == *IpAddress::parse("10.240.0.0"));
    AddressSet set({*lo, *one});
    CHECK(set.to_string() == "[127.0.0.0/8, ::1/128]");
    CHECK(set.contains(*IpAddress::parse("::1")));
    CHECK_FALSE(AddressSet().contains(*IpAddress::parse("::1")));
}

TEST_CASE("a disabled rate limiter allows everything and tracks nothing", "[tracker][ratelimit]") {
    RateLimiter limiter(RateLimit{.per_second = 0, .burst = 1, .max_tracked = 100, .ipv6_prefix = 64},
                        SipKey{});
    auto a = *IpAddress::parse("10.0.0.1");
    for (int i = 0; i < 1000; ++i)
        REQUIRE(limiter.allow(a, RateLimiter::TimePoint{}));
    CHECK(limiter.tracked() == 0);
}

TEST_CASE("beyond max_tracked addresses new ones pass untracked", "[tracker][ratelimit]") {
    RateLimiter limiter(RateLimit{.per_second = 1, .burst = 1, .max_tracked = 2, .ipv6_prefix = 64},
                        SipKey{});
    const auto t = RateLimiter::TimePoint{} + 1h;
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.1"), t));
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.2"), t));
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.3"), t));
    CHECK(limiter.allow(*IpAddress::parse("10.0.0.3"), t));
    CHECK(limiter.tracked() == 2);
}

TEST_CASE("a whitelist file takes hex v1 and v2 hashes, comments and blank lines", "[tracker][whitelist]") {
    const std::string v1 = "0123456789abcdef0123456789ABCDEF01234567";
    const std::string v2 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbbbbbbbbb";
    auto list = parse_whitelist("# titles\n\n  " + v1 + "  \r\n" + v2 + "\n");
    REQUIRE(list.ok());
    CHECK(list.value().size() == 2);
    CHECK(list.value().contains(*InfoHash::from_bytes(*from_hex(v1))));
    CHECK(list.value().contains(*InfoHash::from_bytes(*from_hex(v2.substr(0, 40)))));
    CHECK_FALSE(list.value().contains(InfoHash{}));
}

TEST_CASE("a bad whitelist line is reported with its number", "[tracker][whitelist]") {
    auto short_line = parse_whitelist("# ok\n0123\n");
    REQUIRE_FALSE(short_line.ok());
    CHECK(short_line.error().line == 2);
    CHECK(short_line.error().message == "expected a 40- or 64-digit hex info-hash, got \"0123\"");
    auto not_hex = parse_whitelist(std::string(40, 'a') + "\n" + std::string(39, 'a') + "g\n");
    REQUIRE_FALSE(not_hex.ok());
    CHECK(not_hex.error().line == 2);
    CHECK(parse_whitelist("").ok());
}

TEST_CASE("addresses parse, unmap IPv4-mapped IPv6 and know loopback", "[tracker][ids]") {
    auto mapped = IpAddress::parse("::ffff:10.1.2.3");
    REQUIRE(mapped);
    CHECK_FALSE(mapped->v6);
    CHECK(*mapped == *IpAddress::parse("10.1.2.3"));
    CHECK(IpAddress::parse("127.0.0.5")->is_loopback());
    CHECK(IpAddress::parse("::1")->is_loopback());
    CHECK_FALSE(IpAddress::parse("10.0.0.1")->is_loopback());
    CHECK_FALSE(IpAddress::parse("::2")->is_loopback());
    CHECK_FALSE(IpAddress::parse("1.2.3").has_value());
    CHECK_FALSE(IpAddress::parse("[::1]").has_value());
    CHECK(IpAddress::v4_from(0x0a000001).to_string() == "10.0.0.1");
    CHECK(to_hex(std::string("\x00\xff\x10", 3)) == "00ff10");
    CHECK(from_hex("00FF10") == std::optional<std::string>(std::string("\x00\xff\x10", 3)));
    CHECK_FALSE(from_hex("0").has_value());
}
