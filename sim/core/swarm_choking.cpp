// The swarm model's choking: which peers each uploader lets download, by the client's chokers
// (client/core/choker.hpp), and where it believes each peer is in the title.
#include <chrono>
#include <optional>

#include "sim/core/swarm_model.hpp"

namespace toast::sim {

using client::PieceIndex;

MemberSetup member_setup_for(const client::ClientOptions& o) {
    MemberSetup ms;
    switch (o.choker) {
        case client::ChokerOption::tit_for_tat:
            ms.choker = ChokerKind::tit_for_tat;
            break;
        case client::ChokerOption::seed:
            ms.choker = ChokerKind::seed_style;
            break;
        case client::ChokerOption::leader:
            ms.choker = ChokerKind::leader;
            break;
        case client::ChokerOption::nearest:
            ms.choker = ChokerKind::nearest;
            break;
    }
    ms.slots = client::unchoke_slots_of(o);
    ms.max_connections = o.max_connections;
    ms.seed = o.seed;
    return ms;
}

namespace {

bool toast_choker(ChokerKind k) {
    return k == ChokerKind::nearest || k == ChokerKind::leader || k == ChokerKind::seed_style;
}

// Rounds per optimistic rotation: the Toast plugin rotates every 3 ticks (seconds); libtorrent every 30 s
// (optimistic_unchoke_interval) with 15 s rounds.
int rotate_every(ChokerKind k) {
    return toast_choker(k) ? 3 : 2;
}

}  // namespace

client::ChokerSlots SwarmModel::slots_of(const Member& up) const {
    const int slots = std::max(1, up.setup.slots);
    switch (up.setup.choker) {
        case ChokerKind::nearest:
            return up.have.all() ? client::complete_slots(slots) : client::nearest_behind_slots(slots);
        case ChokerKind::leader:
            return client::leader_slots(slots);
        case ChokerKind::seed_style:
            return {slots, true};
        case ChokerKind::tit_for_tat:
            return {std::max(1, slots - 1), slots > 1};
        case ChokerKind::stock_seed:
            return {slots, false};
    }
    return {slots, true};
}

namespace {

std::chrono::steady_clock::time_point time_at(double s) {
    return std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s)));
}

}  // namespace

int SwarmModel::told_first_missing(const Member& up, const Connection& cn) const {
    const int truth = peer(cn, up.box).have.first_missing();
    const auto& seen = up.box == cn.a ? cn.a_sees_b : cn.b_sees_a;
    // A peer ahead of us tells us of its pieces (we lack them); one behind us told us only its bitfield.
    return truth >= up.have.first_missing() ? truth : std::min(truth, seen.first_missing);
}

int SwarmModel::estimated_position(const Member& up, int conn, double now) const {
    const auto& cn = conns_[static_cast<std::size_t>(conn)];
    if (!cn.open) return 0;
    const auto& seen = up.box == cn.a ? cn.a_sees_b : cn.b_sees_a;
    std::optional<std::chrono::nanoseconds> piece_time;
    if (piece_seconds_ > 0) piece_time = piece_time_ns();
    return client::estimated_first_missing({PieceIndex(seen.first_missing), time_at(seen.at)},
                                           PieceIndex(told_first_missing(up, cn)), time_at(now), piece_time,
                                           client::PieceCount(pieces_))
        .value();
}

std::chrono::nanoseconds SwarmModel::estimated_media_position(const Member& up, int conn, double now) const {
    const auto& cn = conns_[static_cast<std::size_t>(conn)];
    if (!cn.open) return std::chrono::nanoseconds(0);
    const auto& seen = up.box == cn.a ? cn.a_sees_b : cn.b_sees_a;
    return client::estimated_position({PieceIndex(seen.first_missing), time_at(seen.at)},
                                      PieceIndex(told_first_missing(up, cn)), time_at(now), piece_time_ns(),
                                      client::PieceCount(pieces_));
}

std::chrono::nanoseconds SwarmModel::piece_time_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(piece_seconds_));
}

