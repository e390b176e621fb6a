#include "client/core/choker.hpp"

#include <algorithm>

namespace toast::client {

std::set<std::uint64_t> choker_unchoke_set(const std::vector<ChokeCandidate>& peers, int regular,
                                           bool optimistic, int rotate_every, ChokerState& state, bool tick) {
    std::vector<ChokeCandidate> interested;
    for (const auto& p : peers) {
        if (p.interested) interested.push_back(p);
    }
    std::sort(interested.begin(), interested.end(), [](const ChokeCandidate& a, const ChokeCandidate& b) {
        if (a.rank != b.rank) return a.rank > b.rank;
        return a.id < b.id;
    });
    std::set<std::uint64_t> unchoke;
    std::size_t slots = static_cast<std::size_t>(std::max(regular, 0));
    for (std::size_t i = 0; i < interested.size() && i < slots; ++i)
        unchoke.insert(interested[i].id);

    // The rest, by id, are the candidates for the optimistic slot.
    std::vector<std::uint64_t> rest;
    for (std::size_t i = slots; optimistic && i < interested.size(); ++i)
        rest.push_back(interested[i].id);
    std::sort(rest.begin(), rest.end());
    if (rest.empty()) {
        state = {};
        return unchoke;
    }
    bool holder_valid = std::find(rest.begin(), rest.end(), state.optimistic_id) != rest.end();
    if (!holder_valid || state.ticks_left <= 0) {
        // Next id after the current holder, wrapping around.
        auto next = std::upper_bound(rest.begin(), rest.end(), state.optimistic_id);
        state.optimistic_id = next == rest.end() ? rest.front() : *next;
        state.ticks_left = std::max(rotate_every, 1);
    }
    if (tick) --state.ticks_left;
    unchoke.insert(state.optimistic_id);
    return unchoke;
}

std::int64_t nearest_behind_rank(PieceIndex peer_first_missing, PieceIndex our_first_missing) {
    std::int64_t peer = peer_first_missing.value();
    std::int64_t ours = our_first_missing.value();
    // Behind: 0 .. ours-1, the nearest highest. Level with us or ahead: -1, -2, ... the nearest highest.
    if (peer < ours) return peer;
    return ours - peer - 1;
}

PeerSighting PeerSightings::sighting(PieceIndex told, std::chrono::steady_clock::time_point now) {
    if (first_) return *first_;
    const PeerSighting seen{told, now};
    if (known_) first_ = seen;
    return seen;
}

PieceIndex estimated_first_missing(const PeerSighting& first, PieceIndex told,
                                   std::chrono::steady_clock::time_point now,
                                   std::optional<std::chrono::nanoseconds> piece_time, PieceCount pieces) {
    std::int64_t at = told.value();
    if (piece_time && piece_time->count() > 0 && now > first.at) {
        std::int64_t moved = (now - first.at) / *piece_time;
        at = std::max(at, static_cast<std::int64_t>(first.first_missing.value()) + moved);
    }
    return PieceIndex(static_cast<std::int32_t>(std::min<std::int64_t>(at, pieces.value())));
}

namespace {
// Tiers of spaced_behind_rank, above any media time (about 2.3 years in nanoseconds).
constexpr std::int64_t kSpacedTier = std::int64_t{1} << 56;
}  // namespace

std::int64_t spaced_behind_rank(std::chrono::nanoseconds peer_at, std::chrono::nanoseconds our_playhead,
                                std::chrono::nanoseconds our_first_missing,
                                std::chrono::nanoseconds min_gap) {
    if (peer_at >= our_first_missing) return (our_first_missing - peer_at).count() - 1;  // level or ahead
    if (our_playhead - peer_at >= min_gap) return 2 * kSpacedTier + peer_at.count();     // nearest first
    return kSpacedTier + (our_first_missing - peer_at).count();                          // farthest first
}

std::chrono::nanoseconds estimated_position(const PeerSighting& first, PieceIndex told,
                                            std::chrono::steady_clock::time_point now,
                                            std::chrono::nanoseconds piece_time, PieceCount pieces) {
    auto at = told.value() * piece_time;
    if (now > first.at) {
        auto moved = std::chrono::duration_cast<std::chrono::nanoseconds>(now - first.at);
        at = std::max(at, first.first_missing.value() * piece_time + moved);
    }
    return std::min(at, pieces.value() * piece_time);
}

std::optional<std::chrono::nanoseconds> chain_min_gap(std::int64_t piece_bytes,
                                                      std::optional<std::int64_t> upload_bits_per_second,
                                                      std::optional<std::chrono::nanoseconds> piece_time) {
    if (!upload_bits_per_second || *upload_bits_per_second <= 0 || !piece_time || piece_time->count() <= 0 ||
        piece_bytes <= 0)
        return std::nullopt;
    auto upload_ns = static_cast<std::int64_t>(static_cast<double>(piece_bytes) * 8.0 * 1e9 /
                                               static_cast<double>(*upload_bits_per_second));
    return std::chrono::nanoseconds(upload_ns) + *piece_time / 8;
}

ChainPosition chain_position(const StreamWatcher& watcher, const TitleGeometry& geometry,
                             std::optional<BitRate> upload_limit) {
    const auto state = watcher.state();
    if (state != PlaybackState::starting && state != PlaybackState::playing &&
        state != PlaybackState::stalled)
        return {};
    std::optional<std::int64_t> upload;
    if (upload_limit) upload = static_cast<std::int64_t>(upload_limit->value());
    ChainPosition p;
    p.min_gap = chain_min_gap(static_cast<std::int64_t>(geometry.piece_length().value()), upload,
                              geometry.piece_duration());
    if (p.min_gap) p.playhead = geometry.media_time_at(watcher.playhead());
    return p;
}

ChokerSlots nearest_behind_slots(int slots) {
    if (slots <= 1) return {1, false};
    return {slots - 1, true};
}

std::int64_t rotating_rank(std::uint64_t id, std::uint64_t epoch) {
    // splitmix64's finaliser: a different order of the ids for every epoch.
    std::uint64_t z = id + 0x9e3779b97f4a7c15ULL * (epoch + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<std::int64_t>(z >> 1);
}

ChokerSlots leader_slots(int slots) {
    return {std::max(slots, 1), false};
}

ChokerSlots complete_slots(int slots) {
    return {std::max(slots, 2), false};
}

}  // namespace toast::client
