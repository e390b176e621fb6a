// What the stream controller reads from the swarm at one tick (a SwarmSample, filled by the libtorrent
// adapter from torrent_handle queries), what it answers (a ControllerPlan, applied by the adapter), and the
// pure derivations from a sample that the controller's rules use. Plain data: tests construct samples by
// hand, as the piece policies' tests construct snapshots.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "client/core/fallback_planner.hpp"
#include "client/core/piece_policy.hpp"
#include "client/core/piece_types.hpp"
#include "client/core/stream_watcher.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

// One connected BitTorrent peer.
struct PeerSample {
    bool seed = false;  // has every piece
    // Downloads nothing (BEP 21 upload-only: a box seeding what it holds, or one whose buffer is full). With
    // `seed`, a peer whose upload no viewer of ours competes for.
    bool upload_only = false;
    // Named by the operator (the torrent's operator_peers, --operator-peer): server-side, not a viewer. Its
    // pieces do not make a piece "held by a viewer".
    bool operator_peer = false;
    double download_rate = 0;  // payload bytes per second we receive from it now
    int queue_length = 0;      // our block requests outstanding to it
    // Filled only for an operator peer that is not a seed: the pieces it has (a seed has them all).
    PieceSet pieces;
};

// BitTorrent peers send pieces in blocks of 16 KiB (the last block of a piece may be shorter); libtorrent
// tracks each block of a piece it is downloading.
inline constexpr Bytes block_size{16 * 1024};

// A piece peers have delivered some blocks of, or whose blocks are at the front of the queue of requests to a
// peer: which blocks libtorrent holds (written to disk or being written), and each block's place in the
// queue of the peer it was asked of (0: the one it is sending now; -1: not among the first few, or not
// asked). Block b covers bytes [b * block_size, (b + 1) * block_size) of the piece; each vector has one
// entry per block (missing entries are false / -1).
struct PieceProgress {
    PieceIndex piece;
    std::vector<bool> delivered;
    std::vector<int> queue_position = {};
};

// Invariants the adapter keeps: availability has piece_count entries (peers holding each piece, every
// connected peer counted); every in-flight piece is a valid index.
struct SwarmSample {
    SteadyTime now{};
    std::vector<int> availability;
    std::vector<PeerSample> peers;
    std::vector<PieceIndex> in_flight;    // pieces peers are sending us now: requested, not yet complete
    std::vector<PieceProgress> progress;  // in-flight pieces with a block delivered or at a queue's front
    // Payload bytes received from peers since the torrent started (pieces the server sent are not counted).
    Bytes from_peers{0};
    // Peers the tracker named that we know of, connected or not (libtorrent's list_peers).
    int known_peers = 0;
    // At least one server URL answers (its last request did not fail).
    bool server_up = true;
};

// What the controller wants done now. The adapter applies it in this order: ejections, the upload-mode
// change, server fetches, the piece plan, the re-announce.
struct ControllerPlan {
    std::vector<PieceIndex> eject;       // drop from local storage (bounded buffer)
    std::optional<bool> upload_mode;     // set (true) or clear (false) libtorrent's upload_mode; absent: keep
    std::vector<FallbackFetch> fetches;  // start these server fetches, most urgent first
    // Write the server's bytes held for these pieces now (StreamController::on_server_data said hold): the
    // peers' blocks they waited for are here.
    std::vector<PieceIndex> release;
    PiecePlan pieces;          // what peers are asked for
    bool apply_pieces = true;  // false while downloading is suspended (the buffer is full)
    bool reannounce = false;   // ask the tracker again now
    // The last piece just arrived: tell the tracker now that this client is a seed (event=completed), not
    // at its next regular announce. libtorrent does so only when its own download completed the torrent.
    bool announce_completed = false;
    bool leave = false;  // the behaviour is done (download complete, playback ended)
    // Ask the operator's peers for pieces (tell them we are interested): the other boxes cannot deliver in
    // time (OperatorTier). While false they are told we are not.
    bool ask_operator = false;
    PieceCount horizon;  // the give-up zone in pieces (for logs)
};

// Figures derived from the connected peers.
struct PeerFigures {
    int connected = 0;
    int seeds = 0;
    int operator_peers = 0;
    double rate = 0;  // payload bytes per second, all peers together
    // Of `rate`, what peers that download nothing (seeds and upload-only peers, not the operator's) deliver.
    double idle_rate = 0;
    int idle = 0;  // connected peers that download nothing (seeds and upload-only peers, not the operator's)
    bool saturated = false;  // some peer has a full request pipeline: `rate` shows what peers can deliver
};
PeerFigures peer_figures(const std::vector<PeerSample>& peers, int saturated_queue);

// How many viewers hold each piece: the sample's availability without the operator's peers.
std::vector<int> viewer_availability(const SwarmSample& sample);

}  // namespace toast::client
