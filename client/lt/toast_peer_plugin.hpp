// One per BitTorrent connection of a torrent (ToastTorrentPlugin makes them): tracks the block requests we
// have outstanding to the peer, learns its lt_donthave id and where it listens, keeps cancels from leaving
// requests hanging at a peer that does not answer them (CancelLedger), counts the bytes it sends of pieces
// the server already delivered, and re-chokes it when libtorrent unchokes it against the Toast choker's
// answer. Runs on libtorrent's network thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <libtorrent/extensions.hpp>
#include <libtorrent/peer_connection_handle.hpp>
#include <libtorrent/peer_request.hpp>
#include <libtorrent/sha1_hash.hpp>

#include "client/core/cancel_ledger.hpp"
#include "client/core/choker.hpp"

namespace toast::client {

class SwarmControl;

// The pieces of one torrent the server delivered (network thread only): a peer's block of one arrived too
// late to be of use. SwarmControl's own set holds the pieces expected from the server until they pass.
using DeliveredPieces = std::unordered_set<int>;

// The peers a Toast choker keeps unchoked, by peer id (network thread only). Unused while libtorrent's
// tit-for-tat decides.
using ChokerAnswer = std::set<std::uint64_t>;

// What a peer's plugin asks of its torrent's Toast choker (network thread).
struct ChokerHooks {
    std::function<void()> rechoke;                     // rank every peer again and apply the answer
    std::function<bool(std::uint64_t)> would_unchoke;  // would this peer, were it interested, be unchoked?
};

class ToastPeerPlugin final : public libtorrent::peer_plugin,
                              public std::enable_shared_from_this<ToastPeerPlugin> {
  public:
    using Clock = std::chrono::steady_clock;

    ToastPeerPlugin(libtorrent::peer_connection_handle pc, std::shared_ptr<SwarmControl> control,
                    libtorrent::sha1_hash torrent, std::shared_ptr<const DeliveredPieces> delivered,
                    std::shared_ptr<const ChokerAnswer> choker, ChokerHooks hooks);

    libtorrent::string_view type() const override { return "toast"; }
    bool on_handshake(libtorrent::span<char const> reserved) override;
    bool on_extension_handshake(const libtorrent::bdecode_node& handshake) override;
    void on_disconnect(const libtorrent::error_code&) override;
    bool on_interested() override;
    bool on_not_interested() override;
    bool on_unchoke() override;
    bool on_allowed_fast(libtorrent::piece_index_t) override;
    void sent_unchoke() override;
    void sent_interested() override;
    void sent_not_interested() override;
    void sent_request(const libtorrent::peer_request& r) override;
    void sent_cancel(const libtorrent::peer_request& r) override;
    bool on_piece(const libtorrent::peer_request& r, libtorrent::span<char const>) override;
    bool on_reject(const libtorrent::peer_request& r) override;
    bool on_dont_have(libtorrent::piece_index_t piece) override;
    bool on_bitfield(const libtorrent::bitfield&) override;
    bool on_have_all() override;
    bool on_have_none() override;
    bool on_have(libtorrent::piece_index_t) override;
    void tick() override;

    // The Toast choker keeps this peer unchoked.
    bool wanted_unchoked() const { return choker_->count(id_) != 0; }
    // The peer said it is interested, whether libtorrent was told (it was not while the choker had no slot
    // for the peer).
    bool interested() const { return interest_held_ || pc_.is_peer_interested(); }
    // The first piece the peer lacks, of a title of `pieces`: what its bitfield in get_peer_info says,
    // without copying every peer's bitfield (and a getsockname) each time the choker ranks them.
    PieceIndex first_missing(int pieces);
    // Where the peer was when the choker first saw it with its pieces known (PeerSightings).
    PeerSighting sighting(PieceIndex told, Clock::time_point now);
    // The server delivered bytes [begin, end) of `piece` (the whole piece by default): cancel what we still
    // ask of this peer for blocks that start inside them.
    void cancel_piece(int piece, std::uint64_t begin = 0, std::uint64_t end = UINT64_MAX);
    // We dropped `piece` (a bounded buffer ejected it): tell the peer with lt_donthave.
    void send_dont_have(int piece);
    // An operator's peer hears we are interested only while we are (libtorrent's interest) and the operator
    // tier wants it (SwarmControl::set_operator_wanted): a raw INTERESTED or NOT_INTERESTED when what it last
    // heard differs. Other peers are left to libtorrent.
    void tell_operator_interest();

    std::uint64_t id() const { return id_; }
    libtorrent::peer_connection_handle& handle() { return pc_; }

  private:
    void request_again(BlockRef b);
    // Tells control_ the first requests the peer still owes us, when they changed.
    void publish_front();
    std::string endpoint_text() const;

    libtorrent::peer_connection_handle pc_;
    std::shared_ptr<SwarmControl> control_;
    std::shared_ptr<const DeliveredPieces> delivered_;
    std::shared_ptr<const ChokerAnswer> choker_;
    ChokerHooks hooks_;
    // A peer's interest makes the choker rank every peer at most this often: one toggling its interest
    // cannot make us rank them for every message.
    static constexpr std::chrono::seconds rank_interval{1};
    std::optional<Clock::time_point> last_rank_;  // network thread only
    bool interest_held_ = false;                  // interested, libtorrent not told
    bool rank_on_unchoke_ = false;                // the choker wants this peer that libtorrent unchokes
    bool told_interested_ = false;                // the last INTERESTED / NOT_INTERESTED the peer heard
    PeerSightings sightings_;                     // network thread only
    int first_missing_ = 0;                       // a floor: every piece before it the peer has
    libtorrent::sha1_hash torrent_;
    std::uint64_t id_;
    libtorrent::tcp::endpoint remote_;
    int dont_have_id_ = 0;
    bool fast_ = false;
    bool convicted_ = false;
    std::string client_;
    // Requests sent by libtorrent, not answered nor cancelled yet, each with its place in the order they were
    // sent (the peer serves them in that order).
    std::map<BlockRef, std::uint64_t> outstanding_;
    std::uint64_t requests_sent_ = 0;
    std::vector<BlockRef> front_;  // the first of outstanding_ in that order, as last told to control_
    CancelLedger ledger_;
};

}  // namespace toast::client
