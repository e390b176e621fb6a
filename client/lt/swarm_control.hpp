// What Toast needs to say to peers that libtorrent's public API cannot: a raw CANCEL for requests still
// outstanding for a piece the server just delivered (add_piece cancels nothing, torrent.cpp:1352 is dead
// code in 2.0.8), an lt_donthave for a piece ejected from the bounded buffer, and the chokers that replace
// libtorrent's (core/choker.hpp).
// A CANCEL goes only to a peer that answers it: one that leaves cancelled requests unanswered (Transmission
// 3.00) gets them requested again instead, or libtorrent would wait for them for good (CancelLedger). What
// peers had already sent of such a piece still arrives, and is counted (raced_bytes).
// It also learns which connections are the operator's peers: a peer is named by its listen address, which is
// the remote end of a connection we opened, and the extension handshake's "p" (with the remote address) of
// one it opened; libtorrent's peer_info knows only the connection's remote end.
// The libtorrent plugins that do the talking are in toast_plugin.cpp; this is what titles and plugins share.
// One per session, for all its torrents (a torrent is named by info_hash_t::get_best()). Titles call in from
// their thread; everything that touches a peer runs on libtorrent's network thread (inside plugin callbacks
// or posted to the session's io_context).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <libtorrent/extensions.hpp>
#include <libtorrent/io_context.hpp>
#include <libtorrent/sha1_hash.hpp>
#include <libtorrent/socket.hpp>

#include "client/core/cancel_ledger.hpp"
#include "client/core/piece_types.hpp"

#include "client/lt/session_factory.hpp"

namespace toast::client {

class ToastTorrentPlugin;

class SwarmControl : public std::enable_shared_from_this<SwarmControl> {
  public:
    struct Config {
        ChokerKind choker = ChokerKind::tit_for_tat;
        int unchoke_slots = 8;
        int optimistic_rotate_ticks = 3;  // Toast chokers: ticks (seconds) per optimistic unchoke
    };
    explicit SwarmControl(Config config) : config_(config) {}

    // The session plugin that routes libtorrent's callbacks here.
    std::shared_ptr<libtorrent::plugin> make_plugin();
    // Where peer work is posted; set once the session exists, cleared before it is destroyed.
    void attach(libtorrent::io_context& network);
    void detach();

    // Title thread. Call before add_piece: when the piece passes, every request still outstanding to a peer
    // for it is cancelled with a raw CANCEL message.
    void expect_server_piece(const libtorrent::sha1_hash& torrent, PieceIndex piece);
    // Title thread: the server sent bytes [offset, offset + length) of `piece`: the requests still
    // outstanding to peers for blocks inside them are cancelled (raw CANCEL messages).
    void cancel_requests(const libtorrent::sha1_hash& torrent, PieceIndex piece, Bytes offset, Bytes length);
    // Title thread. Sends lt_donthave for `piece` of `torrent` to every peer that supports it.
    void announce_dont_have(const libtorrent::sha1_hash& torrent, PieceIndex piece);
    // Title thread, before the torrent is added: the listen addresses of the operator's peers for `torrent`.
    void set_operator_peers(const libtorrent::sha1_hash& torrent,
                            std::vector<libtorrent::tcp::endpoint> peers);
    // Title thread: the remote ends of the connections to `torrent`'s operator peers now.
    std::set<libtorrent::tcp::endpoint> operator_connections(const libtorrent::sha1_hash& torrent) const;
    // Title thread: whether `torrent`'s operator peers are asked for pieces (core/operator_tier.hpp). While
    // not, they are told NOT_INTERESTED whatever libtorrent thinks of them, so their chokers give their slots
    // to boxes that need them; libtorrent's own interest is left as it is and told them again when wanted.
    // Not wanted until first set.
    void set_operator_wanted(const libtorrent::sha1_hash& torrent, bool wanted);
    // Network thread: whether the connection with remote end `remote` is to one of `torrent`'s operator
    // peers, and if so whether they are wanted.
    std::optional<bool> operator_wanted(const libtorrent::sha1_hash& torrent,
                                        const libtorrent::tcp::endpoint& remote) const;
    // Any thread: whether the choker ranks peers by where we are in the title (set_position).
    bool ranks_by_position() const {
        return config_.choker == ChokerKind::nearest || config_.choker == ChokerKind::leader;
    }
    // Title thread: where we are in `torrent`, for the nearest-behind choker: the lowest piece we lack and,
    // when we play it, the media time of a piece (peers are taken to play at that pace too).
    struct Position {
        PieceIndex first_missing;
        std::optional<std::chrono::nanoseconds> piece_time;
        PieceCount pieces;  // the title's; first_missing == pieces: we hold it all (core/choker.hpp)
        // While we play at a known upload rate: the playhead's media time and chain_min_gap, for
        // spaced_behind_rank. Unset: nearest_behind_rank.
        std::optional<std::chrono::nanoseconds> playhead;
        std::optional<std::chrono::nanoseconds> min_gap;
    };
    void set_position(const libtorrent::sha1_hash& torrent, Position position);
    // Title thread: the blocks at the front of every peer's queue of our requests (set_queue_front), each
    // with its place there (0: the block the peer is sending now).
    std::vector<std::pair<BlockRef, int>> queue_fronts(const libtorrent::sha1_hash& torrent) const;
    // Title thread: the torrent is gone; forget what was known about it.
    void forget_torrent(const libtorrent::sha1_hash& torrent);

