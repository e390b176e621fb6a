#include "client/lt/toast_peer_plugin.hpp"

#include <algorithm>
#include <utility>

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
                                 std::shared_ptr<const ChokerAnswer> choker, ChokerHooks hooks)
    : pc_(std::move(pc)),
      control_(std::move(control)),
      delivered_(std::move(delivered)),
      choker_(std::move(choker)),
      hooks_(std::move(hooks)),
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
        tell_operator_interest();  // libtorrent may have told it already
    }
    return true;
}

void ToastPeerPlugin::on_disconnect(const lt::error_code&) {
    control_->on_peer_gone(torrent_, remote_);
    control_->set_queue_front(torrent_, id_, {});
}

// With a Toast choker libtorrent's slots are unlimited, so it unchokes a peer the moment it says it is
// interested. A peer the choker would not unchoke then sends requests that the choke right after rejects, and
// takes them elsewhere a moment later: a newcomer's first pieces, asked of every peer that had just unchoked
// it, came late from all of them. So libtorrent hears of the interest only when the choker would unchoke the
// peer (ranking it now, not at the next tick: a newcomer behind us is the peer the nearest-behind choker
// wants most, and each second it waits for our upload is a second of pieces the VoD server sends it).
// Otherwise the interest is held here for the choker's ranks; when the choker unchokes the peer, its first
// request tells libtorrent (which takes a request as interest).
bool ToastPeerPlugin::on_interested() {
    if (control_->config().choker == ChokerKind::tit_for_tat) return false;
    interest_held_ = false;
    if (wanted_unchoked()) return false;
    auto now = Clock::now();
    if (!last_rank_ || now - *last_rank_ >= rank_interval) {
        last_rank_ = now;
        if (hooks_.would_unchoke(id_)) {
            rank_on_unchoke_ = true;
            return false;
        }
    }
    interest_held_ = true;
    control_->count_interest_held();
    return true;
}

bool ToastPeerPlugin::on_not_interested() {
    interest_held_ = false;
    // Its slot goes to the next interested peer now rather than at the next tick: a box that has other
    // sources says so (tell_operator_interest), and the box that needs the operator's seed is waiting.
    if (control_->config().choker != ChokerKind::tit_for_tat && wanted_unchoked())
        control_->post([weak = weak_from_this()] {
            if (auto self = weak.lock()) self->hooks_.rechoke();
        });
    return false;
}

// libtorrent unchokes a peer on its own when it becomes interested (only when the choker would have it, see
// on_interested) and sometimes as a connection opens. The choker ranks every peer again right after (not from
// inside this callback, as libtorrent marks the peer unchoked only once it returns) when it wants the peer,
// so whoever it displaces is choked; otherwise the peer is choked again.
void ToastPeerPlugin::sent_unchoke() {
    if (control_->config().choker == ChokerKind::tit_for_tat || wanted_unchoked()) return;
    control_->post([weak = weak_from_this()] {
        auto self = weak.lock();
        if (!self || self->wanted_unchoked()) return;
        auto& pc = self->pc_;
        if (pc.is_disconnecting() || pc.is_choked()) return;
        if (std::exchange(self->rank_on_unchoke_, false)) {
            self->hooks_.rechoke();
            return;
        }
        pc.choke_this_peer();
        self->control_->count_choker_change();
    });
}

void ToastPeerPlugin::sent_interested() {
    told_interested_ = true;
    tell_operator_interest();
}

void ToastPeerPlugin::sent_not_interested() {
    told_interested_ = false;
}

// An operator peer we are not asking for pieces unchoked us: it took a request of ours for interest
// (libtorrent does, for a request from a peer that said NOT_INTERESTED), or its unchoke crossed our
// NOT_INTERESTED. libtorrent never hears of it, so it sends the peer no request, and the peer is told again
// that we are not interested, which frees its slot. Asked again, we say INTERESTED, and libtorrent's peer
// answers with an unchoke even when it believes we are unchoked already.
bool ToastPeerPlugin::on_unchoke() {
    const auto wanted = control_->operator_wanted(torrent_, remote_);
    if (!wanted || *wanted) return false;
    told_interested_ = true;  // as far as the peer knows
    tell_operator_interest();
    return true;
}

