#include "client/core/fidelity.hpp"

#include <algorithm>

namespace toast::client {

void FidelityMeter::on_plan(const std::vector<PieceIndex>& wanted) {
    std::fill(rank_.begin(), rank_.end(), -1);
    for (std::size_t r = 0; r < wanted.size(); ++r) {
        auto i = wanted[r].value();
        if (i < 0) continue;
        if (static_cast<std::size_t>(i) >= rank_.size()) rank_.resize(static_cast<std::size_t>(i) + 1, -1);
        rank_[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(r);
    }
    plan_size_ = wanted.size();
}

void FidelityMeter::on_arrival(PieceIndex p) {
    ++arrivals_;
    auto i = p.value();
    if (i < 0 || static_cast<std::size_t>(i) >= rank_.size()) return;
    auto r = rank_[static_cast<std::size_t>(i)];
    if (r < 0) return;
    if (static_cast<std::size_t>(r) < top_k_) ++hits_;
    ++ranked_;
    rank_fraction_sum_ += static_cast<double>(r) / static_cast<double>(plan_size_);
    // The piece is no longer wanted: later arrivals move up, as they would in the next plan.
    rank_[static_cast<std::size_t>(i)] = -1;
    for (auto& other : rank_)
        if (other > r) --other;
    --plan_size_;
}

std::optional<double> FidelityMeter::fidelity() const {
    if (arrivals_ == 0) return std::nullopt;
    return static_cast<double>(hits_) / static_cast<double>(arrivals_);
}

std::optional<double> FidelityMeter::mean_rank_fraction() const {
    if (ranked_ == 0) return std::nullopt;
    return rank_fraction_sum_ / static_cast<double>(ranked_);
}

}  // namespace toast::client
