#include "client/core/swarm_sample.hpp"

#include <algorithm>

namespace toast::client {

PeerFigures peer_figures(const std::vector<PeerSample>& peers, int saturated_queue) {
    PeerFigures f;
    for (const auto& p : peers) {
        ++f.connected;
        if (p.seed) ++f.seeds;
        if (p.operator_peer) ++f.operator_peers;
        f.rate += p.download_rate;
        if (p.queue_length >= saturated_queue) f.saturated = true;
    }
    return f;
}

std::vector<int> viewer_availability(const SwarmSample& sample) {
    std::vector<int> out = sample.availability;
    int operator_seeds = 0;
    for (const auto& p : sample.peers) {
        if (!p.operator_peer) continue;
        if (p.seed) {
            ++operator_seeds;
            continue;
        }
        for (auto piece : p.pieces.pieces()) {
            auto i = static_cast<std::size_t>(piece.value());
            if (i < out.size()) --out[i];
        }
    }
    for (auto& a : out)
        a = std::max(0, a - operator_seeds);
    return out;
}

std::vector<std::int64_t> owed_by_peers(const SwarmSample& sample, PieceCount piece_count) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(piece_count.value()), -1);
    for (const auto& f : sample.in_flight) {
        auto i = f.piece.value();
        if (i < 0 || i >= piece_count.value()) continue;
        out[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(f.owed.value());
    }
    return out;
}

}  // namespace toast::client
