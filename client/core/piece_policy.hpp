// Piece policies (thesis §5.1.2, Fig. 5.2): which pieces the client wants from peers, in which order. A
// policy is pure and seeded: it reads a SwarmSnapshot and returns a PiecePlan, which the libtorrent adapter
// applies (priorities, deadlines) and against which fidelity is measured. libtorrent's picker cannot be
// replaced, only steered, so the plan states intent and also carries the priorities that steer it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "client/core/piece_types.hpp"

namespace toast::client {

// adaptive orders as hybrid does; the stream controller tunes its in-order window from what its peers
// deliver (AdaptiveTuner).
enum class PickerKind { rarest, inorder, beta, hybrid, adaptive };
std::optional<PickerKind> parse_picker_kind(std::string_view text);
std::string_view to_string(PickerKind k);

// What a policy knows about the world at one moment. Vectors are indexed by piece and have piece_count
// entries; PieceSets have piece_count bits.
struct SwarmSnapshot {
    PieceCount piece_count;
    PieceSet had;
    // Requested from peers, not yet complete. Such pieces stay wanted at their rank (libtorrent finishes
    // partial pieces itself); the adapter fills it for logging and future policies.
    PieceSet in_flight;
    PieceSet server_fetching;       // being fetched from the VoD server: never wanted from peers
    std::vector<int> availability;  // peers that have each piece
    PieceIndex playhead;            // the piece playing now
    PieceCount horizon;  // give-up horizon: pieces [playhead, playhead + horizon) are left to the server
    PieceCount inorder_window;  // hybrid, adaptive: pieces [playhead, playhead + window) are picked in order
    // Pieces [playhead, playhead + urgent) come first for every policy, in playback order and with deadlines:
    // the pieces the server would have taken at its last moment, when there is no server to take them.
    PieceCount urgent;
    // Pieces the server refused (a 500 or 503: FetchFault::piece; it is retrying them): they join the urgent
    // ones, in playback order and with deadlines, wherever they are, the give-up horizon included. Empty:
    // none.
    PieceSet refused;
    std::optional<PieceIndex> request_end;  // bounded buffer: nothing at or beyond this piece is wanted
    // Peers are asked only for pieces within this many of the first one still to ask for (the first missing
    // piece past the horizon); absent: the whole title. libtorrent's picker puts a
    // rare low-priority piece before a common high-priority one, and in a streaming swarm the pieces further
    // ahead are held by fewer viewers: wanted to the end of the title, peers' upload goes to pieces needed
    // minutes from now while the next seconds' pieces fall to the server.
    std::optional<PieceCount> lookahead;
    bool want_past_pieces = false;  // also want missing pieces behind the playhead (lowest priority)
    std::chrono::milliseconds piece_duration{0};       // media time of one full piece
    std::chrono::milliseconds into_playhead_piece{0};  // media time already played inside the playhead piece

    // Time until playback needs the first byte of p (zero at or behind the playhead piece).
    std::chrono::milliseconds time_until_needed(PieceIndex p) const;
    // An empty snapshot of `n` pieces, playhead 0, nothing had, every piece held by one peer.
    static SwarmSnapshot empty(PieceCount n);
};

struct PieceDeadline {
    PieceIndex piece;
    std::chrono::milliseconds deadline{0};  // from now, for torrent_handle::set_piece_deadline
    bool operator==(const PieceDeadline&) const = default;
};

// Invariants: `wanted` holds distinct pieces, none had, none being fetched from the server, none given up,
// none at or beyond request_end; most wanted first, pieces no peer has after those some peer has.
// `priority` has piece_count entries in 0..7 and is non-zero exactly for wanted pieces, non-increasing along
// `wanted` for the ordered policies. `deadlines` is a prefix-ordered subset of `wanted`. `give_up` is
// ascending: the missing pieces inside the horizon, left to the server fallback.
struct PiecePlan {
    std::vector<PieceIndex> wanted;
    std::vector<std::uint8_t> priority;
    std::vector<PieceDeadline> deadlines;
    std::vector<PieceIndex> give_up;
    bool operator==(const PiecePlan&) const = default;
};

struct PolicyConfig {
    std::uint64_t seed = 1;
    // Ordered policies (inorder, beta, hybrid, adaptive) map rank to priority in doubling tiers: ranks [0,
    // top_tier) get 7, the next top_tier get 6, then 2x as many get 5, 4x get 4, 8x get 3, 16x get 2, the
    // rest 1. libtorrent's priorities are not strict tiers, so only the front of the order can be made to
    // stand out.
    std::int32_t top_tier = 4;
    // inorder, hybrid and adaptive give the first `deadline_pieces` available in-order pieces a libtorrent
    // deadline.
    std::int32_t deadline_pieces = 4;
    // rarest leaves ordering to libtorrent's own rarest-first: every wanted piece gets this priority.
    std::uint8_t rarest_priority = 4;
};

class PiecePolicy {
  public:
    virtual ~PiecePolicy() = default;
    virtual PickerKind kind() const = 0;
    // Not const: beta and hybrid draw per-piece random keys on first use (same seed, same keys, same plans).
    virtual PiecePlan plan(const SwarmSnapshot& snapshot) = 0;
};

std::unique_ptr<PiecePolicy> make_policy(PickerKind kind, const PolicyConfig& config);

// Beta(alpha=1, beta=2) by inverse CDF from the raw engine: x = 1 - sqrt(1 - u), u uniform in [0, 1).
// CDF F(x) = 1 - (1 - x)^2, density 2(1 - x): earlier positions are likelier, linearly.
double sample_beta_1_2(std::mt19937_64& engine);
// Uniform in [0, 1) with 53 random bits, drawn from the raw engine (portable across standard libraries).
double uniform_01(std::mt19937_64& engine);
// The Beta(1,2) probability mass of the cell [i/n, (i+1)/n) of the remaining range: F((i+1)/n) - F(i/n).
double beta_1_2_cell_mass(std::int64_t i, std::int64_t n);
// The (piece, priority) pairs that turn `applied` into `planned`, ascending by piece: what the adapter passes
// to prioritize_pieces' vector<pair<piece_index_t, download_priority_t>> overload. A piece beyond the end of
// `applied` counts as priority 0 there; `planned` decides the size.
std::vector<std::pair<PieceIndex, std::uint8_t>> priority_changes(const std::vector<std::uint8_t>& applied,
                                                                  const std::vector<std::uint8_t>& planned);
// Takes `pieces` out of `plan`: out of wanted and deadlines, priority 0.
void drop_from_plan(PiecePlan& plan, const PieceSet& pieces);
// The give-up zone, `zone` pieces from the playhead: the server's when it can take them (the horizon),
// otherwise the pieces peers are asked for first (urgent).
void set_zone(SwarmSnapshot& s, PieceCount zone, bool server_takes);
// The priority tier of rank `rank` (0 = most wanted) under PolicyConfig::top_tier.
std::uint8_t priority_for_rank(std::size_t rank, std::int32_t top_tier);

}  // namespace toast::client
