// The service's small HTTP client for its operator's server: a title's .torrent for "add by URL" (the
// operator's catalogue serves them), the catalogue, the push assignment, a play report. http:// or https://
// (the box's CA), with the box's token, one request per connection, redirects not followed, the body bounded:
// the answer's status and body, or a message saying what went wrong (unreachable, too large, too slow, a
// certificate the box's CA did not sign).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "client/lt/server_access.hpp"

namespace toast::client {

struct TorrentDownloadResult {
    bool ok = false;
    std::string body;   // ok: the torrent's bytes
    std::string error;  // !ok: what went wrong, naming the URL
};

struct HttpCallResult {
    int status = 0;      // 0: no answer (`error` says why)
    std::string reason;  // the status line's
    std::string body;
    std::string error;  // no answer: what went wrong, naming the URL
};

// `method` is GET or POST (an empty body). `done` runs once on `io`'s thread.
void http_call(boost::asio::io_context& io, const std::string& method, const std::string& url,
               std::size_t body_limit, std::chrono::milliseconds timeout, const ServerAccess& access,
               std::function<void(HttpCallResult)> done);

// GET `url`; ok only for a 200 answer. `done` runs once on `io`'s thread.
void download_torrent(boost::asio::io_context& io, const std::string& url, std::size_t body_limit,
                      std::chrono::milliseconds timeout, const ServerAccess& access,
                      std::function<void(TorrentDownloadResult)> done);

}  // namespace toast::client
