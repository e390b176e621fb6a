// The PlanApplier's three torrent_handle calls, made on the swarm model instead of libtorrent: a viewer's
// controller plans, client/core's PlanApplier diffs the plan against what it applied last (with libtorrent's
// rules: raises from 0 settle, deadlines set before resets, a reset leaves priority 1), and this translates.
#pragma once

#include "client/core/plan_applier.hpp"
#include "sim/core/swarm_model.hpp"

namespace toast::sim {

class ModelPieceControl final : public client::PieceControl {
  public:
    ModelPieceControl(SwarmModel& swarm, BoxId box) : swarm_(swarm), box_(box) {}
    // Deadlines are relative to this time (seconds).
    void set_now(double now) { now_ = now; }
    void prioritize(const std::vector<std::pair<client::PieceIndex, std::uint8_t>>& changes) override {
        for (auto [p, prio] : changes)
            swarm_.set_priority(box_, p.value(), prio);
    }
    void set_deadline(client::PieceIndex piece, std::chrono::milliseconds deadline) override {
        swarm_.set_deadline(box_, piece.value(), now_ + std::chrono::duration<double>(deadline).count());
    }
    void reset_deadline(client::PieceIndex piece) override { swarm_.reset_deadline(box_, piece.value()); }

  private:
    SwarmModel& swarm_;
    BoxId box_;
    double now_ = 0;
};

}  // namespace toast::sim
