#include "client/lt/toast_plugin.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <libtorrent/peer_connection_handle.hpp>
#include <libtorrent/peer_info.hpp>
#include <libtorrent/torrent_handle.hpp>

#include "client/core/choker.hpp"
#include "client/lt/swarm_control.hpp"
#include "client/lt/toast_peer_plugin.hpp"

namespace lt = libtorrent;
using Clock = toast::client::ToastPeerPlugin::Clock;  // the clock of the peers' sightings

namespace toast::client {

namespace {

PieceIndex first_missing_piece(const lt::typed_bitfield<lt::piece_index_t>& pieces) {
    int n = pieces.size();
    int i = 0;
    while (i < n && pieces.get_bit(lt::piece_index_t(i)))
        ++i;
    return PieceIndex(i);
}

}  // namespace

// One per torrent: knows its live peers, cancels on server pieces, runs the Toast choker each second.
class ToastTorrentPlugin final : public lt::torrent_plugin,
                                 public std::enable_shared_from_this<ToastTorrentPlugin> {
  public:
    ToastTorrentPlugin(std::shared_ptr<SwarmControl> control, lt::sha1_hash key)
        : control_(std::move(control)), key_(key) {}

    const lt::sha1_hash& key() const { return key_; }

    std::shared_ptr<lt::peer_plugin> new_connection(const lt::peer_connection_handle& pc) override {
        if (pc.type() != lt::connection_type::bittorrent) return {};
        ChokerHooks hooks{[weak = weak_from_this()] {
                              if (auto self = weak.lock()) self->rank_and_apply(false);
                          },
                          [weak = weak_from_this()](std::uint64_t id) {
                              auto self = weak.lock();
                              return self && self->would_unchoke(id);
                          }};
        auto plugin = std::make_shared<ToastPeerPlugin>(pc, control_, key_, delivered_, choker_answer_,
                                                        std::move(hooks));
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
        rank_and_apply(true);
        ++ticks_;
    }

    void cancel_requests(int piece, std::uint64_t offset, std::uint64_t length) {
        for_each_peer([&](ToastPeerPlugin& p) { p.cancel_piece(piece, offset, offset + length); });
    }

    void tell_operator_interest() {
        for_each_peer([](ToastPeerPlugin& p) { p.tell_operator_interest(); });
    }

    void send_dont_have(int piece) {
        // Ejected: if peers send it again, it is wanted again.
        delivered_->erase(piece);
        for_each_peer([piece](ToastPeerPlugin& p) { p.send_dont_have(piece); });
    }

  private:
    // The peers the choker unchokes now. `assume_interested` counts that peer as interested (it is telling
    // us so, and libtorrent has not been told). Only a tick moves the optimistic rotation on (and tick()
    // the seeding viewer's order).
    ChokerAnswer rank(bool tick, ChokerState& state, std::uint64_t assume_interested = 0) {
        auto kind = control_->config().choker;
        int slots = control_->config().unchoke_slots;
        auto ours = control_->position(key_);
        bool complete = kind == ChokerKind::nearest && ours.pieces.value() > 0 &&
                        ours.first_missing.value() >= ours.pieces.value();
        auto split = kind == ChokerKind::seed     ? ChokerSlots{slots, true}
                     : kind == ChokerKind::leader ? leader_slots(slots)
                     : complete                   ? complete_slots(slots)
                                                  : nearest_behind_slots(slots);
        auto epoch =
            ticks_ / static_cast<std::uint64_t>(std::max(control_->config().optimistic_rotate_ticks, 1));
        auto now = Clock::now();
        std::vector<ChokeCandidate> candidates;
        for_each_peer([&](ToastPeerPlugin& p) {
            auto& pc = p.handle();
            if (pc.is_disconnecting() || pc.is_connecting() || pc.in_handshake()) return;
            std::int64_t rank = 0;
            if (kind == ChokerKind::seed) {
                lt::peer_info info;
                pc.get_peer_info(info);
                rank = seed_rank(info.payload_up_speed);
            } else if (complete) {
                rank = rotating_rank(p.id(), epoch);
            } else {
                PieceIndex told;
                PieceCount pieces = ours.pieces;
                if (pieces.value() > 0) {
                    told = p.first_missing(pieces.value());
                } else {
                    // Before our first tick says where we are: the peer's bitfield as libtorrent has it.
                    lt::peer_info info;
                    pc.get_peer_info(info);
                    told = first_missing_piece(info.pieces);
                    pieces = PieceCount(info.pieces.size());
                }
                const auto& seen = p.sighting(told, now);
                if (kind == ChokerKind::nearest && ours.playhead && ours.min_gap && ours.piece_time) {
                    auto at = estimated_position(seen, told, now, *ours.piece_time, pieces);
                    rank = spaced_behind_rank(at, *ours.playhead,
                                              ours.first_missing.value() * *ours.piece_time, *ours.min_gap);
                } else {
                    auto at = estimated_first_missing(seen, told, now, ours.piece_time, pieces);
                    rank = kind == ChokerKind::leader ? leader_rank(at)
                                                      : nearest_behind_rank(at, ours.first_missing);
                }
            }
            candidates.push_back({p.id(), rank, p.interested() || p.id() == assume_interested});
        });
        return choker_unchoke_set(candidates, split.regular, split.optimistic,
                                  control_->config().optimistic_rotate_ticks, state, tick);
    }

    // Only asked under a Toast choker (on_interested lets libtorrent decide under tit-for-tat).
    bool would_unchoke(std::uint64_t id) {
        auto state = choker_state_;
        return rank(false, state, id).count(id) > 0;
    }

    void rank_and_apply(bool tick) {
        if (control_->config().choker == ChokerKind::tit_for_tat) return;
        auto unchoke = rank(tick, choker_state_);
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

void tell_operator_interest(ToastTorrentPlugin& plugin, const lt::sha1_hash& torrent) {
    if (plugin.key() == torrent) plugin.tell_operator_interest();
}

void cancel_requests(ToastTorrentPlugin& plugin, const lt::sha1_hash& torrent, PieceIndex piece, Bytes offset,
                     Bytes length) {
    if (plugin.key() == torrent) plugin.cancel_requests(piece.value(), offset.value(), length.value());
}

}  // namespace toast::client
