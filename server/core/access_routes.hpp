// The routes of signed URLs and box telemetry, answered like the rest of handle_request (views in, a
// response out, no sockets):
//   POST /token/renew  a valid token (any scope) in, a fresh one of the same subscriber, scope and lifetime
//                      out (text/plain), signed with the policy's signing key; 403 as for content
//   POST /telemetry    a box's QoE report (toast/common/qoe_report.hpp): authenticated by the box's token
//                      when the server has keys, bounded in size (413), rate-limited per subscriber and
//                      overall (429 with Retry-After), then handed to the TelemetrySink; 202 when taken
// and the access check every content route runs before it touches the store.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "server/core/access_check.hpp"
#include "server/core/request_handler.hpp"
#include "toast/common/qoe_report.hpp"

namespace toast::server {

// Where accepted reports go (the adapter aggregates them into metrics). Thread-safe.
class TelemetrySink {
  public:
    struct Outcome {
        bool accepted = false;
        std::chrono::seconds retry_after{0};  // refused by the rate limit
    };
    virtual ~TelemetrySink() = default;
    // `reporter` is the rate limit's key: the subscriber, or the peer's address on an open server.
    virtual Outcome submit(std::string_view reporter, const QoeReport& report) = 0;
};

// The request's credential checked against ctx.access (signature, expiry, revocation; not the scope). On an
// open server: allowed, no token.
AccessVerdict check_request_access(const HttpRequest& request, const HandlerContext& ctx);

// The 403 for a refused verdict: a short body with the reason, nothing else.
HttpResponse forbidden(const AccessVerdict& verdict);

HttpResponse serve_renew(const HttpRequest& request, HandlerContext& ctx);
HttpResponse serve_telemetry(const HttpRequest& request, HandlerContext& ctx);

}  // namespace toast::server
