#include "client/lt/toast_peer_plugin.hpp"

#include <spdlog/spdlog.h>
#include <libtorrent/bdecode.hpp>

#include "client/lt/swarm_control.hpp"

namespace lt = libtorrent;

namespace toast::client {

namespace {

BlockRef block_of(const lt::peer_request& r) {
    return {static_cast<std::int32_t>(r.piece), r.start, r.length};
}

}  // namespace

ToastPeerPlugin::ToastPeerPlugin(lt::peer_connection_handle pc, std::shared_ptr<SwarmControl> control,
                                 lt::sha1_hash torrent, std::shared_ptr<const DeliveredPieces> delivered,
                                 std::shared_ptr<const ChokerAnswer> choker, std::function<void()> rechoke)
    : pc_(std::move(pc)),
      control_(std::move(control)),
      delivered_(std::move(delivered)),
      choker_(std::move(choker)),
      rechoke_(std::move(rechoke)),
      torrent_(torrent),
      id_(control_->next_peer_id()),
      remote_(pc_.remote()) {
    // We opened it: the remote end is where the peer listens.
    if (pc_.is_outgoing()) control_->on_peer_listen(torrent_, remote_, remote_);
}

bool ToastPeerPlugin::on_handshake(lt::span<char const> reserved) {
    // BEP 6: the fast extension is bit 0x04 of the last reserved byte. Only such a peer answers a CANCEL
    // (with the block or a REJECT); without it a cancelled request may just never be answered.
    fast_ = reserved.size() == 8 && (reserved[7] & 0x04) != 0;
    return true;
}

bool ToastPeerPlugin::on_extension_handshake(const lt::bdecode_node& handshake) {
    if (auto m = handshake.dict_find_dict("m")) {
        dont_have_id_ = static_cast<int>(m.dict_find_int_value("lt_donthave", 0));
    }
    client_ = std::string(handshake.dict_find_string_value("v"));
    // It opened it: the handshake says where it listens (libtorrent sends "p" on connections it opens).
    auto port = handshake.dict_find_int_value("p", 0);
    if (!pc_.is_outgoing() && port > 0 && port < 65536) {
        control_->on_peer_listen(torrent_, remote_,
                                 lt::tcp::endpoint(remote_.address(), static_cast<std::uint16_t>(port)));
    }
    return true;
}

void ToastPeerPlugin::on_disconnect(const lt::error_code&) {
    control_->on_peer_gone(torrent_, remote_);
}

// With a Toast choker libtorrent still unchokes a peer the moment it becomes interested (its slots are
// unlimited). Right after (not from inside this callback, as libtorrent marks the peer unchoked only once it
// returns) the choker ranks the peers again, so a peer it wants keeps the slot at once instead of waiting up
// to a second for the next tick, and one it does not want is choked before it takes upload meant for
// another. A peer triggers that at most once per rechoke_interval: one toggling its interest cannot make us
// rank every peer for every message; it is just choked.
void ToastPeerPlugin::sent_unchoke() {
    if (control_->config().choker == ChokerKind::tit_for_tat || wanted_unchoked()) return;
    control_->post([weak = weak_from_this()] {
        auto self = weak.lock();
        if (!self || self->wanted_unchoked()) return;
        auto& pc = self->pc_;
        if (pc.is_disconnecting() || pc.is_choked()) return;
        auto now = Clock::now();
        if (pc.is_peer_interested() &&
            (!self->last_rechoke_ || now - *self->last_rechoke_ >= rechoke_interval)) {
            self->last_rechoke_ = now;
            self->rechoke_();
            return;
        }
        pc.choke_this_peer();
        self->control_->count_choker_change();
    });
}

const PeerSighting& ToastPeerPlugin::sighting(PieceIndex told, Clock::time_point now) {
    if (!sighting_) sighting_ = PeerSighting{told, now};
    return *sighting_;
}

void ToastPeerPlugin::sent_request(const lt::peer_request& r) {
    outstanding_.insert(block_of(r));
}

void ToastPeerPlugin::sent_cancel(const lt::peer_request& r) {
    // libtorrent's own cancel (a deadline, end-game): it waits for the peer's answer.
    outstanding_.erase(block_of(r));
    if (fast_ && ledger_.on_cancel_sent(block_of(r), Clock::now())) request_again(block_of(r));
}

bool ToastPeerPlugin::on_piece(const lt::peer_request& r, lt::span<char const>) {
    outstanding_.erase(block_of(r));
    if (delivered_->count(static_cast<int>(r.piece)) != 0) control_->count_raced_bytes(torrent_, r.length);
    if (fast_) ledger_.on_block(block_of(r));
    return false;
}

bool ToastPeerPlugin::on_reject(const lt::peer_request& r) {
    outstanding_.erase(block_of(r));
    if (fast_) ledger_.on_reject(block_of(r));
    return false;
}

void ToastPeerPlugin::tick() {
    if (!fast_ || pc_.is_disconnecting()) return;
    auto overdue = ledger_.on_tick(Clock::now());
    if (overdue.empty()) return;
    if (!convicted_) {
        convicted_ = true;
        control_->count_cancel_ignorer();
        spdlog::warn(
            "peer {} ('{}') leaves cancelled requests unanswered (BEP 6 says it must reject them): no more "
            "cancels to it, and what it left hanging is requested again",
            endpoint_text(), client_);
    }
    for (auto b : overdue)
        request_again(b);
}

void ToastPeerPlugin::cancel_piece(int piece) {
    if (pc_.is_disconnecting()) return;
    // Without an answer to count on, a cancelled request would wait in libtorrent's queue for good: such a
    // peer is left to send the blocks (they count as redundant bytes).
    if (!fast_ || !ledger_.may_cancel()) return;
    auto now = Clock::now();
    auto it = outstanding_.lower_bound({piece, 0, 0});
    while (it != outstanding_.end() && it->piece == piece) {
        auto msg = encode_cancel(it->piece, it->start, it->length);
        pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
        control_->count_cancel();
        ledger_.on_cancel_sent(*it, now);
        it = outstanding_.erase(it);
    }
}

void ToastPeerPlugin::send_dont_have(int piece) {
    if (dont_have_id_ <= 0 || pc_.in_handshake() || pc_.is_disconnecting()) return;
    auto msg = encode_lt_donthave(dont_have_id_, piece);
    pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
    control_->count_dont_have();
}

// The peer sends the block, which settles the request libtorrent still waits for (or, choked, rejects it,
// which settles it too).
void ToastPeerPlugin::request_again(BlockRef b) {
    auto msg = encode_request(b.piece, b.start, b.length);
    pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
    control_->count_request_again();
}

std::string ToastPeerPlugin::endpoint_text() const {
    return remote_.address().to_string() + ":" + std::to_string(remote_.port());
}

}  // namespace toast::client
