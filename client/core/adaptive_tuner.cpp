#include "client/core/adaptive_tuner.hpp"

#include <algorithm>
#include <cmath>

namespace toast::client {

using std::chrono::nanoseconds;

AdaptiveTuner::AdaptiveTuner(nanoseconds window, AdaptiveConfig config)
    : window_(std::max(window, nanoseconds(0))), config_(config) {
    config_.gain = std::clamp(config_.gain, 0.0, 1.0);
    config_.hybrid_ratio = std::max(config_.hybrid_ratio, config_.beta_ratio);
    config_.inorder_ratio = std::max(config_.inorder_ratio, config_.hybrid_ratio);
}

bool AdaptiveTuner::whole_title() const {
    return ratio_ && *ratio_ >= config_.inorder_ratio;
}

void AdaptiveTuner::on_peer_ratio(double ratio) {
    if (!std::isfinite(ratio) || ratio < 0) return;
    ratio_ = ratio_ ? (1 - config_.gain) * *ratio_ + config_.gain * ratio : ratio;
}

double AdaptiveTuner::share() const {
    if (!ratio_) return 1.0;
    if (*ratio_ >= config_.hybrid_ratio) return 1.0;
    if (*ratio_ <= config_.beta_ratio) return 0.0;
    return (*ratio_ - config_.beta_ratio) / (config_.hybrid_ratio - config_.beta_ratio);
}

nanoseconds AdaptiveTuner::inorder_window() const {
    return nanoseconds(std::llround(share() * static_cast<double>(window_.count())));
}

}  // namespace toast::client
