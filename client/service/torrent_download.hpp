// Fetches a title's .torrent over HTTP for the service's "add by URL" (the operator's catalogue serves them).
// http:// only, one GET, redirects not followed, the body bounded: the answer is the torrent's bytes or a
// message saying what went wrong (unreachable, not 200, too large, too slow).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

namespace toast::client {

struct TorrentDownloadResult {
    bool ok = false;
    std::string body;   // ok: the torrent's bytes
    std::string error;  // !ok: what went wrong, naming the URL
};

// `done` runs once on `io`'s thread.
void download_torrent(boost::asio::io_context& io, const std::string& url, std::size_t body_limit,
                      std::chrono::milliseconds timeout, std::function<void(TorrentDownloadResult)> done);

}  // namespace toast::client
