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
        if ((p.seed || p.upload_only) && !p.operator_peer) {
            ++f.idle;
            f.idle_rate += p.download_rate;
        }
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

}  // namespace toast::client
