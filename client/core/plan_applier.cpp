#include "client/core/plan_applier.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

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

namespace {

// The first place in [from, to) where the two byte arrays differ; `to` when none. Eight bytes at a time:
// a plan mostly repeats what was applied, and the diff runs every tick over every piece.
std::size_t first_difference(const std::uint8_t* a, const std::uint8_t* b, std::size_t from, std::size_t to) {
    std::size_t i = from;
    for (; i + 8 <= to; i += 8) {
        std::uint64_t x, y;
        std::memcpy(&x, a + i, 8);
        std::memcpy(&y, b + i, 8);
        if (x != y) break;
    }
    for (; i < to; ++i)
        if (a[i] != b[i]) return i;
    return to;
}

}  // namespace

void PlanApplier::apply(const PiecePlan& plan, const PieceSet& had, std::int64_t now_ms,
                        PieceControl& control) {
    const int n = static_cast<int>(applied_.size());

    // 1. Deadlines: add and move first, so the list never passes through empty.
    auto& wanted_deadlines = wanted_deadlines_;  // ascending, once each
    wanted_deadlines.clear();
    for (const auto& d : plan.deadlines) {
        int p = d.piece.value();
        if (p < 0 || p >= n || had.has(d.piece)) continue;
        wanted_deadlines.push_back(d.piece);
        std::int64_t at = now_ms + d.deadline.count();
        auto it = deadlines_.find(d.piece);
        if (it != deadlines_.end() && std::llabs(it->second - at) <= config_.deadline_slack.count()) continue;
        control.set_deadline(d.piece, d.deadline);
        deadlines_[d.piece] = at;
        applied_[static_cast<std::size_t>(p)] = 7;  // set_piece_deadline raises the piece to 7
        ++stats_.deadlines_set;
    }
    std::sort(wanted_deadlines.begin(), wanted_deadlines.end());
    wanted_deadlines.erase(std::unique(wanted_deadlines.begin(), wanted_deadlines.end()),
                           wanted_deadlines.end());
    for (auto it = deadlines_.begin(); it != deadlines_.end();) {
        if (std::binary_search(wanted_deadlines.begin(), wanted_deadlines.end(), it->first) ||
            had.has(it->first)) {
            ++it;
            continue;
        }
        control.reset_deadline(it->first);
        applied_[static_cast<std::size_t>(it->first.value())] = 1;  // libtorrent resets the priority to 1
        ++stats_.deadlines_reset;
        it = deadlines_.erase(it);
    }

    // 2. Priorities, as one delta.
    auto& changes = changes_;
    changes.clear();
    auto diff = [&](std::size_t p, std::uint8_t want) {
        auto& cur = applied_[p];
        auto& pending = pending_flip_[p];
        if (had.has(PieceIndex(static_cast<std::int32_t>(p))) || want == cur) {
            if (pending != 0) --pending_count_;
            pending = 0;
            return;
        }
        // Drops to 0 are immediate (a given-up piece, or one beyond the buffer's request_end, must stop being
        // requested now); only raises from 0 wait for the plans to agree.
        bool immediate = !(cur == 0 && want != 0);
        if (!immediate) {
            if (pending == 0) ++pending_count_;
            if (++pending < config_.settle_plans) {
                ++stats_.flips_deferred;
                return;
            }
        }
        if (pending != 0) --pending_count_;
        pending = 0;
        cur = want;
        changes.emplace_back(PieceIndex(static_cast<std::int32_t>(p)), want);
    };
    // Where the plan asks what was applied (and the piece has no deadline) nothing changes and no flip is
    // pending: those stretches are skipped whole. A deadline's piece keeps what the deadline set (7).
    const std::size_t m = std::min(static_cast<std::size_t>(n), plan.priority.size());
    std::size_t p = 0;
    auto next_deadline = wanted_deadlines.begin();
    while (p < m) {
        while (next_deadline != wanted_deadlines.end() &&
               static_cast<std::size_t>(next_deadline->value()) < p)
            ++next_deadline;
        const std::size_t end = next_deadline != wanted_deadlines.end()
                                    ? std::min(m, static_cast<std::size_t>(next_deadline->value()))
                                    : m;
        const std::size_t q = first_difference(plan.priority.data(), applied_.data(), p, end);
        for (std::size_t i = p; pending_count_ > 0 && i < q; ++i) {
            if (pending_flip_[i] != 0) --pending_count_;
            pending_flip_[i] = 0;
        }
        if (q < end) {
            diff(q, plan.priority[q]);
        } else if (end < m) {
            diff(end, 7);
        }
        p = (q < end ? q : end) + 1;
    }
    if (!changes.empty()) {
        control.prioritize(changes);
        stats_.priority_changes += changes.size();
    }
}

}  // namespace toast::client
