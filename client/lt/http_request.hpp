// One HTTP request to the operator's server on its own connection (Connection: close), plain or TLS, with a
// bound on the answer's size and on the time of each step: the token renewal, the telemetry reports and the
// serve service's torrent downloads. The answer is the status and body, or what went wrong.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include "client/core/server_request.hpp"

namespace toast::client {

struct HttpRequestSpec {
    std::string method = "GET";
    ServerUrl url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::size_t body_limit = 64 * 1024;         // larger answers fail
    std::chrono::milliseconds timeout{10'000};  // each of connect, write, read
};

struct HttpAnswer {
    int status = 0;      // 0: no answer (see error)
    std::string reason;  // the status line's reason phrase
    std::string body;
    std::string error;  // set when status == 0: what went wrong (the caller names the URL)
};

// `done` runs once on `io`'s thread. `tls` may be null (an https:// URL then fails).
void http_request(boost::asio::io_context& io, HttpRequestSpec spec,
                  std::shared_ptr<boost::asio::ssl::context> tls, std::function<void(HttpAnswer)> done);

}  // namespace toast::client
