#include "server/core/replica_chooser.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace toast::server {

namespace {
constexpr double kTie = 0.01;
}  // namespace

double expected_finish_seconds(const DiskLoad& d, std::uint64_t request_bytes) {
    return static_cast<double>(d.outstanding_bytes + request_bytes) * d.seconds_per_byte +
           static_cast<double>(d.outstanding_ops + 1) * d.access_seconds;
}

std::optional<std::size_t> choose_replica(std::span<const std::uint32_t> candidates,
                                          std::span<const DiskLoad> disks, std::uint64_t request_bytes,
                                          std::uint64_t tie_break, std::uint64_t suspect) {
    const std::size_t n = candidates.size();
    auto soonest = [&](bool trusted_only) {
        std::optional<std::size_t> best;
        double best_time = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t i = (tie_break % n + k) % n;
            const auto disk = candidates[i];
            if (disk >= disks.size() || !disks[disk].online) continue;
            if (trusted_only && i < 64 && (suspect >> i & 1u)) continue;
            const double t = expected_finish_seconds(disks[disk], request_bytes);
            // Better by more than kTie only: the first candidate in tie-break order keeps a tie. Estimates
            // this close are no evidence either way (an idle disk's faded model stays a hair above the prior
            // it tends to, and an exactly timed disk at that prior would keep every read from it forever).
            if (!best || t < best_time * (1.0 - kTie)) {
                best = i;
                best_time = t;
            }
        }
        return best;
    };
    if (n == 0) return std::nullopt;
    if (auto trusted = soonest(true)) return trusted;
    return soonest(false);
}

ServiceModel::ServiceModel(double access_seconds, double seconds_per_byte, double decay)
    : decay_(decay),
      prior_access_(access_seconds),
      prior_per_byte_(seconds_per_byte),
      access_(access_seconds),
      per_byte_(seconds_per_byte) {
    // Two pseudo-reads from the prior, a small and a large one, so the first fits are well-posed.
    add_prior(2.0);
}

void ServiceModel::add_prior(double w) {
    add(64.0 * 1024, prior_access_ + 64.0 * 1024 * prior_per_byte_, w / 2);
    add(4.0 * 1024 * 1024, prior_access_ + 4.0 * 1024 * 1024 * prior_per_byte_, w / 2);
}

void ServiceModel::age(double idle_seconds, double half_life_seconds) {
    if (!(idle_seconds > 0) || !(half_life_seconds > 0)) return;
    const double keep = std::exp2(-idle_seconds / half_life_seconds);
    // Replace the forgotten share of every observed time by what the prior predicts for the same read sizes.
    // The sizes (sw, sx, sxx) stay, and least squares is linear in the times, so the fit moves exactly that
    // share of the way to the prior, and the next real read weighs as much as before.
    sy_ = keep * sy_ + (1.0 - keep) * (prior_access_ * sw_ + prior_per_byte_ * sx_);
    sxy_ = keep * sxy_ + (1.0 - keep) * (prior_access_ * sx_ + prior_per_byte_ * sxx_);
    refit();
}

void ServiceModel::add(double x, double y, double w) {
    sw_ += w;
    sx_ += w * x;
    sy_ += w * y;
    sxx_ += w * x * x;
    sxy_ += w * x * y;
}

void ServiceModel::observe(std::uint64_t bytes, double seconds) {
    const double keep = 1.0 - decay_;
    sw_ *= keep;
    sx_ *= keep;
    sy_ *= keep;
    sxx_ *= keep;
    sxy_ *= keep;
    add(static_cast<double>(bytes), std::max(0.0, seconds), decay_);
    refit();
}

void ServiceModel::refit() {
    const double mean_x = sx_ / sw_;
    const double mean_y = sy_ / sw_;
    const double var_x = sxx_ / sw_ - mean_x * mean_x;
    // Sizes spread by less than ~1% of their mean: the intercept is not identifiable.
    if (var_x <= 1e-4 * mean_x * mean_x) {
        if (mean_x > 0) per_byte_ = std::max(0.0, (mean_y - access_) / mean_x);
        if (per_byte_ == 0) access_ = mean_y;
        return;
    }
    const double cov = sxy_ / sw_ - mean_x * mean_y;
    double slope = cov / var_x;
    double intercept = mean_y - slope * mean_x;
    if (slope < 0) {
        slope = 0;
        intercept = mean_y;
    } else if (intercept < 0) {
        intercept = 0;
        slope = sxx_ > 0 ? sxy_ / sxx_ : 0;
    }
    access_ = intercept;
    per_byte_ = slope;
}

}  // namespace toast::server
