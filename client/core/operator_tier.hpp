// Whether a box asks the operator's peers (its seed beside the VoD server) for pieces now.
//
// The operator's peers are a fallback tier, like the server: their bytes are on the operator's bill, and
// libtorrent asks every peer that unchokes it for blocks in proportion to its rate, whoever else holds them.
// A box interested in the operator's seed takes from it whenever its choker gives it the slot, and the
// operator's leader choker gives its slot to the box furthest along that says it is interested: with
// viewers that stay and seed, that is a box the idle viewers could serve as well, and the seed's bytes
// replaced their idle upload. So a box tells the operator's peers it is interested only while the other
// boxes cannot deliver in time, which is when the server fallback (FallbackPlanner) would go to the server:
//   - a missing piece within the fallback's reach (its need window plus its fetch-ahead window) that no
//     viewer holds: the swarm cannot deliver it at all (the first viewer, or one ahead of all the others);
//   - a piece the server took at its last moment although viewers holding it were asked for it: they were
//     late. Not in the box's first `late_from`: its first pieces are the server's while its peers are found
//     and ramp up (libtorrent's slow start, the uploaders' chokers), and asking the operator's seed then
//     took it from an idle viewer that was about to serve the box at full rate;
//   - no viewer connected at all.
// Once wanted, the operator's peers stay wanted for `hold` after the last reason: each turn costs a round
// trip and a re-rank of the operator's choker, and the requests it had queued are rejected when it chokes
// the box again. Until the peers' bitfields are in (`viewer_availability` absent) only lateness counts:
// "no viewer holds it" means nothing yet, and the server fetches what is needed meanwhile.
//
// Invariants: wanted() is true exactly while now < the end of the last hold; reason() is none while not
// wanted; turned_on() counts the changes from not wanted to wanted.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "client/core/piece_types.hpp"
#include "client/core/stream_watcher.hpp"

namespace toast::client {

struct OperatorTierConfig {
    std::chrono::nanoseconds hold = std::chrono::seconds(5);
    // Lateness counts from this long after the box started: the discovery grace (2 s) and a few seconds for
    // its peers to reach their rate.
    std::chrono::nanoseconds late_from = std::chrono::seconds(7);
};

// What the tier reads at one tick.
struct OperatorTierInput {
    const PieceSet& had;
    PieceIndex playhead;
    std::chrono::nanoseconds piece_duration{0};       // media time of one full piece
    std::chrono::nanoseconds into_playhead_piece{0};  // already played of the playhead piece
    // How far past the playhead the fallback looks: FallbackPlanner::need_window + its fetch-ahead window.
    std::chrono::nanoseconds reach{0};
    // Viewers holding each piece (viewer_availability: the operator's peers not counted); absent while the
    // peers' bitfields may not have arrived yet.
    const std::vector<int>* viewer_availability = nullptr;
    std::optional<PieceIndex> request_end = {};  // bounded buffer: nothing at or beyond it is asked for
    int viewers = 0;                             // connected peers that are not the operator's
    // The server just took, at its last moment, a piece viewers holding it were asked for.
    bool late = false;
    std::chrono::nanoseconds running{0};  // since the box started
};

enum class OperatorNeed {
    none,
    unheld_piece,  // a piece within the fallback's reach that no viewer holds
    late_viewers,  // viewers asked for a piece they hold were late
    no_viewers,    // nobody but the operator's peers
};
std::string_view to_string(OperatorNeed n);

class OperatorTier {
  public:
    explicit OperatorTier(OperatorTierConfig config = {}) : config_(config) {}

    // Decides for `now`; returns wanted().
    bool update(const OperatorTierInput& in, SteadyTime now);

    bool wanted() const { return reason_ != OperatorNeed::none; }
    // Why the operator's peers are wanted (the latest reason seen while wanted).
    OperatorNeed reason() const { return reason_; }
    std::uint64_t turned_on() const { return turned_on_; }

  private:
    // The reason at this tick, before the hold.
    OperatorNeed need(const OperatorTierInput& in) const;

    OperatorTierConfig config_;
    OperatorNeed reason_ = OperatorNeed::none;
    std::optional<SteadyTime> until_;
    std::uint64_t turned_on_ = 0;
};

}  // namespace toast::client
