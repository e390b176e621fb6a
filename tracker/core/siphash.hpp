// SipHash-2-4 (Aumasson & Bernstein, 2012): a keyed 64-bit pseudo-random function for short inputs.
// The tracker uses it where an attacker chooses the input: hash-table keys (info-hashes and peer ids are
// client-chosen, so an unkeyed hash would let one client pile every entry into one bucket) and UDP
// connection ids (which must be unforgeable without the secret).
#pragma once

#include <cstdint>
#include <string_view>

namespace toast::tracker {

struct SipKey {
    std::uint64_t k0 = 0;
    std::uint64_t k1 = 0;
};

std::uint64_t siphash24(const SipKey& key, std::string_view data);

}  // namespace toast::tracker
