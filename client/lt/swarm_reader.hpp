// Reads one torrent's state from libtorrent into the controller's plain SwarmSample: piece availability,
// the connected BitTorrent peers (seed or not, the operator's or not, rate, request queue), the pieces peers
// are sending with the bytes they still owe, and how many peers the tracker named. The vectors libtorrent
// fills are kept between reads so a tick allocates little.
#pragma once

#include <chrono>
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
    // Peers are read at most once per `peer_interval`, and whenever peers come or go.
    SwarmReader(libtorrent::torrent_handle handle, TitleGeometry geometry,
                std::chrono::milliseconds peer_interval);

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
    libtorrent::torrent_status status_;
    std::vector<libtorrent::partial_piece_info> queue_;
    std::vector<libtorrent::peer_info> peers_;
    std::chrono::milliseconds peer_interval_;
    std::vector<PeerSample> peer_samples_;  // the last peers read, reused until the next read
    std::optional<SteadyTime> peers_read_at_;
    int peers_seen_ = -1;  // status().num_peers when they were read
    void read_peers(const std::set<libtorrent::tcp::endpoint>& operators);
};

}  // namespace toast::client
