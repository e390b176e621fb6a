// The admin routes, answered like the rest of handle_request (no sockets), to loopback peers only, and on
// admin_listen only when the server has one:
//   GET/HEAD /admin/disks               every disk's path, fault, queue depth, service time and byte counts
//   POST     /admin/disks/N/fault       merge a JSON fault ({"offline":true}, stutter_pct, added_latency)
// A POST must carry a JSON body and no sign of another origin (see refuse_unsafe_admin_post).
#pragma once

#include <string_view>

#include "server/core/request_handler.hpp"

namespace toast::server {

// `path` is the request's decoded path, starting with /admin.
HttpResponse serve_admin(const HttpRequest& request, std::string_view path, HandlerContext& context);

}  // namespace toast::server
