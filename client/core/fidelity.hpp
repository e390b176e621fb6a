// Policy fidelity: how closely the order in which pieces actually arrive from peers follows the order the
// policy asked for. libtorrent only approximates our plans (priorities are not strict tiers), so this is
// measured.
//
// Definition: an arrival is a hit when, in the latest plan before it arrived, the piece ranked among the
// first top_k wanted pieces, counting only pieces that had not arrived since that plan (an in-order download
// that receives 5, 6, 7 after a plan [5, 6, 7, ...] scores three hits with top_k = 1). fidelity = hits /
// arrivals. A piece not in the plan at all (not wanted, or given up) is a miss. Only peer arrivals count: the
// server fallback fetches given-up pieces on purpose. A perfect in-order download with top_k >= 1 scores 1.0;
// libtorrent's own rarest-first against an in-order plan scores about top_k / wanted.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "client/core/piece_types.hpp"

namespace toast::client {

// Invariants: hits() <= arrivals(); fidelity() is nullopt until the first arrival, then in [0, 1].
class FidelityMeter {
  public:
    explicit FidelityMeter(std::size_t top_k = 8) : top_k_(top_k == 0 ? 1 : top_k) {}

    // The order the policy now wants (PiecePlan::wanted).
    void on_plan(const std::vector<PieceIndex>& wanted);
    // A piece completed from peers.
    void on_arrival(PieceIndex p);

    std::size_t top_k() const { return top_k_; }
    std::uint64_t arrivals() const { return arrivals_; }
    std::uint64_t hits() const { return hits_; }
    std::optional<double> fidelity() const;
    // Mean of rank / plan size over arrivals that were in the plan (0 = always the most wanted); a finer
    // secondary figure for analysis.
    std::optional<double> mean_rank_fraction() const;

  private:
    std::size_t top_k_;
    std::vector<std::int64_t> rank_;  // by piece index; -1 when not wanted
    std::size_t plan_size_ = 0;
    std::uint64_t arrivals_ = 0;
    std::uint64_t hits_ = 0;
    std::uint64_t ranked_ = 0;
    double rank_fraction_sum_ = 0;
};

}  // namespace toast::client
