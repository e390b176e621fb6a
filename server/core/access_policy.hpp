// Who may fetch what from the server: the keys signed URLs are checked against, the key renewals are signed
// with, and the subscribers refused whatever their token says. Plain data, loaded from the config's "access"
// object (server_config.cpp) and replaced as a whole on SIGHUP; access_check.hpp decides with it.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace toast::server {

struct AccessKey {
    std::string id;      // the token's KID
    std::string secret;  // raw bytes, at least kMinSecretBytes
    bool operator==(const AccessKey&) const = default;
};

// 128 bits: below that a key can be searched for; `openssl rand -hex 32` gives 256.
inline constexpr std::size_t kMinSecretBytes = 16;
inline constexpr std::size_t kMaxSecretBytes = 128;

struct AccessPolicy {
    std::vector<AccessKey> keys;  // empty: the server serves everyone (and says so at start-up)
    std::string signing_key;      // the id of the key renewals are signed with (default: the first key)
    std::set<std::string, std::less<>> revoked_subscribers;

    bool open() const { return keys.empty(); }
    const AccessKey* key(std::string_view id) const {
        for (const auto& k : keys)
            if (k.id == id) return &k;
        return nullptr;
    }
    bool operator==(const AccessPolicy&) const = default;
};

}  // namespace toast::server
