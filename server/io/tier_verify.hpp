// `toast-server verify` on a tier: after this node's own disks, every block of every title that another
// node holds is read from that node (answered from its own disks, with every chunk re-checked there:
// Toast-Direct, Cache-Control: no-cache) and checked against this node's manifest, which has every block's
// checksums. A node that is down, does not hold the block, or holds other bytes (If-Match on the title's
// ETag fails) is a problem named with the node.
#pragma once

#include <optional>
#include <string>

#include "server/core/server_config.hpp"
#include "server/io/tier_client.hpp"
#include "server/io/verify.hpp"

namespace toast::server {

// `authorizer`: the Authorization for each read when the nodes want signed URLs (TierClient::set_authorizer).
void verify_tier(const ServerConfig& config, VerifyReport& report,
                 const std::optional<std::string>& title = std::nullopt,
                 TierClient::Authorizer authorizer = {});

}  // namespace toast::server
