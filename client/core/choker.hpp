// Chokers the Toast plugin runs instead of libtorrent's (which always ranks peers by the bytes they sent us).
// Pure: the plugin feeds one snapshot of its peers per tick and applies the answer with choke_this_peer /
// maybe_unchoke_this_peer.
//
// Each keeps the best-ranked interested peers unchoked and (all but the leader choker) rotates one optimistic
// slot through the rest, so a peer the ranking overlooks still gets a chance. They differ in the ranking:
// - seed-style (thesis §5.3, Fig. 5.7): by how fast we upload to the peer, not how fast it uploads to us.
// - leader: the peer furthest along in the title, for the operator's seed (leader_rank).
// - nearest-behind: by where the peer is in the title. A viewer is served by the viewers ahead of it, and
//   the one just behind us has the fewest of those; a viewer far behind has many. So each viewer's regular
//   slot goes to the peer nearest behind it, and the swarm's upload forms a chain from the oldest viewer to
//   the newest instead of piling onto whoever libtorrent ranks first. A newcomer is at once its
//   predecessor's nearest. A client holding the whole title spreads its upload instead (rotating_rank).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "client/core/piece_types.hpp"
#include "client/core/stream_watcher.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

struct ChokeCandidate {
    std::uint64_t id = 0;   // stable per connection, assigned by the plugin
    std::int64_t rank = 0;  // higher first: seed_rank or nearest_behind_rank
    bool interested = false;
};

struct ChokerState {
    std::uint64_t optimistic_id = 0;  // the peer holding the optimistic slot (0: none)
    int ticks_left = 0;               // ticks until the optimistic slot rotates
};

// Returns the ids to keep unchoked: the `regular` best-ranked interested peers and, if `optimistic`, one
// more. Ties in rank are broken by id so the result is deterministic. Every `rotate_every` ticks the
// optimistic slot moves to the next choked interested peer (by id, wrapping). A call with `tick` false (a
// re-rank between ticks, when a peer becomes interested) answers the same way but does not count towards the
// rotation.
std::set<std::uint64_t> choker_unchoke_set(const std::vector<ChokeCandidate>& peers, int regular,
                                           bool optimistic, int rotate_every, ChokerState& state,
                                           bool tick = true);

// Seed-style rank: payload bytes per second we send the peer.
inline std::int64_t seed_rank(std::int64_t upload_rate) {
    return upload_rate;
}

// Nearest-behind rank, from the first piece the peer lacks and the first piece we lack. Peers behind us
// (their first missing piece is one we have) come first, nearest first; then the others (interested in
// pieces we fetched ahead), nearest first.
std::int64_t nearest_behind_rank(PieceIndex peer_first_missing, PieceIndex our_first_missing);

// Where a peer behind us is now, for the nearest-behind rank. Such a peer never tells us of the pieces it
// gets: they are all pieces we have, and a HAVE for a piece the receiver has is not sent. Its bitfield stays
// the one it had when we met, so every peer behind would look as far back as when it connected, and the
// latest to connect (with a few pieces already) would outrank the one just behind us. A viewer plays a piece
// per piece-time, so from where it was when we first saw it, it has moved on that many pieces since; what it
// has told us is a floor. Without a piece-time (a peer of a title we do not play), the bitfield alone.
struct PeerSighting {
    PieceIndex first_missing;  // the peer's first missing piece when first seen
    std::chrono::steady_clock::time_point at;
};
// A peer's sighting is kept only once its pieces are known (its bitfield, HAVE_ALL, HAVE_NONE or a HAVE
// arrived). Right after the handshake its bitfield is empty: a sighting taken then would place a peer far
// ahead of us at the title's start, and estimated on from there it would look level with us for as long as
// it sends no HAVE (it sends none for the pieces we hold), taking the slot of the peer really behind us.
class PeerSightings {
  public:
    void pieces_known() { known_ = true; }
    // The kept sighting; until the pieces are known, `told` and `now` without keeping them.
    PeerSighting sighting(PieceIndex told, std::chrono::steady_clock::time_point now);

  private:
    bool known_ = false;
    std::optional<PeerSighting> first_;
};
PieceIndex estimated_first_missing(const PeerSighting& first, PieceIndex told,
                                   std::chrono::steady_clock::time_point now,
                                   std::optional<std::chrono::nanoseconds> piece_time, PieceCount pieces);

