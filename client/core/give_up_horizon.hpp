// The give-up horizon (thesis §5.1.2): how close to the playhead a missing piece may be before the policies
// stop asking peers for it and leave it to the VoD server. A peer needs piece_length / (its rate) to deliver
// a piece; a piece needed sooner than that (times a safety factor, plus a margin) cannot arrive in time.
#pragma once

#include <chrono>
#include <cstdint>

#include "client/core/piece_types.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

struct HorizonConfig {
    // The server fallback adds its own lead (fetch estimate + margin) on top of the horizon, so a late peer
    // costs redundant bytes, never a stall; a generous safety here only hands the server more pieces.
    double safety_factor = 1.0;                                               // multiplies a delivery time
    std::chrono::nanoseconds safety_margin = std::chrono::milliseconds(500);  // added on top
    double ewma_alpha = 0.25;  // weight of each new rate sample
    // The horizon never exceeds this, however slow the peers look.
    std::chrono::nanoseconds max_horizon = std::chrono::seconds(60);
    // Per-peer rate assumed before the first sample, in bytes per second; 0 means the title's bitrate.
    double initial_peer_rate = 0;
};

// Tracks the per-peer delivery rate as an EWMA of rate samples and turns it into a horizon.
// Every sample, the first included, is blended with the estimate so far (starting from the assumed rate): one
// sample taken while a connection ramps up (a few kB/s) must not make the whole title look undeliverable.
// Invariants: peer_rate() > 0; horizon_time() is in [0, max_horizon]; with peer_count() == 0 it is 0: with
// nobody to wait for, nothing is given up early and the server fallback fetches just in time (its own lead,
// FallbackPlanner::need_window, still fires before the deadline); pieces() is at least 1 (the playhead piece
// itself is always the server's once it is missing).
class GiveUpHorizon {
  public:
    GiveUpHorizon(TitleGeometry geometry, HorizonConfig config = {});

    // A piece of `size` bytes arrived from one peer, `took` after it was first requested from that peer.
    void on_piece_from_peer(Bytes size, std::chrono::nanoseconds took);
    // A direct rate sample (bytes per second from one peer), e.g. from a peer's payload download rate.
    void on_peer_rate(double bytes_per_second);
    void set_peer_count(int peers) { peers_ = peers < 0 ? 0 : peers; }

    int peer_count() const { return peers_; }
    double peer_rate() const { return rate_; }
    std::uint64_t samples() const { return samples_; }
    // Time one peer needs to deliver a full piece at peer_rate().
    std::chrono::nanoseconds peer_delivery_time() const;
    std::chrono::nanoseconds horizon_time() const;
    // A piece needed within horizon_time() is given up.
    bool gives_up(std::chrono::nanoseconds time_until_needed) const {
        return time_until_needed < horizon_time();
    }
    // Pieces from the playhead piece on (inclusive) whose deadline falls inside the horizon, given how much
    // of the playhead piece has already played. At least 1, at most the title's piece count.
    PieceCount pieces(std::chrono::nanoseconds into_playhead_piece) const {
        return pieces_within(horizon_time(), into_playhead_piece);
    }
    // The same count for any window: the pieces whose deadline falls inside `window`. The engine gives up the
    // server fallback's whole need window (horizon + fetch estimate + margin), so peers are never asked for a
    // piece the server is about to fetch.
    PieceCount pieces_within(std::chrono::nanoseconds window,
                             std::chrono::nanoseconds into_playhead_piece) const;

  private:
    TitleGeometry geometry_;
    HorizonConfig config_;
    double rate_;
    std::uint64_t samples_ = 0;
    int peers_ = 0;
};

}  // namespace toast::client
