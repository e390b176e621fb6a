#include "client/core/adaptive_tuner.hpp"

#include <algorithm>
#include <cmath>

namespace toast::client {

using std::chrono::nanoseconds;

AdaptiveTuner::AdaptiveTuner(nanoseconds window, AdaptiveConfig config, std::optional<double> prior)
    : window_(std::max(window, nanoseconds(0))), config_(config) {
    if (prior && std::isfinite(*prior) && *prior >= 0) prior_ = prior;
    config_.gain = std::clamp(config_.gain, 0.0, 1.0);
    config_.headroom = std::max(config_.headroom, 0.0);
    config_.hybrid_ratio = std::max(config_.hybrid_ratio, config_.beta_ratio);
    config_.inorder_ratio = std::max(config_.inorder_ratio, config_.hybrid_ratio);
}

std::optional<double> AdaptiveTuner::effective() const {
    auto r = current();
    if (r && prior_) return std::min(*r, *prior_ + config_.headroom + idle_);
    return r;
}

bool AdaptiveTuner::whole_title() const {
    auto r = effective();
    return r && *r >= config_.inorder_ratio;
}

void AdaptiveTuner::on_peer_ratio(double ratio, double idle_ratio) {
    if (!std::isfinite(ratio) || ratio < 0) return;
    idle_ratio = std::isfinite(idle_ratio) ? std::clamp(idle_ratio, 0.0, ratio) : 0.0;
    auto before = current();
    if (!ratio_) {
        // The first sample: what idle peers deliver is measured, not assumed, so it is taken as it is and
        // comes on top of the prior the ratio is smoothed from.
        idle_ = idle_ratio;
        if (before) before = *before + idle_ratio;
    } else {
        idle_ = (1 - config_.gain) * idle_ + config_.gain * idle_ratio;
    }
    ratio_ = before ? (1 - config_.gain) * *before + config_.gain * ratio : ratio;
}

double AdaptiveTuner::share() const {
    auto r = effective();
    if (!r) return 1.0;
    if (*r >= config_.hybrid_ratio) return 1.0;
    if (*r <= config_.beta_ratio) return 0.0;
    return (*r - config_.beta_ratio) / (config_.hybrid_ratio - config_.beta_ratio);
}

nanoseconds AdaptiveTuner::inorder_window() const {
    return nanoseconds(std::llround(share() * static_cast<double>(window_.count())));
}

}  // namespace toast::client