// Nearest-behind with spacing, for a viewer that plays and uploads at a known rate. A viewer can pass a
// piece on only once it holds it whole, so along a chain each link gets a piece one piece upload later than
// the link before it (a piece-time at upload = bitrate). Viewers closer together than that in the title each
// pass on a shorter buffer than they got: half a piece-time apart a link loses half a piece-time, and a chain
// headed by the server's fetch-ahead runs dry within a few dozen links, after which the server sends what
// is due. So a viewer's slot goes first to the nearest peer at least `min_gap` of media behind its own
// playhead: with viewers half a piece-time apart every third one is a link of the same chain, the chains
// interleave, and each link gains buffer instead of losing it. Peers behind us but nearer than that come
// next, the farthest first; peers level or ahead last, the nearest first (as nearest_behind_rank).
// Positions are media time: a peer's as estimated_position says, ours the playhead's, `our_first_missing`
// the media time where our first missing piece starts.
std::int64_t spaced_behind_rank(std::chrono::nanoseconds peer_at, std::chrono::nanoseconds our_playhead,
                                std::chrono::nanoseconds our_first_missing, std::chrono::nanoseconds min_gap);

// The media time a peer has reached, as estimated_first_missing estimates it but not rounded down to a
// piece: viewers a fraction of a piece-time apart stay apart. Needs the piece-time.
std::chrono::nanoseconds estimated_position(const PeerSighting& first, PieceIndex told,
                                            std::chrono::steady_clock::time_point now,
                                            std::chrono::nanoseconds piece_time, PieceCount pieces);

// How far behind our playhead a peer must be for spaced_behind_rank: the time our upload takes to send a
// piece, and an eighth of a piece-time for the HAVE, the request and the first block to cross (viewers 1.2 s
// apart at a 1.05 s piece-time, 1.14 piece-times, keep a chain of next neighbours without a stall). None
// without an upload limit or a piece-time (nothing bounds how fast a piece is passed on:
// nearest_behind_rank).
std::optional<std::chrono::nanoseconds> chain_min_gap(std::int64_t piece_bytes,
                                                      std::optional<std::int64_t> upload_bits_per_second,
                                                      std::optional<std::chrono::nanoseconds> piece_time);

// Where a viewer stands for spaced_behind_rank: while it plays (starting, playing or stalled) with an upload
// limit, its playhead's media time and chain_min_gap; otherwise neither, and its choker ranks by
// nearest_behind_rank (a seed, a download, an unlimited upload: nothing bounds how fast it passes a piece
// on).
struct ChainPosition {
    std::optional<std::chrono::nanoseconds> playhead;
    std::optional<std::chrono::nanoseconds> min_gap;
};
ChainPosition chain_position(const StreamWatcher& watcher, const TitleGeometry& geometry,
                             std::optional<BitRate> upload_limit);

// Slots of the nearest-behind choker: `slots` in all, one of them optimistic (as libtorrent's tit-for-tat,
// so the two compare at equal slots), except that a single slot is a regular one.
struct ChokerSlots {
    int regular = 1;
    bool optimistic = true;
};
ChokerSlots nearest_behind_slots(int slots);

// Leader rank, for the operator's seed beside the VoD server: the peer furthest along in the title first.
// In a streaming swarm each viewer is served by the viewers ahead of it; the one furthest along has none,
// and whatever it lacks the server sends unless a seed does. A seed byte sent to any other viewer mostly
// replaces a byte the viewer ahead of it would have sent. A swarm has one or a few operator seeds, so they
// do not pile onto one viewer as a swarm full of seeding viewers would (see rotating_rank).
inline std::int64_t leader_rank(PieceIndex peer_first_missing) {
    return peer_first_missing.value();
}
// Slots of the leader choker: all regular, none optimistic: a seed asks nothing back, and a viewer the
// ranking passes over has a viewer ahead of it to serve it.
ChokerSlots leader_slots(int slots);

// Once we hold the whole title every peer is behind us, and every seed of the swarm would rank the same
// viewer (the one furthest along) first: they would all serve it, more than it can take, and nobody else.
// A complete client instead spreads its upload: at least two regular slots, ranked by a pseudo-random
// order of the peers that changes every `epoch` (ticks / rotate_every), so the swarm's seeds each serve
// different viewers and each viewer gets its turn. Deterministic for a given id and epoch.
std::int64_t rotating_rank(std::uint64_t id, std::uint64_t epoch);
ChokerSlots complete_slots(int slots);

}  // namespace toast::client
