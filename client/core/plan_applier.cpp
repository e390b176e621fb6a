#include "client/core/plan_applier.hpp"

#include <cstdlib>
#include <set>

namespace toast::client {

PlanApplier::PlanApplier(PieceCount piece_count, PlanApplierConfig config)
    : config_(config),
      applied_(static_cast<std::size_t>(piece_count.value()), config.initial_priority),
      pending_flip_(static_cast<std::size_t>(piece_count.value()), 0) {}

void PlanApplier::on_piece_had(PieceIndex piece) {
    deadlines_.erase(piece);
}

void PlanApplier::assume_applied(const std::vector<std::uint8_t>& priorities) {
    for (std::size_t p = 0; p < applied_.size() && p < priorities.size(); ++p)
        applied_[p] = priorities[p];
}

void PlanApplier::apply(const PiecePlan& plan, const PieceSet& had, std::int64_t now_ms,
                        PieceControl& control) {
    const int n = static_cast<int>(applied_.size());

    // 1. Deadlines: add and move first, so the list never passes through empty.
    std::set<PieceIndex> wanted_deadlines;
    for (const auto& d : plan.deadlines) {
        int p = d.piece.value();
        if (p < 0 || p >= n || had.has(d.piece)) continue;
        wanted_deadlines.insert(d.piece);
        std::int64_t at = now_ms + d.deadline.count();
        auto it = deadlines_.find(d.piece);
        if (it != deadlines_.end() && std::llabs(it->second - at) <= config_.deadline_slack.count()) continue;
        control.set_deadline(d.piece, d.deadline);
        deadlines_[d.piece] = at;
        applied_[static_cast<std::size_t>(p)] = 7;  // set_piece_deadline raises the piece to 7
        ++stats_.deadlines_set;
    }
    for (auto it = deadlines_.begin(); it != deadlines_.end();) {
        if (wanted_deadlines.count(it->first) || had.has(it->first)) {
            ++it;
            continue;
        }
        control.reset_deadline(it->first);
        applied_[static_cast<std::size_t>(it->first.value())] = 1;  // libtorrent resets the priority to 1
        ++stats_.deadlines_reset;
        it = deadlines_.erase(it);
    }

    // 2. Priorities, as one delta.
    std::vector<std::pair<PieceIndex, std::uint8_t>> changes;
    auto next_deadline = wanted_deadlines.begin();  // walked beside p: both ascend
    for (int p = 0; p < n && p < static_cast<int>(plan.priority.size()); ++p) {
        auto& cur = applied_[static_cast<std::size_t>(p)];
        auto& pending = pending_flip_[static_cast<std::size_t>(p)];
        std::uint8_t want = plan.priority[static_cast<std::size_t>(p)];
        while (next_deadline != wanted_deadlines.end() && next_deadline->value() < p)
            ++next_deadline;
        if (next_deadline != wanted_deadlines.end() && next_deadline->value() == p)
            want = 7;  // keep what the deadline set
        if (had.has(PieceIndex(p)) || want == cur) {
            pending = 0;
            continue;
        }
        // Drops to 0 are immediate (a given-up piece, or one beyond the buffer's request_end, must stop being
        // requested now); only raises from 0 wait for the plans to agree.
        bool immediate = !(cur == 0 && want != 0);
        if (!immediate && ++pending < config_.settle_plans) {
            ++stats_.flips_deferred;
            continue;
        }
        pending = 0;
        cur = want;
        changes.emplace_back(PieceIndex(p), want);
    }
    if (!changes.empty()) {
        control.prioritize(changes);
        stats_.priority_changes += changes.size();
    }
}

}  // namespace toast::client
