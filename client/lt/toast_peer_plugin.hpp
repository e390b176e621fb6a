// One per BitTorrent connection of a torrent (ToastTorrentPlugin makes them): tracks the block requests we
// have outstanding to the peer, learns its lt_donthave id and where it listens, keeps cancels from leaving
// requests hanging at a peer that does not answer them (CancelLedger), counts the bytes it sends of pieces
// the server already delivered, and re-chokes it when libtorrent unchokes it against the Toast choker's
// answer. Runs on libtorrent's network thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>

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

class ToastPeerPlugin final : public libtorrent::peer_plugin,
                              public std::enable_shared_from_this<ToastPeerPlugin> {
  public:
    using Clock = std::chrono::steady_clock;

    ToastPeerPlugin(libtorrent::peer_connection_handle pc, std::shared_ptr<SwarmControl> control,
                    libtorrent::sha1_hash torrent, std::shared_ptr<const DeliveredPieces> delivered,
                    std::shared_ptr<const ChokerAnswer> choker, std::function<void()> rechoke);

    libtorrent::string_view type() const override { return "toast"; }
    bool on_handshake(libtorrent::span<char const> reserved) override;
    bool on_extension_handshake(const libtorrent::bdecode_node& handshake) override;
    void on_disconnect(const libtorrent::error_code&) override;
    void sent_unchoke() override;
    void sent_request(const libtorrent::peer_request& r) override;
    void sent_cancel(const libtorrent::peer_request& r) override;
    bool on_piece(const libtorrent::peer_request& r, libtorrent::span<char const>) override;
    bool on_reject(const libtorrent::peer_request& r) override;
    void tick() override;

    // The Toast choker keeps this peer unchoked.
    bool wanted_unchoked() const { return choker_->count(id_) != 0; }
    // Where the peer was when the choker first saw it (`told` and `now` then).
    const PeerSighting& sighting(PieceIndex told, Clock::time_point now);
    // The server delivered `piece`: cancel what we still ask of this peer for it.
    void cancel_piece(int piece);
    // We dropped `piece` (a bounded buffer ejected it): tell the peer with lt_donthave.
    void send_dont_have(int piece);

    std::uint64_t id() const { return id_; }
    libtorrent::peer_connection_handle& handle() { return pc_; }

  private:
    void request_again(BlockRef b);
    std::string endpoint_text() const;

    libtorrent::peer_connection_handle pc_;
    std::shared_ptr<SwarmControl> control_;
    std::shared_ptr<const DeliveredPieces> delivered_;
    std::shared_ptr<const ChokerAnswer> choker_;
    std::function<void()> rechoke_;  // ranks every peer of the torrent again (network thread)
    static constexpr std::chrono::seconds rechoke_interval{1};
    std::optional<Clock::time_point> last_rechoke_;  // network thread only
    std::optional<PeerSighting> sighting_;           // network thread only
    libtorrent::sha1_hash torrent_;
    std::uint64_t id_;
    libtorrent::tcp::endpoint remote_;
    int dont_have_id_ = 0;
    bool fast_ = false;
    bool convicted_ = false;
    std::string client_;
    std::set<BlockRef> outstanding_;  // sent by libtorrent, not answered nor cancelled yet
    CancelLedger ledger_;
};

}  // namespace toast::client
