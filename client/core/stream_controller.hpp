// The streaming client's decisions for one title, in one pure unit: each tick it reads a SwarmSample and
// returns a ControllerPlan (server fetches, the piece plan for peers, ejections, suspend, re-announce,
// leave); between ticks it is told what happened (a piece passed its hash check, server bytes arrived, the
// tracker answered, the player read). It owns the title's StreamWatcher, give-up horizon, server fallback
// planner, piece policy and fidelity meter, and the record of what is had and stored. Time comes in with
// every call; nothing here touches libtorrent, sockets or files (docs/client-rules.md lists each rule and
// why).
// stream_controller.cpp holds the tick and the peers' side; stream_controller_fetches.cpp the server's side
// (what the server is asked for, and what becomes of its answers).
//
// Invariants: stored() is a subset of had(); a piece is fetched from the server at most once at a time; a
// piece handed to the adapter to write (on_server_data true) is counted useful or wasted exactly once, when
// its hash check passes or fails; the plan's pieces never include a had piece.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "client/core/adaptive_tuner.hpp"
#include "client/core/buffer_planner.hpp"
#include "client/core/client_options.hpp"
#include "client/core/client_tuning.hpp"
#include "client/core/fallback_planner.hpp"
#include "client/core/fidelity.hpp"
#include "client/core/give_up_horizon.hpp"
#include "client/core/held_pieces.hpp"
#include "client/core/operator_tier.hpp"
#include "client/core/piece_policy.hpp"
#include "client/core/server_request.hpp"
#include "client/core/stats.hpp"
#include "client/core/stream_counters.hpp"
#include "client/core/stream_watcher.hpp"
#include "client/core/swarm_sample.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

// What the user chose for this title (from ClientOptions), resolved against the title.
struct ControllerSetup {
    PickerKind picker = PickerKind::hybrid;
    Behavior behavior = Behavior::stream;
    std::chrono::nanoseconds inorder_window = std::chrono::minutes(15);
    std::optional<std::chrono::nanoseconds> lookahead;  // absent: peers are asked for the whole title
    std::optional<Bytes> buffer_limit;  // resolved and checked (check_buffer_limit); absent: unbounded
    bool has_server = true;             // at least one server URL: without one the client is plain BitTorrent
    bool has_trackers = true;           // a tracker will answer: until it does, one peer is assumed
    std::uint64_t seed = 1;             // the policy's random seed
    // This client's upload cap (--upload-limit); absent: unlimited. The adaptive picker assumes its peers
    // deliver as much until it has measured them.
    std::optional<BitRate> upload_limit;
    // --ask-operator: always asks the operator's peers for pieces, when_needed as OperatorTier decides.
    AskOperator ask_operator = AskOperator::when_needed;
    StreamWatcherConfig watcher;
};

// The watcher's configuration for `options` (mode, startup buffer, the seek threshold in player mode);
// `start_offset` is where a resumed title starts.
StreamWatcherConfig watcher_config_for(const ClientOptions& options, const TitleGeometry& geometry,
                                       const ClientTuning& tuning, ByteOffset start_offset);
// The setup for `options`. Throws nothing: the buffer limit must already be resolved and checked.
ControllerSetup controller_setup_for(const ClientOptions& options, std::optional<Bytes> buffer_limit,
                                     bool has_server, bool has_trackers, StreamWatcherConfig watcher);
// The fallback's configuration for this title: tuning.fallback with the fetch-ahead window applied (at least
// two pieces ahead).
FallbackConfig fallback_config_for(const TitleGeometry& geometry, const ClientTuning& tuning);

// What a finished piece was.
struct PieceArrival {
    bool from_server = false;  // the server's bytes passed the hash check
    bool new_piece = false;    // it was not had before
    // A peer delivered a piece the server was still fetching: stop the fetch (then on_fetch_stopped).
    bool cancel_fetch = false;
};

class StreamController {
  public:
    // `start` is the client's launch: startup and its breakdown are measured from it.
    StreamController(TitleGeometry geometry, ControllerSetup setup, const ClientTuning& tuning,
                     SteadyTime start);

    // The plan the torrent is added with, before any sample: otherwise libtorrent picks in its own order
    // until the first tick, and on a fast swarm that can be the whole title.
    PiecePlan initial_plan();