// An operator peer's allowed-fast pieces could be requested while it chokes us: not while we are not asking
// it for pieces.
bool ToastPeerPlugin::on_allowed_fast(lt::piece_index_t) {
    const auto wanted = control_->operator_wanted(torrent_, remote_);
    return wanted && !*wanted;
}

void ToastPeerPlugin::tell_operator_interest() {
    if (pc_.is_disconnecting() || pc_.in_handshake()) return;
    const auto wanted = control_->operator_wanted(torrent_, remote_);
    if (!wanted) return;
    const bool say = *wanted && pc_.is_interesting();
    if (say == told_interested_) return;
    const auto msg = encode_interest(say);
    pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
    told_interested_ = say;
    control_->count_operator_interest();
}

PieceIndex ToastPeerPlugin::first_missing(int pieces) {
    while (first_missing_ < pieces && pc_.has_piece(lt::piece_index_t(first_missing_)))
        ++first_missing_;
    return PieceIndex(first_missing_);
}

bool ToastPeerPlugin::on_dont_have(lt::piece_index_t piece) {
    first_missing_ = std::min(first_missing_, static_cast<int>(piece));
    return false;
}

bool ToastPeerPlugin::on_bitfield(const lt::bitfield&) {
    sightings_.pieces_known();
    return false;
}

bool ToastPeerPlugin::on_have_all() {
    sightings_.pieces_known();
    return false;
}

bool ToastPeerPlugin::on_have_none() {
    sightings_.pieces_known();
    return false;
}

bool ToastPeerPlugin::on_have(lt::piece_index_t) {
    sightings_.pieces_known();
    return false;
}

PeerSighting ToastPeerPlugin::sighting(PieceIndex told, Clock::time_point now) {
    return sightings_.sighting(told, now);
}

void ToastPeerPlugin::sent_request(const lt::peer_request& r) {
    outstanding_.emplace(block_of(r), requests_sent_++);
    publish_front();
}

void ToastPeerPlugin::sent_cancel(const lt::peer_request& r) {
    // libtorrent's own cancel (a deadline, end-game): it waits for the peer's answer.
    outstanding_.erase(block_of(r));
    publish_front();
    if (fast_ && ledger_.on_cancel_sent(block_of(r), Clock::now())) request_again(block_of(r));
}

bool ToastPeerPlugin::on_piece(const lt::peer_request& r, lt::span<char const>) {
    outstanding_.erase(block_of(r));
    publish_front();
    if (delivered_->count(static_cast<int>(r.piece)) != 0) control_->count_raced_bytes(torrent_, r.length);
    control_->count_received(torrent_, remote_, r.length);
    if (fast_) ledger_.on_block(block_of(r));
    return false;
}

bool ToastPeerPlugin::on_reject(const lt::peer_request& r) {
    outstanding_.erase(block_of(r));
    publish_front();
    if (fast_) ledger_.on_reject(block_of(r));
    return false;
}

void ToastPeerPlugin::publish_front() {
    // A few more than the controller counts as on their way (ClientTuning::committed_requests).
    constexpr std::size_t published = 4;
    std::vector<std::pair<std::uint64_t, BlockRef>> order;
    order.reserve(outstanding_.size());
    for (const auto& [block, sent] : outstanding_)
        order.emplace_back(sent, block);
    const auto n = std::min(published, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end());
    std::vector<BlockRef> front;
    front.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        front.push_back(order[i].second);
    if (front == front_) return;
    front_ = front;
    control_->set_queue_front(torrent_, id_, std::move(front));
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

void ToastPeerPlugin::cancel_piece(int piece, std::uint64_t begin, std::uint64_t end) {
    if (pc_.is_disconnecting()) return;
    // Without an answer to count on, a cancelled request would wait in libtorrent's queue for good: such a
    // peer is left to send the blocks (they count as redundant bytes).
    if (!fast_ || !ledger_.may_cancel()) return;
    auto now = Clock::now();
    auto it = outstanding_.lower_bound({piece, 0, 0});
    while (it != outstanding_.end() && it->first.piece == piece) {
        const auto& b = it->first;
        const auto start = static_cast<std::uint64_t>(b.start);
        if (start < begin || start >= end) {
            ++it;
            continue;
        }
        auto msg = encode_cancel(b.piece, b.start, b.length);
        pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
        control_->count_cancel();
        ledger_.on_cancel_sent(b, now);
        it = outstanding_.erase(it);
    }
    publish_front();
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
