// Reads one torrent's state from libtorrent into the controller's plain SwarmSample: piece availability,
// the connected BitTorrent peers (seed or not, the operator's or not, rate, request queue), the pieces peers
// are sending with the bytes they still owe, and how many peers the tracker named. The vectors libtorrent
// fills are kept between reads so a tick allocates little. A read asks libtorrent for everything in one
// batch on its network thread (each torrent_handle getter would otherwise be a round trip to it, a wake-up of
// both threads) and turns the answers into the sample on the caller's thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include <libtorrent/peer_info.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/core/cancel_ledger.hpp"
#include "client/core/swarm_sample.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

class SwarmReader {
  public:
    // Runs a batch of libtorrent calls where they are cheapest (SwarmControl::run_on_network) and returns
    // once it has run.
    using Batch = std::function<void(const std::function<void()>&)>;

    // Peers are read at most once per `peer_interval`, and whenever peers come or go. Without `batch` the
    // calls are made on the caller's thread.
    SwarmReader(libtorrent::torrent_handle handle, TitleGeometry geometry,
                std::chrono::milliseconds peer_interval, Batch batch = {});

    // The torrent is still checking its files (or resume data): there is nothing to decide yet.
    bool checking() const;
    // The pieces libtorrent has (at start: a seed, or a resumed download).
    PieceSet pieces_on_disk() const;
    // The sample at `now`; refreshes status(). `operators` are the remote ends of the connections to the
    // operator's peers (SwarmControl::operator_connections).
    // `fronts`: the blocks at the front of each peer's queue of our requests, with their places there
    // (SwarmControl::queue_fronts).
    SwarmSample read(SteadyTime now, bool server_up, const std::set<libtorrent::tcp::endpoint>& operators,
                     const std::vector<std::pair<BlockRef, int>>& fronts = {});
    // The status read by the last read() or refresh_status(): byte totals for the stats.
    const libtorrent::torrent_status& status() const { return status_; }
    void refresh_status();

  private:
    libtorrent::torrent_handle handle_;
    TitleGeometry geometry_;
    Batch batch_;
    libtorrent::torrent_status status_;
    std::vector<libtorrent::partial_piece_info> queue_;  // its `blocks` are not ours: see delivered_
    std::vector<std::vector<bool>> delivered_;           // per queue_ entry: each block here or being written
    std::vector<libtorrent::peer_info> peers_;
    std::chrono::milliseconds peer_interval_;
    std::vector<PeerSample> peer_samples_;  // the last peers read, reused until the next read
    std::optional<SteadyTime> peers_read_at_;
    int peers_seen_ = -1;  // status().num_peers when they were read
    void sample_peers(const std::set<libtorrent::tcp::endpoint>& operators);
};

}  // namespace toast::client