    // --- events ---
    // The torrent is checked; `on_disk` are the pieces already there (a seed, or a resumed download).
    void on_ready(const PieceSet& on_disk, SteadyTime now);
    PieceArrival on_piece_finished(PieceIndex p, SteadyTime now);
    // True when the failed piece was the server's (it is fetched again after a backoff); a peer's bad data
    // is libtorrent's business.
    bool on_hash_failed(PieceIndex p, SteadyTime now);
    // The server's bytes for `p` arrived. True: keep them: write them into the torrent now (the hash check
    // reports back through on_piece_finished or on_hash_failed), or, while holding(p), hold them until a
    // tick's plan releases the piece (ControllerPlan::release) or fetches the rest of it. False: a peer was
    // faster, the bytes are wasted.
    bool on_server_data(PieceIndex p, Bytes size, SteadyTime now);
    // The server's bytes for `p` wait for blocks peers are sending: a server fetch left them out
    // (server_share), and add_piece would write over a block that has not arrived yet.
    bool holding(PieceIndex p) const { return server_.held.holding(p); }
    // The fetcher would not take a planned fetch (it is already running one for the piece).
    void on_fetch_refused(PieceIndex p);
    // A fetch of `p` failed and the fetcher tries it again after a backoff. One the server refused
    // (FetchFault::piece: it is up, but cannot serve this piece now) is asked of peers first, with a
    // deadline, until it arrives, wherever it is; a server that failed as a whole gives its zone to peers
    // anyway (SwarmSample::server_up).
    // A refusal that named the bytes the server cannot serve (a block it lost) refuses every piece in them:
    // they are asked of peers now, not each at its own last moment.
    void on_fetch_failed(PieceIndex p, FetchFault fault,
                         const std::optional<UnavailableBytes>& unavailable = std::nullopt);
    // A fetch stopped after a peer delivered its piece (PieceArrival::cancel_fetch), `received` of its
    // bytes already here: they are wasted.
    void on_fetch_stopped(PieceIndex p, Bytes received);
    void on_tracker_reply(int peers, SteadyTime now);
    // An announce failed (the tracker could not be reached, or refused it). Until some tracker has answered
    // and while nobody is connected, the tracker is asked again soon (tracker_retry_first, doubling).
    void on_tracker_failed(SteadyTime now);
    // Player mode: see StreamWatcher::on_player_read.
    ReadKind on_player_read(ByteOffset offset, Bytes length, SteadyTime now, bool continuation);
    // Player mode: the player's own position and pause state (mpv's IPC); see StreamWatcher.
    void on_reported_position(std::chrono::nanoseconds media_time, SteadyTime now);
    void on_reported_pause(bool paused, SteadyTime now);
    // Player mode: the container's index lies in [begin, end) (reads there are not the viewer's position).
    void set_index_range(ByteOffset begin, ByteOffset end);
    // Pieces the server fetches at once whatever the swarm holds (the title's head and its MP4 index).
    void set_urgent_pieces(std::vector<PieceIndex> pieces);
    // The client stops now: the watcher catches up to `now` for the summary.
    void on_stop(SteadyTime now);

    // --- the tick ---
    ControllerPlan tick(const SwarmSample& sample);

    // --- queries ---
    const StreamWatcher& watcher() const { return watcher_; }
    const TitleGeometry& geometry() const { return geometry_; }
    const PieceSet& had() const { return pieces_.had; }
    const PieceSet& stored() const { return pieces_.stored; }
    Bytes stored_bytes() const;
    bool ready() const { return ready_; }
    std::optional<Bytes> buffer_limit() const { return setup_.buffer_limit; }
    const GiveUpHorizon& horizon() const { return horizon_; }
    const FallbackPlanner& fallback() const { return fallback_; }
    // Whether the operator's peers are asked for pieces now, and why (ControllerPlan::ask_operator).
    const OperatorTier& operator_tier() const { return operator_tier_; }
    int connected_peers() const { return peers_.figures.connected; }
    const StreamCounters& counters() const { return counters_; }
    std::uint64_t hash_failures() const { return counters_.hash_failures; }
    std::uint64_t ejected() const { return counters_.pieces_ejected; }
    std::uint64_t max_buffer_bytes() const { return counters_.max_buffer_bytes; }
    std::uint64_t admission_dropped() const { return counters_.admission_dropped; }
    // The adaptive picker's tuner (absent for the fixed pickers).
    const std::optional<AdaptiveTuner>& adaptive() const { return adaptive_; }
    // Pieces the server fetched at their last moment although peers were asked for them and a viewer held
    // them: the peers were late (every picker counts them; the adaptive one learns from them).
    std::uint64_t late_pieces() const { return counters_.late_pieces; }
    // The pieces [first, last] picked in order now (inorder, hybrid, adaptive), else absent.
    std::optional<std::pair<std::int32_t, std::int32_t>> inorder_window() const { return window_; }
    // The controller's part of a stats record: server bytes it counted (useful, and wasted excluding what
    // the transport rejected), playback, pieces, buffer, fetch-ahead, fidelity, peers, urgent fetches, the
    // in-order window. The adapter adds libtorrent's byte totals and the player's figures.
    void fill_record(StatsRecord& r, SteadyTime now) const;