    std::uint64_t cancels_sent() const { return cancels_sent_.load(); }
    // Peers found leaving cancelled requests unanswered, and the requests sent to them again.
    std::uint64_t cancel_ignorers() const { return cancel_ignorers_.load(); }
    std::uint64_t requests_again() const { return requests_again_.load(); }
    std::uint64_t dont_haves_sent() const { return dont_haves_sent_.load(); }
    std::uint64_t choker_changes() const { return choker_changes_.load(); }
    // Interest messages libtorrent was not told of, as the choker had no slot for the peer.
    std::uint64_t interests_held() const { return interests_held_.load(); }
    // INTERESTED / NOT_INTERESTED sent to operator peers on the operator tier's behalf.
    std::uint64_t operator_interest_changes() const { return operator_interest_changes_.load(); }
    std::uint64_t peers_seen() const { return peers_seen_.load(); }
    // Title thread: payload peers sent of `torrent`'s pieces the server had already delivered
    // (StatsRecord::bytes_redundant_raced).
    std::uint64_t raced_bytes(const libtorrent::sha1_hash& torrent) const;
    // Title thread: payload the operator's peers sent us of `torrent` (StatsRecord::bytes_from_operator).
    std::uint64_t operator_bytes(const libtorrent::sha1_hash& torrent) const;

    // Network thread only.
    const Config& config() const { return config_; }
    Position position(const libtorrent::sha1_hash& torrent) const;
    bool take_server_piece(const libtorrent::sha1_hash& torrent, PieceIndex piece);
    // A connection's peer listens at `listen`; `remote` is the connection's remote end.
    void on_peer_listen(const libtorrent::sha1_hash& torrent, const libtorrent::tcp::endpoint& remote,
                        const libtorrent::tcp::endpoint& listen);
    void on_peer_gone(const libtorrent::sha1_hash& torrent, const libtorrent::tcp::endpoint& remote);
    void add_torrent_plugin(std::weak_ptr<ToastTorrentPlugin> plugin);
    // Runs `work` on the network thread after the current callback (dropped once detached).
    void post(std::function<void()> work);
    // Title thread: runs `work` on the network thread and returns once it has run (rethrowing what it threw);
    // runs it here when detached. libtorrent's synchronous torrent_handle calls made inside `work` run there
    // directly, so a batch of them costs one wake-up of each thread instead of one of each per call.
    void run_on_network(const std::function<void()>& work);
    void count_cancel() { ++cancels_sent_; }
    void count_cancel_ignorer() { ++cancel_ignorers_; }
    void count_request_again() { ++requests_again_; }
    void count_dont_have() { ++dont_haves_sent_; }
    void count_choker_change() { ++choker_changes_; }
    void count_interest_held() { ++interests_held_; }
    void count_operator_interest() { ++operator_interest_changes_; }
    void count_raced_bytes(const libtorrent::sha1_hash& torrent, int bytes);
    // A block of `bytes` arrived from the connection whose remote end is `remote`: counted if it is one of
    // the operator's peers.
    void count_received(const libtorrent::sha1_hash& torrent, const libtorrent::tcp::endpoint& remote,
                        int bytes);
    // The first requests peer `peer` of `torrent` still owes us, in the order they were sent (the order it
    // serves them in); empty once it is gone.
    void set_queue_front(const libtorrent::sha1_hash& torrent, std::uint64_t peer,
                         std::vector<BlockRef> front);
    std::uint64_t next_peer_id() { return ++peers_seen_; }

  private:
    struct Operators {
        std::vector<libtorrent::tcp::endpoint> listen;  // as named
        std::set<libtorrent::tcp::endpoint> connections;
        std::uint64_t received = 0;  // payload they sent us
        bool wanted = false;         // set_operator_wanted
    };
    Config config_;
    mutable std::mutex mutex_;
    std::set<std::pair<libtorrent::sha1_hash, PieceIndex>> server_pieces_;  // guarded by mutex_
    std::map<libtorrent::sha1_hash, Operators> operators_;                  // guarded by mutex_
    std::map<libtorrent::sha1_hash, std::uint64_t> raced_bytes_;            // guarded by mutex_
    std::map<libtorrent::sha1_hash, Position> positions_;                   // guarded by mutex_
    // Per torrent, per peer id: set_queue_front's blocks. Guarded by mutex_.
    std::map<libtorrent::sha1_hash, std::map<std::uint64_t, std::vector<BlockRef>>> queue_fronts_;
    libtorrent::io_context* network_ = nullptr;                // guarded by mutex_
    std::vector<std::weak_ptr<ToastTorrentPlugin>> torrents_;  // network thread only
    std::atomic<std::uint64_t> cancels_sent_{0};
    std::atomic<std::uint64_t> cancel_ignorers_{0};
    std::atomic<std::uint64_t> requests_again_{0};
    std::atomic<std::uint64_t> dont_haves_sent_{0};
    std::atomic<std::uint64_t> choker_changes_{0};
    std::atomic<std::uint64_t> interests_held_{0};
    std::atomic<std::uint64_t> operator_interest_changes_{0};
    std::atomic<std::uint64_t> peers_seen_{0};
};

// Wire encodings, exposed for tests.
std::vector<char> encode_request(int piece, int start, int length);
std::vector<char> encode_cancel(int piece, int start, int length);
std::vector<char> encode_lt_donthave(int extension_id, int piece);
std::vector<char> encode_interest(bool interested);  // INTERESTED (2) or NOT_INTERESTED (3)

}  // namespace toast::client