const std::vector<client::ChokeCandidate>& SwarmModel::candidates(const Member& up, std::uint64_t assume,
                                                                  double now) const {
    auto& out = candidates_;
    out.clear();
    const auto epoch = up.rounds / static_cast<std::uint64_t>(rotate_every(up.setup.choker));
    int ours = -1;  // the uploader's first missing piece, found when a rank needs it
    auto our_place = [&] {
        if (ours < 0) ours = up.have.first_missing();
        return ours;
    };
    for (int c : up.conns) {
        const auto& cn = conns_[static_cast<std::size_t>(c)];
        if (!cn.open) continue;
        const BoxId other = cn.other(up.box);
        const auto& pipe = cn.towards(other);
        const auto id = static_cast<std::uint64_t>(c) + 1;
        // The choker unchokes only interested peers: the others need no rank.
        if (!pipe.interested && id != assume) continue;
        std::int64_t rank = 0;
        switch (up.setup.choker) {
            case ChokerKind::nearest:
                if (up.have.all()) {
                    rank = client::rotating_rank(id, epoch);
                } else if (up.playhead && up.chain_gap && piece_seconds_ > 0) {
                    rank = client::spaced_behind_rank(estimated_media_position(up, c, now), *up.playhead,
                                                      our_place() * piece_time_ns(), *up.chain_gap);
                } else {
                    rank = client::nearest_behind_rank(PieceIndex(estimated_position(up, c, now)),
                                                       PieceIndex(our_place()));
                }
                break;
            case ChokerKind::leader:
                rank = client::leader_rank(PieceIndex(estimated_position(up, c, now)));
                break;
            case ChokerKind::seed_style:
                rank = client::seed_rank(static_cast<std::int64_t>(pipe.rate));
                break;
            case ChokerKind::tit_for_tat:
                rank = static_cast<std::int64_t>(cn.towards(up.box).rate);  // what the peer sends us
                break;
            case ChokerKind::stock_seed:
                rank = client::rotating_rank(id, epoch);
                break;
        }
        out.push_back({id, rank, true});
    }
    return out;
}

void SwarmModel::choke_round(Member& up, bool tick, double now) {
    const auto split = slots_of(up);
    auto set = client::choker_unchoke_set(candidates(up, 0, now), split.regular, split.optimistic,
                                          rotate_every(up.setup.choker), up.choker, tick);
    for (int c : up.conns) {
        auto& cn = conns_[static_cast<std::size_t>(c)];
        if (!cn.open) continue;
        const BoxId down = cn.other(up.box);
        auto& pipe = cn.towards(down);
        const bool unchoke = set.count(static_cast<std::uint64_t>(c) + 1) > 0;
        if (unchoke && !pipe.unchoked && pipe.interested) woken_.push_back(down);
        pipe.unchoked = unchoke;
    }
    if (tick) ++up.rounds;
}

void SwarmModel::ensure_round(Member& up, double now) {
    if (now < up.next_round) return;
    choke_round(up, true, now);
    up.next_round = now + round_period(up.setup.choker);
}

void SwarmModel::on_interested(Member& up, int conn, double now) {
    auto& cn = conns_[static_cast<std::size_t>(conn)];
    auto& pipe = cn.towards(cn.other(up.box));
    if (pipe.unchoked) return;
    const auto split = slots_of(up);
    if (toast_choker(up.setup.choker)) {
        // The plugin asks its choker whether it would unchoke this peer now (would_unchoke), without moving
        // the optimistic rotation on.
        auto state = up.choker;
        const auto id = static_cast<std::uint64_t>(conn) + 1;
        auto set = client::choker_unchoke_set(candidates(up, id, now), split.regular, split.optimistic,
                                              rotate_every(up.setup.choker), state, false);
        pipe.unchoked = set.count(id) > 0;
        return;
    }
    // libtorrent unchokes an interested peer at once while it has a free slot.
    int unchoked = 0;
    for (int c : up.conns) {
        const auto& o = conns_[static_cast<std::size_t>(c)];
        if (o.open && o.towards(o.other(up.box)).unchoked) ++unchoked;
    }
    if (unchoked < split.regular + (split.optimistic ? 1 : 0)) pipe.unchoked = true;
}

}  // namespace toast::sim
