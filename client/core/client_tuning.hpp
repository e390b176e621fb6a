// Every tuning value of the streaming client in one place: the loop's cadence, peer discovery, how the peer
// rate is sampled, the give-up horizon, the server fallback, the piece policies and how plans are applied to
// libtorrent. The command line sets what a user chooses (picker, windows, limits: ClientOptions); the values
// here are the engineering constants behind those choices, with the reason for each default beside it.
// Passed by const& to whatever needs it; never global.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "client/core/adaptive_tuner.hpp"
#include "client/core/fallback_planner.hpp"
#include "client/core/give_up_horizon.hpp"
#include "client/core/operator_tier.hpp"
#include "client/core/piece_policy.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

// How a PiecePlan is applied to libtorrent (client/core/plan_applier.hpp explains each rule).
struct PlanApplierConfig {
    int settle_plans = 2;  // a raise from priority 0 waits until this many plans in a row ask for it
    std::chrono::milliseconds deadline_slack{1000};  // a deadline moves only when it changed by more
    std::uint8_t initial_priority = 4;               // libtorrent's default for every piece of a new torrent
};

struct ClientTuning {
    // --- the loop ---
    // Plans are made this often; libtorrent's own picker and choker run once a second, so a faster tick
    // mostly costs CPU, a slower one reacts late to a piece the server must take.
    std::chrono::milliseconds tick{200};
    std::chrono::milliseconds stats_interval{1000};  // one stats line this often
    // play: how long a player read waits for missing bytes before the endpoint gives up (503).
    std::chrono::milliseconds player_wait_timeout{60'000};

    // --- discovery ---
    // How long to wait for the tracker's first answer before assuming there are no peers, and for peers'
    // bitfields before "no peer has it" means anything.
    std::chrono::milliseconds discovery_grace{2000};
    // A swarm member that started just before us is missing from the tracker's answer and the tracker's
    // interval is long: while the answer names nobody, ask again after this delay, this many times.
    int empty_announce_retries = 5;
    std::chrono::milliseconds empty_announce_delay{1000};
    // A failed announce, before any tracker has answered and while nobody is connected, is asked again
    // after tracker_retry_first, doubling up to tracker_retry_max for as long as it keeps failing.
    // libtorrent's own retry comes 17 s after a first failure (55 s after a second): a viewer that arrived
    // while the tracker was restarting would stream that long from the server alone, and the tracker would
    // not know it to name it to the others.
    std::chrono::milliseconds tracker_retry_first{1000};
    std::chrono::milliseconds tracker_retry_max{8000};

    // --- peer rate ---
    // Only a peer with this many block requests outstanding shows what it can deliver; otherwise its rate
    // is our own demand, and sampling it would let our give-ups starve the estimate.
    int saturated_queue = 4;
    std::chrono::milliseconds rate_sample_interval{1000};  // libtorrent updates its rates once a second
    // Connected peers are read this often (and whenever their number changes): their rates and queues change
    // once a second, and reading them copies every peer's bitfield and costs a getsockname per peer.
    std::chrono::milliseconds peer_read_interval{1000};

    // --- the server fallback's fetch-ahead (the frontier viewer) ---
    // Pieces in the next this-much video that no viewer has are fetched ahead of need: they come from the
    // server anyway, and fetched early the viewers just behind take them from this one.
    std::chrono::nanoseconds fetch_ahead_window = std::chrono::seconds(8);

    // --- blocks left to the peers sending them ---
    // A server fetch of a piece peers are sending leaves them the blocks they will deliver anyway: those
    // among the first `committed_requests` of their peer's queue (arriving_blocks). Only when the piece is
    // due at least await_guard after the next tick, on top of the fetch estimate: whatever of them has not
    // arrived by the next tick is fetched then, still before the server's last moment.
    int committed_requests = 2;
    std::chrono::milliseconds await_guard{100};

    // --- player mode ---
    // A jump of more than about two seconds of media is a seek (at least four pieces, at most 4 MiB).
    std::chrono::nanoseconds seek_threshold_time = std::chrono::seconds(2);
    std::int32_t seek_threshold_min_pieces = 4;
    Bytes seek_threshold_max{4 * 1024 * 1024};
    // A player read waiting for a piece needed within this much media time of the playhead is urgent (the
    // server takes it at once). Players read far ahead of what they show (mpv a whole short title in half a
    // second); such reads wait for the swarm until half of player_wait_timeout has passed.
    std::chrono::nanoseconds urgent_read_lead = std::chrono::seconds(2);
    // Players read the last bytes of a container without an index (ffmpeg: the last 250 kB) for its
    // duration before they play: at most this much of the tail (and a quarter of the title) is such a probe.
    Bytes tail_probe_max{320 * 1024};

    // --- the core units ---
    HorizonConfig horizon;
    FallbackConfig fallback;  // ahead_window and max_ahead are derived from fetch_ahead_window per title
    PolicyConfig policy;      // seed is replaced by --seed
    AdaptiveConfig adaptive;  // --picker adaptive
    PlanApplierConfig applier;
    OperatorTierConfig operator_tier;
    std::size_t fidelity_top_k = 8;
};

}  // namespace toast::client
