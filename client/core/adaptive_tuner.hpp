// The adaptive picker's tuning, learnt online: how much of the hybrid picker's in-order window to keep.
//
// Which fixed picker does best depends on how much of the stream the swarm can carry: with upload at the
// bitrate hybrid does (peers keep up with an in-order window, and each piece they deliver is soon passed on
// to the viewer behind); with half of it beta(1,2) does (thesis §5.3). Below the bitrate an in-order frontier
// is caught by the playhead, and the peers' upload goes to pieces the server takes at their last moment;
// beta spreads the requests over the pieces ahead. The testbed's Fig. 5.3 finds the same (testbed/README.md).
// How many viewers share each uploader a client cannot see; what its peers deliver it can: the bytes all of
// them delivered over the last second, taken while some peer has a full request pipeline (so the rate is
// what they can give, not what we asked for), over the bitrate. The tuner smooths that ratio and keeps the
// whole window at or above `hybrid_ratio`, none at or below `beta_ratio` (beta from the give-up zone on), and
// a share in proportion in between.
//
// Invariants: share() in [0, 1]; inorder_window() in [0, window].
#pragma once

#include <chrono>
#include <optional>

namespace toast::client {

struct AdaptiveConfig {
    // The peers' share of the bitrate at which the window is dropped / kept whole. Measured on the testbed's
    // 12-viewer Fig. 5.3 (the operator's seed counts among the peers): at upload = bitrate / 2 a viewer's
    // peers deliver 0.4-0.8 of it (median about 0.6) and beta does best, 3-4 points above hybrid; at 3/4 of
    // it they deliver 0.55-1.1 (median about 0.86) and hybrid or in-order does, about a point above beta.
    double beta_ratio = 0.7;
    double hybrid_ratio = 0.8;
    // Weight of each new sample (one a second) in the smoothed ratio.
    double gain = 0.2;
};

class AdaptiveTuner {
  public:
    // `window` is the in-order window the user chose (--inorder-window): the most the tuner keeps.
    AdaptiveTuner(std::chrono::nanoseconds window, AdaptiveConfig config);

    // One sample: the rate all peers delivered at together since the last sample, over the bitrate, taken
    // while some peer has a full request pipeline. Negative or non-finite samples are ignored.
    void on_peer_ratio(double ratio);

    // The smoothed ratio; none before the first sample.
    std::optional<double> peer_ratio() const { return ratio_; }
    // 1 (hybrid) until the first sample.
    double share() const;
    std::chrono::nanoseconds inorder_window() const;

  private:
    std::chrono::nanoseconds window_;
    AdaptiveConfig config_;
    std::optional<double> ratio_;
};

}  // namespace toast::client
