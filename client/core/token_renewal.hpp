// When a box renews its signed-URL token (POST /token/renew on its server), decided purely from the
// token's times and the clock. A token is renewed once two thirds of its lifetime have passed, so a renewal
// that fails has the last third to be tried again: after 5 s, then doubling up to a minute, while the token
// is still valid. Past its expiry there is nothing to renew with (the server refuses an expired token): the
// box keeps the token it has, and its requests are refused until the operator gives it a new one.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace toast::client {

struct RenewalTimes {
    std::int64_t issued = 0;   // Unix seconds, from the token
    std::int64_t expires = 0;  // Unix seconds
};

// Seconds from `now` (Unix seconds) until the next renewal attempt, after `failures` failed attempts in a
// row; nullopt once the token has expired.
std::optional<std::chrono::seconds> next_renewal(const RenewalTimes& token, std::int64_t now, int failures);

}  // namespace toast::client
