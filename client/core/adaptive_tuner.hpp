// The adaptive picker's tuning, learnt online: how far past the give-up zone peers are asked for new pieces
// (the lead), and how much of the hybrid picker's in-order window to keep (the share).
//
// The lead is what a piece takes from the moment peers are asked for it to its arrival, estimated as TCP
// estimates its retransmission timeout (RFC 6298: smoothed time + 4 x its mean deviation). A piece needed
// sooner than that would be raced by the server at its last moment: the peers' upload spent on it is lost
// and the server pays too. With upload below the bitrate, an uploader is shared by several viewers and a
// piece takes several piece-times, far longer than the aggregate peer rate suggests.
//
// The share answers late pieces: pieces the server had to fetch although peers were asked for them or were
// sending them. With upload at the bitrate peers keep up with an in-order window and hybrid does best; below
// it, an in-order frontier is caught by the playhead and every viewer asks every uploader for the same few
// pieces, where beta(1,2), which spreads requests over the rest of the title, does best (thesis §5.3, and
// this testbed's 48-viewer set; in its 12-viewer Fig. 5.3 beta leads at every upload). Which case holds
// depends on how many viewers share each uploader, which a client cannot see; whether its own requests come
// back in time it can. Rule (additive increase, multiplicative decrease, as TCP's window): the share starts
// at 1 (hybrid's whole window). A tick with late pieces multiplies it by late_decrease, at most once per
// decrease_interval (a burst from one slow peer is one event); ticks without grow it back linearly, from 0 to
// 1 in `recovery`.
//
// Invariants: share() in [0, 1]; settings().inorder_window in [0, window]; settings().lead in [0, max_lead].
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "client/core/stream_watcher.hpp"

namespace toast::client {

struct AdaptiveConfig {
    double late_decrease = 0.5;
    std::chrono::nanoseconds decrease_interval = std::chrono::seconds(1);
    std::chrono::nanoseconds recovery = std::chrono::seconds(60);
    // Pieces further ahead are held by fewer of the viewers ahead: a longer lead loses fewer pieces to the
    // server but leaves peers less to deliver (testbed/README.md has the trade measured).
    std::chrono::nanoseconds max_lead = std::chrono::seconds(8);
    // The lead before the first piece from peers is measured.
    std::chrono::nanoseconds initial_lead = std::chrono::seconds(0);
};

struct AdaptiveSettings {
    std::chrono::nanoseconds inorder_window{0};  // pieces past the peers' start picked in order
    std::chrono::nanoseconds lead{0};            // added to the give-up zone for what peers are asked
};

class AdaptiveTuner {
  public:
    // `window` is the in-order window the user chose (--inorder-window): the most the tuner keeps.
    AdaptiveTuner(std::chrono::nanoseconds window, AdaptiveConfig config, SteadyTime start);

    // One controller tick: `late` pieces went to the server although peers were asked for or sending them.
    void on_tick(int late, SteadyTime now);
    // A piece arrived from peers `took` after they were first asked for it.
    void on_peer_piece(std::chrono::nanoseconds took);

    double share() const { return share_; }
    AdaptiveSettings settings() const;
    std::uint64_t late_pieces() const { return late_total_; }

  private:
    std::chrono::nanoseconds window_;
    AdaptiveConfig config_;
    double share_ = 1.0;
    SteadyTime last_tick_;
    std::optional<SteadyTime> last_decrease_;
    std::uint64_t late_total_ = 0;
    std::optional<double> smoothed_;  // seconds
    double deviation_ = 0;            // seconds
};

}  // namespace toast::client
