// The adaptive picker's tuning, learnt online: how much of the title to pick in order.
//
// Which fixed picker does best depends on how much of the stream the swarm can carry: with upload at the
// bitrate in-order and hybrid do (peers keep up with an in-order frontier, and each piece they deliver is
// soon passed on to the viewer behind); with half of it beta(1,2) does (thesis §5.3). Below the bitrate an
// in-order frontier is caught by the playhead, and the peers' upload goes to pieces the server takes at their
// last moment; beta spreads the requests over the pieces ahead. The testbed's Fig. 5.3 experiment shows the
// same (docs/results.md). How many viewers share each uploader a client cannot see; what its peers deliver it
// can: the bytes all of them delivered over the last second, taken while some peer has a full request
// pipeline (so the rate is what they can give, not what we asked for), over the bitrate. The tuner smooths
// that ratio and picks
//   - at or above `inorder_ratio`: the whole title in order (the in-order picker);
//   - at or above `hybrid_ratio`: the whole in-order window, beta beyond it (hybrid);
//   - at or below `beta_ratio`: no window (beta from the give-up zone on);
//   - in between: a share of the window in proportion.
// With a prior (this client's own upload cap over the bitrate) the ratio it follows is at most the prior plus
// `headroom` plus what idle peers deliver: the viewers cannot carry more of each viewer's stream, on average,
// than what each viewer uploads plus the operator's seed's share. A viewer whose viewing peers give it more
// (the last to arrive, with every viewer ahead of it free to serve it) is given what the others then lack;
// picking in order there would spend upload the swarm does not have to spare. Peers that download nothing
// (boxes seeding what they watched or were pushed, not the operator's) are upload no viewer's prior counts:
// in a catalogue evening most boxes are idle, and their share of the stream is the swarm's to spend.
//
// Invariants: share() in [0, 1]; inorder_window() in [0, window]; whole_title() implies share() == 1.
#pragma once

#include <chrono>
#include <optional>

namespace toast::client {

struct AdaptiveConfig {
    // The peers' share of the bitrate at which the window is dropped / kept whole (the operator's seed
    // counts among the peers). Where a viewer's peers deliver clearly less than the bitrate, beta does better
    // than hybrid; where they deliver most of it, in-order does best. The two ratios sit between what
    // peers deliver in those two regimes on the testbed's Fig. 5.3 swarm (docs/results.md).
    double beta_ratio = 0.7;
    double hybrid_ratio = 0.75;
    // At or above this share the whole title is picked in order. Where peers deliver that much, in-order
    // does better than hybrid, so the tuner has no hybrid zone of its own by default: hybrid's window with
    // beta beyond it only between the two ratios above.
    double inorder_ratio = 0.75;
    // Weight of each new sample (one a second) in the smoothed ratio.
    double gain = 0.2;
    // How far above its prior the tuner follows a measured ratio: room for the operator's seed's share of
    // every viewer's stream. The last viewers to arrive measure far more than the swarm carries on average
    // (every viewer ahead is free to serve them), and a window kept on that ratio costs them against beta.
    double headroom = 0.2;
};

class AdaptiveTuner {
  public:
    // `window` is the in-order window the user chose (--inorder-window): the most the tuner keeps. `prior` is
    // the ratio assumed until peers are measured, and the start of the smoothing (this client's own upload
    // cap over the bitrate: the operator's boxes share one provisioning). It sets the window's share; the
    // whole title too, as a measured ratio would. Without a prior the tuner is hybrid with the whole window
    // until the first sample, which it then takes as it is.
    AdaptiveTuner(std::chrono::nanoseconds window, AdaptiveConfig config,
                  std::optional<double> prior = std::nullopt);

    // One sample: the rate all peers delivered at together since the last sample, over the bitrate, taken
    // while some peer has a full request pipeline; `idle_ratio` the part of it from peers that download
    // nothing (clamped to [0, ratio]). Negative or non-finite samples are ignored.
    void on_peer_ratio(double ratio, double idle_ratio = 0);

    // The smoothed ratio as measured (not capped by the prior); none before the first sample.
    std::optional<double> peer_ratio() const { return ratio_; }
    // The smoothed part of it from idle peers (0 before the first sample).
    double idle_ratio() const { return idle_; }
    // From the prior until the first sample; 1 (hybrid) without one.
    double share() const;
    // The whole title is picked in order now, not only inorder_window().
    bool whole_title() const;
    std::chrono::nanoseconds inorder_window() const;

  private:
    std::chrono::nanoseconds window_;
    AdaptiveConfig config_;
    std::optional<double> prior_;
    std::optional<double> ratio_;
    double idle_ = 0;
    // The smoothed ratio, or the prior before the first sample: where the smoothing goes on from.
    std::optional<double> current() const { return ratio_ ? ratio_ : prior_; }
    // What share() and whole_title() follow: current(), at most the prior plus headroom plus idle_.
    std::optional<double> effective() const;
};

}  // namespace toast::client
