// toast-server's signed-URL commands and start-up notes: `sign` issues a token for the operator's subscriber
// system, and `check` and `serve` say whether the server answers everyone.
#pragma once

#include <cstdint>
#include <string>
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

}  // namespace toast::server
