// The server fallback's transport: fetches exactly one piece's bytes with an HTTP Range request, at full
// speed, over keep-alive connections (a few per server URL). A piece is never fetched twice at once; HTTP
// errors, timeouts and malformed answers (not 206, wrong Content-Range, wrong length) retry the piece with
// exponential backoff, on the fastest server that is not backing off itself. Whether the server backs off
// too is FetchFault's rule (a 500 or 503 refuses only that piece); the caller hears of every failure. A
// server that answers after the deadline a request carried (Toast-Late) is passed over for a while when
// another one is usable. Runs on the caller's io_context; every callback comes from there. It knows nothing
// of libtorrent: the caller writes the bytes into the torrent (add_piece) and asks again if the hash check
// fails.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "client/core/piece_types.hpp"
#include "client/core/server_pool.hpp"
#include "client/core/server_request.hpp"
#include "client/core/tier_routes.hpp"
#include "client/lt/server_access.hpp"

namespace toast::client {

struct FetcherConfig {
    int connections_per_server = 2;
    std::chrono::milliseconds timeout{10'000};     // per request (connect, write, read each)
    ServerPool::Backoff server_backoff{};          // a failing server rests this long
    std::chrono::milliseconds retry_initial{200};  // a failing piece waits this long before its next try
    std::chrono::milliseconds retry_max{3'000};
    // A request still unanswered this long after it went out, with its deadline passed, is taken back and
    // asked of another holder of the piece (a title on a tier) that is usable; its server counts as late.
    std::chrono::milliseconds hedge_after{1'000};
    ServerAccess access;  // the box's token (every request carries it) and TLS for https:// servers
    // This box's salt for drawing between a piece's holders (toast::holder_tie_break, toast::choose_holder),
    // so that boxes spread their choices between the holders instead of all asking the same one.
    std::uint64_t tie_salt = 0;
};

struct FetcherStats {
    std::uint64_t requests = 0;        // sent
    std::uint64_t delivered = 0;       // pieces handed to the caller
    std::uint64_t failures = 0;        // connection errors, timeouts, bad status, malformed answers
    std::uint64_t refusals = 0;        // of them, FetchFault::piece: only the piece backed off
    std::uint64_t bytes_received = 0;  // body bytes of every response, accepted or not
    std::uint64_t bytes_rejected = 0;  // body bytes of malformed answers
    std::uint64_t handler_errors = 0;  // exceptions caught in a completion handler (logged, never rethrown)
    std::uint64_t late_answers = 0;    // answers the server marked Toast-Late (its disks are behind)
    std::uint64_t abandoned = 0;       // requests in flight stopped by abandon()
    std::uint64_t hedged = 0;          // requests past their deadline moved to the piece's other holder
};

class HttpFetcher {
  public:
    // `data` answers `request` (a piece or part of one); `server` is the index into the URL list it came
    // from.
    using OnPiece =
        std::function<void(const PieceRequest& request, std::vector<char> data, std::size_t server)>;

    // A fetch of `request` failed and will be tried again after a backoff: the caller may ask peers for it.
    // `unavailable`: the bytes a 503 said the server cannot serve (Toast-Unavailable), when it said so.
    using OnFailed = std::function<void(const PieceRequest& request, FetchFault fault,
                                        const std::optional<UnavailableBytes>& unavailable)>;

    HttpFetcher(boost::asio::io_context& io, std::vector<ServerUrl> servers, FetcherConfig config,
                OnPiece on_piece);
    void on_failed(OnFailed callback);
    // The title is on a tier: each piece is asked of its holders first (directly, Toast-Direct), the less
    // loaded one (Toast-Load), and of the other when one fails, refuses or misses the deadline; with no
    // holder usable, of any server (it relays). Set before the first fetch.
    void set_routes(TierRoutes routes);
    ~HttpFetcher();
    HttpFetcher(const HttpFetcher&) = delete;
    HttpFetcher& operator=(const HttpFetcher&) = delete;

    // Queues `request` to start after `delay`. False (and nothing queued) when the piece is already queued
    // or in flight.
    bool fetch(const PieceRequest& request, std::chrono::milliseconds delay = std::chrono::milliseconds(0));
    // The piece arrived another way: drops it from the queue, or stops its request in flight by closing
    // that connection (HTTP/1.1 has no other way to call a request back; the next request opens a new one).
    // The server sends no more of it, and what it has sent and is still in the socket is dropped; the
    // callback does not run. Returns the body bytes received of it so far (0 if it was queued), or none if
    // the piece was neither queued nor in flight.
    std::optional<std::uint64_t> abandon(PieceIndex piece);
    bool busy(PieceIndex piece) const;
    std::size_t in_flight() const;
    std::size_t queued() const;
    const FetcherStats& stats() const;
    const ServerPool& servers() const;
    const std::vector<ServerUrl>& urls() const;
    // Closes every connection; no callback runs afterwards.
    void stop();

  private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toast::client
