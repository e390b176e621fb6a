// The one place a parsed Beast request becomes the handler's HttpRequest, after the RFC 9112 framing checks
// Beast leaves to the application (Host, Transfer-Encoding). Shared by the session and the request fuzzer, so
// that both feed handle_request exactly the same view of the same bytes; no socket involved.
#pragma once

#include <cstdint>
#include <optional>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/core/request_handler.hpp"

namespace toast::server {

// Request bodies are only meaningful for the admin routes.
inline constexpr std::uint64_t kMaxRequestBody = 64 * 1024;

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

// A 400 that closes the connection when the request's framing is faulty, else nullopt.
std::optional<HttpResponse> framing_rejection(const BeastRequest& message);

// Views into `message`: valid while it lives and is not modified.
HttpRequest request_view(const BeastRequest& message, bool peer_is_loopback, bool on_admin_listener,
                         std::string_view peer_address = {});

}  // namespace toast::server
