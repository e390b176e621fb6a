// Fetches a title's .torrent over HTTP or HTTPS for the service's "add by URL" (the operator's catalogue
// serves them), with the box's token: one GET, redirects not followed, the body bounded: the answer is the
// torrent's bytes or a message saying what went wrong (unreachable, not 200, too large, too slow, a
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

// `done` runs once on `io`'s thread.
void download_torrent(boost::asio::io_context& io, const std::string& url, std::size_t body_limit,
                      std::chrono::milliseconds timeout, const ServerAccess& access,
                      std::function<void(TorrentDownloadResult)> done);

}  // namespace toast::client
