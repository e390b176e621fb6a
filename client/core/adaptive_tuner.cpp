#include "client/core/adaptive_tuner.hpp"

#include <algorithm>
#include <cmath>

namespace toast::client {

using std::chrono::duration;
using std::chrono::nanoseconds;

// As RFC 6298's timeout: 4 mean deviations past the smoothed time. How long a piece takes varies with how
// many viewers share its uploader; a lead at the mean would leave about half of them to be raced.
constexpr double kDeviations = 4;

AdaptiveTuner::AdaptiveTuner(nanoseconds window, AdaptiveConfig config, SteadyTime start)
    : window_(std::max(window, nanoseconds(0))), config_(config), last_tick_(start) {
    config_.late_decrease = std::clamp(config_.late_decrease, 0.0, 1.0);
    config_.max_lead = std::max(config_.max_lead, nanoseconds(0));
}

void AdaptiveTuner::on_tick(int late, SteadyTime now) {
    auto elapsed = now > last_tick_ ? now - last_tick_ : nanoseconds(0);
    last_tick_ = now;
    if (late > 0) {
        late_total_ += static_cast<std::uint64_t>(late);
        if (!last_decrease_ || now - *last_decrease_ >= config_.decrease_interval) {
            share_ *= config_.late_decrease;
            last_decrease_ = now;
        }
        return;
    }
    if (config_.recovery.count() <= 0) {
        share_ = 1.0;
        return;
    }
    share_ = std::min(1.0, share_ + duration<double>(elapsed) / duration<double>(config_.recovery));
}

void AdaptiveTuner::on_peer_piece(nanoseconds took) {
    if (took.count() < 0) return;
    double t = duration<double>(took).count();
    if (!smoothed_) {
        smoothed_ = t;
        deviation_ = t / 2;
        return;
    }
    // RFC 6298's gains: 1/4 for the deviation (updated first, from the old mean), 1/8 for the mean.
    deviation_ = 0.75 * deviation_ + 0.25 * std::abs(*smoothed_ - t);
    smoothed_ = 0.875 * *smoothed_ + 0.125 * t;
}

AdaptiveSettings AdaptiveTuner::settings() const {
    AdaptiveSettings s;
    s.inorder_window = nanoseconds(std::llround(share_ * static_cast<double>(window_.count())));
    auto lead = smoothed_ ? duration<double>(*smoothed_ + kDeviations * deviation_)
                          : duration<double>(config_.initial_lead);
    s.lead = std::clamp(std::chrono::duration_cast<nanoseconds>(lead), nanoseconds(0), config_.max_lead);
    return s;
}

}  // namespace toast::client
