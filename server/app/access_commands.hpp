// toast-server's signed-URL commands and start-up notes: `sign` issues a token for the operator's subscriber
// system, and `check` and `serve` say whether the server answers everyone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/server_config.hpp"

namespace toast::server {

// `toast-server --config C sign --subscriber ID --scope SCOPE [--lifetime D] [--key-id KID]`: prints the
// token on stdout. Returns the exit status: 0, 1 (the config has no keys), 2 (bad arguments, with a message
// naming the option on stderr).
int run_sign(const ServerConfig& config, const std::vector<std::string>& args, std::int64_t unix_now);

// One line for `check` and the start-up log: "access: open, no keys: every content route answers
// everyone" or "access: signed URLs, keys k1, k2 (renewals signed with k2), 1 revoked subscriber".
std::string access_summary(const AccessPolicy& access);

// The Authorization a node of a tier sends with a relayed or verified read of `title` from another node:
// "Bearer " and a token for subscriber "tier.NODE" and that title, signed with the signing key, valid for a
// few minutes from `unix_now`; empty when the config has no keys (the nodes answer everyone). Every node of a
// tier must hold that key.
std::string tier_authorization(const AccessPolicy& access, std::string_view node_id, std::string_view title,
                               std::int64_t unix_now);

}  // namespace toast::server
