#include "client/core/operator_tier.hpp"

#include <algorithm>

namespace toast::client {

using std::chrono::nanoseconds;

std::string_view to_string(OperatorNeed n) {
    switch (n) {
        case OperatorNeed::none:
            return "none";
        case OperatorNeed::unheld_piece:
            return "a piece no viewer holds";
        case OperatorNeed::late_viewers:
            return "viewers were late";
        case OperatorNeed::no_viewers:
            return "no viewer connected";
    }
    return "unknown";
}

OperatorNeed OperatorTier::need(const OperatorTierInput& in) const {
    if (in.late && in.running >= config_.late_from) return OperatorNeed::late_viewers;
    if (in.viewer_availability == nullptr) return OperatorNeed::none;
    if (in.viewers == 0) return OperatorNeed::no_viewers;
    const auto n = in.had.size().value();
    const auto end = in.request_end ? std::min(in.request_end->value(), n) : n;
    const auto& held = *in.viewer_availability;
    for (PieceIndex p = std::max(in.playhead, PieceIndex(0)); p.value() < end; ++p) {
        // Media time until the playhead reaches p.
        const auto due = in.piece_duration * (p - in.playhead).value() - in.into_playhead_piece;
        if (due > in.reach) break;
        const auto i = static_cast<std::size_t>(p.value());
        if (!in.had.has(p) && (i >= held.size() || held[i] <= 0)) return OperatorNeed::unheld_piece;
    }
    return OperatorNeed::none;
}

bool OperatorTier::update(const OperatorTierInput& in, SteadyTime now) {
    const auto reason = need(in);
    if (reason != OperatorNeed::none) {
        if (!wanted()) ++turned_on_;
        reason_ = reason;
        until_ = now + config_.hold;
    } else if (!until_ || now >= *until_) {
        reason_ = OperatorNeed::none;
        until_.reset();
    }
    return wanted();
}

}  // namespace toast::client
