// The server fallback's adapter for one title: the StreamController's fetches become HTTP Range requests
// (HttpFetcher), the server's bytes go into the torrent with add_piece (or wait, whole-piece sized, while the
// controller holds the piece for blocks peers are sending), peers' requests for what the server sent are
// cancelled, a fetch whose piece peers delivered first is stopped, and every failure is reported back. It
// only translates: what to fetch, and what an answer or a failure means, are the controller's rules.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <libtorrent/sha1_hash.hpp>
#include <libtorrent/torrent_handle.hpp>

#include "client/core/server_request.hpp"
#include "client/core/stream_controller.hpp"
#include "client/lt/http_fetcher.hpp"
#include "client/lt/swarm_control.hpp"

namespace toast::client {

class ServerFallback {
  public:
    // `key` is the torrent as the session's plugin knows it: it is told of each server piece before
    // add_piece, so that peers' late blocks of it count as raced.
    // `access`: the box's token and TLS context for the server's requests.
    ServerFallback(boost::asio::io_context& io, std::vector<ServerUrl> urls, StreamController& controller,
                   libtorrent::torrent_handle handle, SwarmControl& control, libtorrent::sha1_hash key,
                   ServerAccess access = {});
    ServerFallback(const ServerFallback&) = delete;
    ServerFallback& operator=(const ServerFallback&) = delete;

    // Starts a fetch the controller planned (the whole piece, or the part peers have not sent). When the
    // server's bytes come, what peers are still asked for of them is cancelled.
    void start(const FallbackFetch& fetch, SteadyTime now);
    // Writes the server's bytes held for `piece` (ControllerPlan::release).
    void release(PieceIndex piece);
    // A piece the server was still fetching arrived from peers: the fetch stops, and what the server had
    // sent of it is wasted (what was held for it too).
    void stop_fetch(PieceIndex piece);
    // Stops every fetch; nothing more reaches the controller or the torrent.
    void stop();
    // The title is on a tier (HttpFetcher::set_routes).
    void set_routes(TierRoutes routes) { fetcher_.set_routes(std::move(routes)); }

    bool reachable(SteadyTime now) const { return fetcher_.servers().reachable(now); }
    std::size_t servers() const { return fetcher_.urls().size(); }
    const std::vector<ServerUrl>& urls() const { return fetcher_.urls(); }
    const FetcherStats& stats() const { return fetcher_.stats(); }

  private:
    void on_piece(const PieceRequest& request, std::vector<char> data);
    void write(PieceIndex piece, std::vector<char> data);

    StreamController& controller_;
    libtorrent::torrent_handle handle_;
    SwarmControl& control_;
    libtorrent::sha1_hash key_;
    HttpFetcher fetcher_;
    // Pieces the controller holds: the server's bytes so far at their place in the piece, zeros elsewhere.
    std::map<PieceIndex, std::vector<char>> held_;
    bool stopped_ = false;
};

}  // namespace toast::client
