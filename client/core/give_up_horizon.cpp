#include "client/core/give_up_horizon.hpp"

#include <algorithm>
#include <cmath>

namespace toast::client {

using std::chrono::nanoseconds;

GiveUpHorizon::GiveUpHorizon(TitleGeometry geometry, HorizonConfig config)
    : geometry_(geometry),
      config_(config),
      rate_(config.initial_peer_rate > 0 ? config.initial_peer_rate : bytes_per_second(geometry.bitrate())) {
    config_.ewma_alpha = std::clamp(config_.ewma_alpha, 0.0, 1.0);
    if (config_.safety_factor < 0) config_.safety_factor = 0;
}

void GiveUpHorizon::on_peer_rate(double bytes_per_second) {
    if (!(bytes_per_second > 0) || !std::isfinite(bytes_per_second)) return;
    // Blended with the assumption too: a connection's first seconds report a fraction of its rate.
    rate_ = config_.ewma_alpha * bytes_per_second + (1 - config_.ewma_alpha) * rate_;
    ++samples_;
}

void GiveUpHorizon::on_piece_from_peer(Bytes size, nanoseconds took) {
    if (size.value() == 0 || took.count() <= 0) return;
    on_peer_rate(static_cast<double>(size.value()) * 1e9 / static_cast<double>(took.count()));
}

nanoseconds GiveUpHorizon::peer_delivery_time() const {
    double ns = static_cast<double>(geometry_.piece_length().value()) / rate_ * 1e9;
    if (ns >= static_cast<double>(nanoseconds::max().count())) return nanoseconds::max();
    return nanoseconds(static_cast<std::int64_t>(std::ceil(ns)));
}

nanoseconds GiveUpHorizon::horizon_time() const {
    // No peer to wait for: giving up early would only move server fetches forward (with the maximum here,
    // the whole title would be fetched in the seconds before the first peer connects).
    if (peers_ == 0) return nanoseconds(0);
    double ns = static_cast<double>(peer_delivery_time().count()) * config_.safety_factor +
                static_cast<double>(config_.safety_margin.count());
    if (ns >= static_cast<double>(config_.max_horizon.count())) return config_.max_horizon;
    return nanoseconds(std::max<std::int64_t>(0, static_cast<std::int64_t>(ns)));
}

PieceCount GiveUpHorizon::pieces_within(nanoseconds window, nanoseconds into_playhead_piece) const {
    // Piece playhead + k is needed at k * D - into; it is given up when that is < H, i.e. k < (H + into) / D.
    // Long double: a max_horizon of nanoseconds::max() must not overflow.
    auto d = static_cast<long double>(geometry_.piece_duration().count());
    auto h = static_cast<long double>(std::max<std::int64_t>(0, window.count())) +
             static_cast<long double>(std::max<std::int64_t>(0, into_playhead_piece.count()));
    const auto n = static_cast<long double>(geometry_.piece_count().value());
    long double k = d > 0 ? std::ceil(h / d) : n;
    k = std::clamp<long double>(k, 1, n);
    return PieceCount(static_cast<std::int32_t>(k));
}

}  // namespace toast::client
