#include "client/lt/toast_plugin.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>

#include <spdlog/spdlog.h>
#include <libtorrent/bdecode.hpp>
#include <libtorrent/peer_connection_handle.hpp>
#include <libtorrent/peer_info.hpp>
#include <libtorrent/peer_request.hpp>
#include <libtorrent/torrent_handle.hpp>

#include "client/core/cancel_ledger.hpp"
#include "client/core/choker.hpp"
#include "client/lt/swarm_control.hpp"

namespace lt = libtorrent;
using Clock = std::chrono::steady_clock;

namespace toast::client {

namespace {

using RequestKey = std::tuple<int, int, int>;  // piece, start, length

RequestKey key_of(const lt::peer_request& r) {
    return {static_cast<int>(r.piece), r.start, r.length};
}

BlockRef block_of(const lt::peer_request& r) {
    return {static_cast<std::int32_t>(r.piece), r.start, r.length};
}

// The pieces of one torrent the server delivered (network thread only): a peer's block of one arrived too
// late to be of use. SwarmControl's own set holds the pieces expected from the server until they pass.
using DeliveredPieces = std::unordered_set<int>;

PieceIndex first_missing_piece(const lt::typed_bitfield<lt::piece_index_t>& pieces) {
    int n = pieces.size();
    int i = 0;
    while (i < n && pieces.get_bit(lt::piece_index_t(i)))
        ++i;
    return PieceIndex(i);
}

// The peers a Toast choker keeps unchoked, by peer id (network thread only). Unused while libtorrent's
// tit-for-tat decides.
using ChokerAnswer = std::set<std::uint64_t>;

// Tracks the block requests we have outstanding to one peer, learns the peer's lt_donthave id, and keeps
// cancels from leaving requests hanging at a peer that does not answer them (CancelLedger).
class ToastPeerPlugin final : public lt::peer_plugin, public std::enable_shared_from_this<ToastPeerPlugin> {
  public:
    ToastPeerPlugin(lt::peer_connection_handle pc, std::shared_ptr<SwarmControl> control,
                    lt::sha1_hash torrent, std::shared_ptr<const DeliveredPieces> delivered,
                    std::shared_ptr<const ChokerAnswer> choker)
        : pc_(std::move(pc)),
          control_(std::move(control)),
          delivered_(std::move(delivered)),
          choker_(std::move(choker)),
          torrent_(torrent),
          id_(control_->next_peer_id()),
          remote_(pc_.remote()) {
        // We opened it: the remote end is where the peer listens.
        if (pc_.is_outgoing()) control_->on_peer_listen(torrent_, remote_, remote_);
    }

    lt::string_view type() const override { return "toast"; }

