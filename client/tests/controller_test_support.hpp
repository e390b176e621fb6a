// What the StreamController tests share: a 40-piece title of one-second pieces, controller setups and
// constructed swarm samples.
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <vector>

#include "client/core/stream_controller.hpp"

namespace toast::client::testing {

inline const SteadyTime t0{std::chrono::seconds(1000)};

// 40 pieces of 250,000 bytes at 2 Mbps: one piece is one second of video.
inline TitleGeometry geometry(int pieces = 40) {
    return *TitleGeometry::make(Bytes(250'000ULL * static_cast<std::uint64_t>(pieces)), Bytes(250'000),
                                BitRate(2'000'000));
}

inline ControllerSetup setup(Behavior behavior = Behavior::stream, bool trackers = false) {
    ControllerSetup s;
    s.picker = PickerKind::hybrid;
    s.behavior = behavior;
    s.inorder_window = std::chrono::seconds(10);
    s.has_server = true;
    s.has_trackers = trackers;
    return s;
}

inline std::vector<PieceIndex> idx(std::initializer_list<int> list) {
    std::vector<PieceIndex> out;
    for (int p : list)
        out.emplace_back(p);
    return out;
}

inline std::vector<PieceIndex> fetched(const ControllerPlan& plan, std::optional<FetchReason> reason = {}) {
    std::vector<PieceIndex> out;
    for (const auto& f : plan.fetches)
        if (!reason || f.reason == *reason) out.push_back(f.piece);
    return out;
}

inline PieceSet pieces(int n, std::initializer_list<int> list) {
    PieceSet s{PieceCount(n)};
    for (int p : list)
        s.set(PieceIndex(p));
    return s;
}

// A sample at `now` of a 40-piece title where `holders` peers hold every piece.
inline SwarmSample sample(SteadyTime now, int holders = 0) {
    SwarmSample s;
    s.now = now;
    s.availability.assign(40, holders);
    return s;
}

inline PeerSample viewer(double rate = 0, int queue = 0) {
    PeerSample p;
    p.download_rate = rate;
    p.queue_length = queue;
    return p;
}

inline PeerSample operator_seed() {
    PeerSample p;
    p.seed = true;
    p.operator_peer = true;
    return p;
}

}  // namespace toast::client::testing
