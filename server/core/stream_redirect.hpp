// A paced stream this node cannot admit goes to another node of the tier with room: 307 to that node's
// /stream/NAME, carrying in its query the nodes that refused it already ("?refused=a,b"), so that no node
// sends it back to one of them and a stream nobody can take ends as a 503 after at most one visit per node.
// Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/core/request_handler.hpp"

namespace toast::server {

// The node ids in the target's "refused" query parameter (comma-separated); invalid ids are dropped.
std::vector<std::string> refused_nodes(std::string_view target);

// 307 to `node_url` + the target's path, its query parameters other than "refused" (a signed URL's token
// among them) and "refused=" + every refused id (the earlier ones and `self`), with a body that says why
// (`reason`: what was full here).
HttpResponse stream_redirect(std::string_view node_url, std::string_view target,
                             std::vector<std::string> refused, std::string_view self,
                             std::string_view reason);

}  // namespace toast::server