    bool on_handshake(lt::span<char const> reserved) override {
        // BEP 6: the fast extension is bit 0x04 of the last reserved byte. Only such a peer answers a
        // CANCEL (with the block or a REJECT); without it a cancelled request may just never be answered.
        fast_ = reserved.size() == 8 && (reserved[7] & 0x04) != 0;
        return true;
    }
    bool on_extension_handshake(const lt::bdecode_node& handshake) override {
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
    void on_disconnect(const lt::error_code&) override { control_->on_peer_gone(torrent_, remote_); }
    // With a Toast choker libtorrent still unchokes a peer the moment it becomes interested (its slots are
    // unlimited). Left until the choker's next tick, such a peer would take a second of upload the choker
    // meant for another. It is choked again right after: not from inside this callback, as libtorrent marks
    // the peer unchoked only once it returns.
    void sent_unchoke() override {
        if (control_->config().choker == ChokerKind::tit_for_tat || wanted_unchoked()) return;
        control_->post([weak = weak_from_this()] {
            auto self = weak.lock();
            if (!self || self->wanted_unchoked()) return;
            auto& pc = self->pc_;
            if (pc.is_disconnecting() || pc.is_choked()) return;
            pc.choke_this_peer();
            self->control_->count_choker_change();
        });
    }
    bool wanted_unchoked() const { return choker_->count(id_) != 0; }
    // Where the peer was when the choker first saw it (`told` and `now` then).
    const PeerSighting& sighting(PieceIndex told, Clock::time_point now) {
        if (!sighting_) sighting_ = PeerSighting{told, now};
        return *sighting_;
    }
    void sent_request(const lt::peer_request& r) override { outstanding_.insert(key_of(r)); }
    void sent_cancel(const lt::peer_request& r) override {
        // libtorrent's own cancel (a deadline, end-game): it waits for the peer's answer.
        outstanding_.erase(key_of(r));
        if (fast_ && ledger_.on_cancel_sent(block_of(r), Clock::now())) request_again(block_of(r));
    }
    bool on_piece(const lt::peer_request& r, lt::span<char const>) override {
        outstanding_.erase(key_of(r));
        if (delivered_->count(static_cast<int>(r.piece)) != 0)
            control_->count_raced_bytes(torrent_, r.length);
        if (fast_) ledger_.on_block(block_of(r));
        return false;
    }
    bool on_reject(const lt::peer_request& r) override {
        outstanding_.erase(key_of(r));
        if (fast_) ledger_.on_reject(block_of(r));
        return false;
    }
    void tick() override {
        if (!fast_ || pc_.is_disconnecting()) return;
        auto overdue = ledger_.on_tick(Clock::now());
        if (overdue.empty()) return;
        if (!convicted_) {
            convicted_ = true;
            control_->count_cancel_ignorer();
            spdlog::warn(
                "peer {} ('{}') leaves cancelled requests unanswered (BEP 6 says it must reject them): no "
                "more "
                "cancels to it, and what it left hanging is requested again",
                endpoint_text(), client_);
        }
        for (auto b : overdue)
            request_again(b);
    }

    void cancel_piece(int piece) {
        if (pc_.is_disconnecting()) return;
        // Without an answer to count on, a cancelled request would wait in libtorrent's queue for good:
        // such a peer is left to send the blocks (they count as redundant bytes).
        if (!fast_ || !ledger_.may_cancel()) return;
        auto now = Clock::now();
        auto it = outstanding_.lower_bound({piece, 0, 0});
        while (it != outstanding_.end() && std::get<0>(*it) == piece) {
            auto [p, start, length] = *it;
            auto msg = encode_cancel(p, start, length);
            pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
            control_->count_cancel();
            ledger_.on_cancel_sent({p, start, length}, now);
            it = outstanding_.erase(it);
        }
    }

    void send_dont_have(int piece) {
        if (dont_have_id_ <= 0 || pc_.in_handshake() || pc_.is_disconnecting()) return;
        auto msg = encode_lt_donthave(dont_have_id_, piece);
        pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
        control_->count_dont_have();
    }

    std::uint64_t id() const { return id_; }
    lt::peer_connection_handle& handle() { return pc_; }

  private:
    // The peer sends the block, which settles the request libtorrent still waits for (or, choked, rejects
    // it, which settles it too).
    void request_again(BlockRef b) {
        auto msg = encode_request(b.piece, b.start, b.length);
        pc_.send_buffer(msg.data(), static_cast<int>(msg.size()));
        control_->count_request_again();
    }
    std::string endpoint_text() const {
        auto ep = pc_.remote();
        return ep.address().to_string() + ":" + std::to_string(ep.port());
    }

    lt::peer_connection_handle pc_;
    std::shared_ptr<SwarmControl> control_;
    std::shared_ptr<const DeliveredPieces> delivered_;
    std::shared_ptr<const ChokerAnswer> choker_;
    std::optional<PeerSighting> sighting_;  // network thread only
    lt::sha1_hash torrent_;
    std::uint64_t id_;
    lt::tcp::endpoint remote_;
    int dont_have_id_ = 0;
    bool fast_ = false;
    bool convicted_ = false;
    std::string client_;
    std::set<RequestKey> outstanding_;  // sent by libtorrent, not answered nor cancelled yet
    CancelLedger ledger_;
};

}  // namespace

// One per torrent: knows its live peers, cancels on server pieces, runs the Toast choker each second.
class ToastTorrentPlugin final : public lt::torrent_plugin {
  public:
    ToastTorrentPlugin(std::shared_ptr<SwarmControl> control, lt::sha1_hash key)
        : control_(std::move(control)), key_(key) {}

    const lt::sha1_hash& key() const { return key_; }

    std::shared_ptr<lt::peer_plugin> new_connection(const lt::peer_connection_handle& pc) override {
        if (pc.type() != lt::connection_type::bittorrent) return {};
        auto plugin = std::make_shared<ToastPeerPlugin>(pc, control_, key_, delivered_, choker_answer_);
        prune();
        peers_.push_back(plugin);
        return plugin;
    }

    void on_piece_pass(lt::piece_index_t piece) override {
        int index = static_cast<int>(piece);
        if (!control_->take_server_piece(key_, PieceIndex(index))) return;
        delivered_->insert(index);
        for_each_peer([index](ToastPeerPlugin& p) { p.cancel_piece(index); });
    }