  private:
    // The tick's steps, in order. Each adds its part to `plan`.
    // Peer figures, discovery (re-announce, completion), the horizon's rate and peer count; returns the
    // peers known (connected, or named and being connected to).
    int observe_peers(const SwarmSample& sample, ControllerPlan& plan);
    // The pieces peers are sending; adds their sizes to `incoming`.
    PieceSet observe_in_flight(const SwarmSample& sample, Bytes& incoming);
    // The bounded buffer's ejections and suspension, given the bytes on their way.
    struct BufferRoom {
        std::optional<PieceIndex> request_end;  // nothing at or beyond it is requested
        bool suspend = false;                   // downloading suspended (the buffer is full)
    };
    BufferRoom plan_buffer_room(Bytes incoming, SteadyTime now, ControllerPlan& plan);
    // What peers are asked for: the policy's plan, less what they cannot deliver in time.
    void plan_peer_pieces(const SwarmSample& sample, const PieceSet& in_flight,
                          std::optional<PieceIndex> request_end, ControllerPlan& plan);
    // Fetches of pieces peers have sent blocks of ask the server only for the rest, and leave the blocks
    // peers are sending now to them when the piece's time allows (server_share); such a piece is held.
    void plan_parts(const SwarmSample& sample, std::vector<FallbackFetch>& fetches);
    // Held pieces, at the first tick after their fetch started: released when the blocks they wait for
    // arrived, else those blocks are fetched too.
    void settle_held(const SwarmSample& sample, ControllerPlan& plan);
    // What the server fetches now, taken out of the peers' plan.
    void plan_server_fetches(const SwarmSample& sample, const PieceSet& in_flight, int known,
                             const BufferRoom& buffer, ControllerPlan& plan);
    // Whether the operator's peers are asked for pieces: when the server fallback would go to the server.
    void plan_operator_tier(const SwarmSample& sample, const std::vector<int>* by_viewers, bool late,
                            const BufferRoom& buffer, ControllerPlan& plan);

    void mark_had(PieceIndex p, SteadyTime now, bool from_peer);
    std::vector<PieceIndex> urgent_pieces(const PieceSet& peer_owned) const;
    PieceCount inorder_window_pieces() const;
    bool want_past_pieces() const;
    std::optional<PieceCount> lookahead_pieces() const;  // the setup's lookahead in pieces, rounded up
    bool should_leave() const;

    // The title's pieces.
    struct Pieces {
        explicit Pieces(PieceCount n) : had(n), stored(n) {}
        PieceSet had;     // ever had
        PieceSet stored;  // had and not ejected
    };
    // Startup's breakdown, each from the controller's start (the client's launch).
    struct Startup {
        std::optional<SteadyTime> ready_at;
        std::optional<SteadyTime> tracker_at;
        std::optional<SteadyTime> first_piece_at;
    };
    // Finding peers: the tracker's answers and the announces they call for.
    struct Discovery {
        bool tracker_answered = false;
        bool completion_announced = false;  // or a seed from the start, which libtorrent announces as one
        int empty_announces = 0;
        int failed_announces = 0;  // before the first answer
        std::optional<SteadyTime> reannounce_at;
    };
    // What peers deliver, sampled every rate_sample_interval.
    struct PeerSampling {
        PeerFigures figures;  // the last tick's
        SteadyTime last_sample{};
        std::optional<Bytes> last_delivered;  // what peers had delivered at last_sample
    };
    // Server fetches: started (request queued or running) and written (add_piece done, hash check pending),
    // each with the time the fetch started; written ones with the bytes the server sent.
    struct Written {
        SteadyTime started;
        Bytes bytes;
    };
    struct ServerFetches {
        explicit ServerFetches(PieceCount n) : refused(n), peer_owned(n) {}
        std::map<PieceIndex, SteadyTime> fetching;
        std::map<PieceIndex, Written> writing;
        HeldPieces held;                       // fetches that left blocks to the peers sending them
        PieceSet refused;                      // the server refused them (on_fetch_failed), not arrived yet
        PieceSet peer_owned;                   // last tick's: asked of peers, held by a viewer
        std::vector<PieceIndex> urgent_extra;  // set_urgent_pieces
    };

    // What the controller was given.
    TitleGeometry geometry_;
    ControllerSetup setup_;
    ClientTuning tuning_;
    SteadyTime started_;
    // The decisions it delegates.
    StreamWatcher watcher_;
    GiveUpHorizon horizon_;
    FallbackPlanner fallback_;
    std::unique_ptr<PiecePolicy> policy_;
    std::optional<AdaptiveTuner> adaptive_;
    FidelityMeter fidelity_;
    OperatorTier operator_tier_;
    // Its state.
    Pieces pieces_;
    bool ready_ = false;
    bool suspended_ = false;  // by the bounded buffer
    Startup startup_;
    Discovery discovery_;
    PeerSampling peers_;
    ServerFetches server_;
    StreamCounters counters_;
    // The pieces [first, last] picked in order now (inorder_window()).
    std::optional<std::pair<std::int32_t, std::int32_t>> window_;
};

}  // namespace toast::client
