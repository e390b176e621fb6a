// Applies the core's PiecePlan to libtorrent (through PieceControl) as a diff against what was applied last,
// because libtorrent reacts badly to churn (notes, "Deadlines" and "The picker cannot be replaced"):
//  - a piece flipping between priority 0 and non-0 recomputes interest in every peer and can flap
//    INTERESTED, so a raise from 0 waits until the plan has asked for it `settle_plans` times in a row; a
//    drop to 0 is immediate (a given-up piece is the server's now, a piece beyond the bounded buffer's
//    request_end would not fit), so a piece can flap at most once per settle period;
//  - the first deadline added to an empty deadline list cancels every outstanding request, so new deadlines
//    are set before old ones are reset, and a deadline is moved only when it changed by more than
//    `deadline_slack` (deadlines count down every tick; re-setting them each tick would be pure churn);
//  - completing or resetting a deadline puts the piece back to priority 1 in libtorrent, so the record
//    says 1 after a reset and the priority diff restores the plan's value.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "client/core/client_tuning.hpp"
#include "client/core/piece_policy.hpp"

namespace toast::client {

// The three torrent_handle calls the applier makes: client/lt makes them on libtorrent, the simulator on its
// model of libtorrent; faked in tests.
class PieceControl {
  public:
    virtual ~PieceControl() = default;
    virtual void prioritize(const std::vector<std::pair<PieceIndex, std::uint8_t>>& changes) = 0;
    virtual void set_deadline(PieceIndex piece, std::chrono::milliseconds deadline) = 0;
    virtual void reset_deadline(PieceIndex piece) = 0;
};

struct ApplyStats {
    std::uint64_t priority_changes = 0;  // pieces whose priority was sent to libtorrent
    std::uint64_t deadlines_set = 0;
    std::uint64_t deadlines_reset = 0;
    std::uint64_t flips_deferred = 0;  // raises from 0 held back (so far) by settle_plans
};

class PlanApplier {
  public:
    PlanApplier(PieceCount piece_count, PlanApplierConfig config = {});

    // `now_ms` is a monotonic time in milliseconds (deadlines are stored as absolute times). Pieces in `had`
    // are left alone: libtorrent ignores their priority and their deadlines have completed.
    void apply(const PiecePlan& plan, const PieceSet& had, std::int64_t now_ms, PieceControl& control);

    // The torrent was added with these priorities already (add_torrent_params::piece_priorities).
    void assume_applied(const std::vector<std::uint8_t>& priorities);

    // libtorrent completed the deadline of `piece` (it had the piece): forget it.
    void on_piece_had(PieceIndex piece);

    std::uint8_t applied_priority(PieceIndex piece) const {
        return applied_.at(static_cast<std::size_t>(piece.value()));
    }
    const std::map<PieceIndex, std::int64_t>& applied_deadlines() const { return deadlines_; }
    const ApplyStats& stats() const { return stats_; }

  private:
    PlanApplierConfig config_;
    std::vector<std::uint8_t> applied_;
    std::vector<int> pending_flip_;                 // consecutive plans asking for a 0 <-> non-0 flip
    std::size_t pending_count_ = 0;                 // pieces with a flip pending (most plans have none)
    std::map<PieceIndex, std::int64_t> deadlines_;  // piece -> absolute deadline (ms)
    ApplyStats stats_;
    // apply(): scratch kept from one call to the next.
    std::vector<PieceIndex> wanted_deadlines_;
    std::vector<std::pair<PieceIndex, std::uint8_t>> changes_;
};

}  // namespace toast::client