    void tick() override {
        auto kind = control_->config().choker;
        if (kind == ChokerKind::tit_for_tat) return;
        int slots = control_->config().unchoke_slots;
        auto ours = control_->position(key_);
        bool complete = kind == ChokerKind::nearest && ours.pieces.value() > 0 &&
                        ours.first_missing.value() >= ours.pieces.value();
        auto split = kind == ChokerKind::seed ? ChokerSlots{slots, true}
                     : complete               ? complete_slots(slots)
                                              : nearest_behind_slots(slots);
        auto epoch =
            ticks_++ / static_cast<std::uint64_t>(std::max(control_->config().optimistic_rotate_ticks, 1));
        auto now = Clock::now();
        std::vector<ChokeCandidate> candidates;
        for_each_peer([&](ToastPeerPlugin& p) {
            auto& pc = p.handle();
            if (pc.is_disconnecting() || pc.is_connecting() || pc.in_handshake()) return;
            lt::peer_info info;
            pc.get_peer_info(info);
            std::int64_t rank = 0;
            if (kind == ChokerKind::seed) {
                rank = seed_rank(info.payload_up_speed);
            } else if (complete) {
                rank = rotating_rank(p.id(), epoch);
            } else {
                PieceIndex told = first_missing_piece(info.pieces);
                auto at = estimated_first_missing(p.sighting(told, now), told, now, ours.piece_time,
                                                  PieceCount(info.pieces.size()));
                rank = nearest_behind_rank(at, ours.first_missing);
            }
            candidates.push_back({p.id(), rank, pc.is_peer_interested()});
        });
        auto unchoke = choker_unchoke_set(candidates, split.regular, split.optimistic,
                                          control_->config().optimistic_rotate_ticks, choker_state_);
        *choker_answer_ = unchoke;
        for_each_peer([&](ToastPeerPlugin& p) {
            auto& pc = p.handle();
            if (pc.is_disconnecting() || pc.is_connecting() || pc.in_handshake()) return;
            bool want = unchoke.count(p.id()) > 0;
            if (want && pc.is_choked()) {
                pc.maybe_unchoke_this_peer();
                control_->count_choker_change();
            } else if (!want && !pc.is_choked()) {
                pc.choke_this_peer();
                control_->count_choker_change();
            }
        });
    }

    void send_dont_have(int piece) {
        // Ejected: if peers send it again, it is wanted again.
        delivered_->erase(piece);
        for_each_peer([piece](ToastPeerPlugin& p) { p.send_dont_have(piece); });
    }

  private:
    template <class F>
    void for_each_peer(F&& f) {
        for (auto& weak : peers_) {
            if (auto p = weak.lock()) f(*p);
        }
    }
    void prune() {
        peers_.erase(std::remove_if(peers_.begin(), peers_.end(), [](auto& w) { return w.expired(); }),
                     peers_.end());
    }

    std::shared_ptr<SwarmControl> control_;
    lt::sha1_hash key_;
    std::shared_ptr<DeliveredPieces> delivered_ = std::make_shared<DeliveredPieces>();
    // Empty (every peer choked) until the first tick ranks them.
    std::shared_ptr<ChokerAnswer> choker_answer_ = std::make_shared<ChokerAnswer>();
    std::vector<std::weak_ptr<ToastPeerPlugin>> peers_;
    ChokerState choker_state_;
    std::uint64_t ticks_ = 0;
};

namespace {

class ToastSessionPlugin final : public lt::plugin {
  public:
    explicit ToastSessionPlugin(std::shared_ptr<SwarmControl> control) : control_(std::move(control)) {}
    std::shared_ptr<lt::torrent_plugin> new_torrent(const lt::torrent_handle& handle,
                                                    lt::client_data_t) override {
        // info_hashes() reads the torrent directly (no call into the network thread we are on).
        auto torrent_plugin = std::make_shared<ToastTorrentPlugin>(control_, handle.info_hashes().get_best());
        control_->add_torrent_plugin(torrent_plugin);
        return torrent_plugin;
    }

  private:
    std::shared_ptr<SwarmControl> control_;
};

}  // namespace

std::shared_ptr<lt::plugin> make_toast_plugin(std::shared_ptr<SwarmControl> control) {
    return std::make_shared<ToastSessionPlugin>(std::move(control));
}

void send_dont_have(ToastTorrentPlugin& plugin, const lt::sha1_hash& torrent, PieceIndex piece) {
    if (plugin.key() == torrent) plugin.send_dont_have(piece.value());
}

}  // namespace toast::client
