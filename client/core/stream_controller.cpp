#include "client/core/stream_controller.hpp"

#include <algorithm>

#include "client/core/peer_admission.hpp"
#include "client/core/server_pool.hpp"

namespace toast::client {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

StreamWatcherConfig watcher_config_for(const ClientOptions& options, const TitleGeometry& geometry,
                                       const ClientTuning& tuning, ByteOffset start_offset) {
    StreamWatcherConfig c;
    c.startup_buffer = options.startup_buffer;
    if (options.command == ClientCommand::play) {
        c.mode = WatcherMode::player;
        c.start_offset = start_offset;
        auto by_time = bytes_in(geometry.bitrate(), tuning.seek_threshold_time);
        auto by_pieces = Bytes(geometry.piece_length().value() *
                               static_cast<std::uint64_t>(tuning.seek_threshold_min_pieces));
        c.seek_threshold = std::min(std::max(by_time, by_pieces), tuning.seek_threshold_max);
        c.urgent_lead = tuning.urgent_read_lead;
        c.read_patience = tuning.player_wait_timeout / 2;
    }
    return c;
}

ControllerSetup controller_setup_for(const ClientOptions& options, std::optional<Bytes> buffer_limit,
                                     bool has_server, bool has_trackers, StreamWatcherConfig watcher) {
    ControllerSetup s;
    s.picker = options.picker;
    s.behavior = options.behavior;
    s.inorder_window = options.inorder_window;
    s.lookahead = options.lookahead;
    s.buffer_limit = buffer_limit;
    s.has_server = has_server;
    s.has_trackers = has_trackers;
    s.seed = options.seed;
    s.upload_limit = options.upload_limit;
    s.ask_operator = options.ask_operator;
    s.watcher = watcher;
    return s;
}

FallbackConfig fallback_config_for(const TitleGeometry& geometry, const ClientTuning& tuning) {
    FallbackConfig c = tuning.fallback;
    c.ahead_window = tuning.fetch_ahead_window;
    c.max_ahead =
        std::max<std::size_t>(2, static_cast<std::size_t>(geometry.pieces_in(c.ahead_window).value()));
    return c;
}

namespace {

PolicyConfig policy_config(const ClientTuning& tuning, std::uint64_t seed) {
    PolicyConfig c = tuning.policy;
    c.seed = seed;
    return c;
}

}  // namespace

StreamController::StreamController(TitleGeometry geometry, ControllerSetup setup, const ClientTuning& tuning,
                                   SteadyTime start)
    : geometry_(geometry),
      setup_(std::move(setup)),
      tuning_(tuning),
      started_(start),
      watcher_(geometry_, setup_.watcher, start),
      horizon_(geometry_, tuning.horizon),
      fallback_(fallback_config_for(geometry_, tuning)),
      policy_(make_policy(setup_.picker, policy_config(tuning, setup_.seed))),
      fidelity_(tuning.fidelity_top_k),
      operator_tier_(tuning.operator_tier),
      pieces_(geometry_.piece_count()),
      server_(geometry_.piece_count()) {
    if (setup_.picker == PickerKind::adaptive) {
        std::optional<double> prior;
        if (setup_.upload_limit)
            prior = bytes_per_second(*setup_.upload_limit) / bytes_per_second(geometry_.bitrate());
        adaptive_.emplace(setup_.inorder_window, tuning.adaptive, prior);
    }
}

std::optional<PieceCount> StreamController::lookahead_pieces() const {
    if (!setup_.lookahead) return std::nullopt;
    return geometry_.pieces_in(*setup_.lookahead);
}

PieceCount StreamController::inorder_window_pieces() const {
    // The adaptive picker keeps the share of the in-order window its tuner chose, or the whole title.
    if (!adaptive_) return geometry_.pieces_in(setup_.inorder_window);
    if (adaptive_->whole_title()) return geometry_.piece_count();
    return geometry_.pieces_in(adaptive_->inorder_window());
}

bool StreamController::want_past_pieces() const {
    return setup_.behavior != Behavior::stream && !setup_.buffer_limit;
}

PiecePlan StreamController::initial_plan() {
    // Before any peer is known: playhead at the start, the give-up zone the server's last moment, as in
    // tick().
    SwarmSnapshot snap = SwarmSnapshot::empty(geometry_.piece_count());
    horizon_.set_peer_count(1);
    set_zone(snap, horizon_.pieces_within(fallback_.lead(), nanoseconds(0)), setup_.has_server);
    snap.inorder_window = inorder_window_pieces();
    snap.lookahead = lookahead_pieces();
    snap.want_past_pieces = want_past_pieces();
    snap.piece_duration = duration_cast<milliseconds>(geometry_.piece_duration());
    if (setup_.buffer_limit) {
        snap.request_end = plan_buffer({.geometry = geometry_,
                                        .stored = pieces_.stored,
                                        .playhead = PieceIndex(0),
                                        .limit = *setup_.buffer_limit,
                                        .incoming = Bytes(0)})
                               .request_end;
    }
    auto plan = policy_->plan(snap);
    fidelity_.on_plan(plan.wanted);
    return plan;
}

void StreamController::on_ready(const PieceSet& on_disk, SteadyTime now) {
    ready_ = true;
    startup_.ready_at = now;
    for (auto p : on_disk.pieces())
        mark_had(p, now, false);
    discovery_.completion_announced = pieces_.had.all();
}

void StreamController::mark_had(PieceIndex p, SteadyTime now, bool from_peer) {
    if (!geometry_.valid(p) || pieces_.had.has(p)) return;
    pieces_.had.set(p);
    server_.refused.clear(p);
    pieces_.stored.set(p);
    if (!startup_.first_piece_at) startup_.first_piece_at = now;
    watcher_.on_piece_had(p, now);
    if (from_peer) fidelity_.on_arrival(p);
}

PieceArrival StreamController::on_piece_finished(PieceIndex p, SteadyTime now) {
    PieceArrival a;
    if (!geometry_.valid(p)) return a;
    a.new_piece = !pieces_.had.has(p);
    // Held for blocks peers were sending, and peers sent the rest too (a peer that ignores CANCELs), or the
    // server was asked for nothing of it.
    if (auto dropped = server_.held.drop(p)) {
        counters_.bytes_server_wasted += dropped->bytes.value();
        // Nothing asked of the server, nothing held: no fetch to stop.
        if (!dropped->request_running && dropped->bytes == Bytes(0)) fallback_.on_fetch_abandoned(p);
    }
    auto written = server_.writing.find(p);
    if (written != server_.writing.end()) {
        a.from_server = true;
        counters_.bytes_server_useful += written->second.bytes.value();
        if (written->second.bytes < geometry_.piece_size(p)) ++counters_.pieces_mixed;
        fallback_.on_fetch_succeeded(p, now - written->second.started);
        server_.writing.erase(written);
        mark_had(p, now, false);
        return a;
    }
    // A server fetch of it still running is now wasted work.
    if (fallback_.in_flight(p)) {
        fallback_.on_fetch_abandoned(p);
        a.cancel_fetch = true;
    }
    mark_had(p, now, true);
    return a;
}

void StreamController::on_tracker_reply(int peers, SteadyTime now) {
    discovery_.tracker_answered = true;
    if (!startup_.tracker_at) startup_.tracker_at = now;
    // A swarm member that started just before us (the seed is still checking its files, a viewer is still
    // announcing) is missing from the answer, and the tracker's interval is long: until someone is found, ask
    // again soon, a bounded number of times. Meanwhile every piece would come from the server.
    if (peers == 0 && peers_.figures.connected == 0 &&
        discovery_.empty_announces < tuning_.empty_announce_retries) {
        ++discovery_.empty_announces;
        discovery_.reannounce_at = now + tuning_.empty_announce_delay;
    }
}

void StreamController::on_tracker_failed(SteadyTime now) {
    // Only until a first answer: with peers connected the swarm carries on without the tracker, and once
    // some tracker has answered, another one failing (a second tracker that is down) says nothing about the
    // swarm; libtorrent's backoff is then right.
    if (discovery_.tracker_answered || peers_.figures.connected > 0) return;
    const auto at = now + backoff_delay(++discovery_.failed_announces, tuning_.tracker_retry_first,
                                        tuning_.tracker_retry_max);
    if (!discovery_.reannounce_at || at < *discovery_.reannounce_at) discovery_.reannounce_at = at;
}

ReadKind StreamController::on_player_read(ByteOffset offset, Bytes length, SteadyTime now,
                                          bool continuation) {
    return watcher_.on_player_read(offset, length, now, continuation);
}

void StreamController::on_reported_position(nanoseconds media_time, SteadyTime now) {
    watcher_.on_reported_position(media_time, now);
}

void StreamController::on_reported_pause(bool paused, SteadyTime now) {
    watcher_.on_reported_pause(paused, now);
}

void StreamController::set_index_range(ByteOffset begin, ByteOffset end) {
    watcher_.set_index_range(begin, end);
}

void StreamController::on_stop(SteadyTime now) {
    watcher_.tick(now);
}

Bytes StreamController::stored_bytes() const {
    // Every piece is piece_length long but the last: counted, not walked (it is asked every tick).
    const auto n = static_cast<std::uint64_t>(pieces_.stored.count().value());
    if (!pieces_.stored.has(geometry_.last_piece())) return Bytes(n * geometry_.piece_length().value());
    return Bytes((n - 1) * geometry_.piece_length().value() + geometry_.last_piece_size().value());
}

bool StreamController::should_leave() const {
    switch (setup_.behavior) {
        case Behavior::download:
            return pieces_.had.all();
        case Behavior::stream:
            return watcher_.reached_end();
        case Behavior::seed:
            return false;
    }
    return false;
}

ControllerPlan StreamController::tick(const SwarmSample& sample) {
    ControllerPlan plan;
    watcher_.tick(sample.now);
    const int known = observe_peers(sample, plan);
    Bytes incoming{0};
    const PieceSet in_flight = observe_in_flight(sample, incoming);
    const auto buffer = plan_buffer_room(incoming, sample.now, plan);
    // Peer policy first: which pieces peers are asked for decides which ones the server leaves to them.
    plan_peer_pieces(sample, in_flight, buffer.request_end, plan);
    settle_held(sample, plan);
    plan_server_fetches(sample, in_flight, known, buffer, plan);
    fidelity_.on_plan(plan.pieces.wanted);
    plan.apply_pieces = !buffer.suspend;

    counters_.max_buffer_bytes = std::max(counters_.max_buffer_bytes, stored_bytes().value());
    plan.leave = should_leave();
    return plan;
}

int StreamController::observe_peers(const SwarmSample& sample, ControllerPlan& plan) {
    const auto now = sample.now;
    // Discovery: an empty tracker answer is asked again while nobody is connected.
    peers_.figures = peer_figures(sample.peers, tuning_.saturated_queue);
    if (discovery_.reannounce_at && now >= *discovery_.reannounce_at) {
        discovery_.reannounce_at.reset();
        plan.reannounce = peers_.figures.connected == 0;
    }
    // Whichever way the last piece came (server or peers), the tracker hears of the new seed now.
    if (ready_ && !discovery_.completion_announced && pieces_.had.all()) {
        discovery_.completion_announced = true;
        plan.announce_completed = true;
    }

    // The rate a missing piece arrives at is what all our peers deliver together: libtorrent gives a
    // deadline piece's blocks to several peers at once. Taking one rate-limited peer's share (a seed shared
    // by every viewer) would make the horizon grow to the whole title.
    if (now - peers_.last_sample >= tuning_.rate_sample_interval) {
        if (peers_.figures.saturated && peers_.figures.rate > 0) horizon_.on_peer_rate(peers_.figures.rate);
        // The tuner takes what peers delivered since the last sample, not libtorrent's per-peer rates: those
        // are five-second averages that start at zero for each new connection, so a newcomer would read a
        // fraction of what its peers send and take them for too slow for the in-order window while those
        // averages fill.
        if (adaptive_ && peers_.figures.saturated && peers_.last_delivered &&
            sample.from_peers >= *peers_.last_delivered) {
            const double seconds = std::chrono::duration<double>(now - peers_.last_sample).count();
            const double delivered =
                static_cast<double>((sample.from_peers - *peers_.last_delivered).value());
            const double ratio = delivered / seconds / bytes_per_second(geometry_.bitrate());
            const auto& f = peers_.figures;
            // The idle peers' part, by their rates; before libtorrent has rated any peer (its rates start at
            // zero with each connection), by their count.
            const double idle_part = f.rate > 0        ? f.idle_rate / f.rate
                                     : f.connected > 0 ? static_cast<double>(f.idle) / f.connected
                                                       : 0.0;
            adaptive_->on_peer_ratio(ratio, ratio * idle_part);
        }
        peers_.last_sample = now;
        peers_.last_delivered = sample.from_peers;
    }
    // Peers the tracker named but we are still connecting to count as peers, and until the first tracker
    // answer (at most discovery_grace) one peer is assumed: the policy keeps asking for pieces beyond the
    // horizon. With none at all the horizon is 0 and the server fetches just in time.
    const int known = std::max(peers_.figures.connected, sample.known_peers);
    const bool discovering =
        !discovery_.tracker_answered && setup_.has_trackers && now - started_ < tuning_.discovery_grace;
    horizon_.set_peer_count(std::max(known, discovering ? 1 : 0));
    return known;
}

PieceSet StreamController::observe_in_flight(const SwarmSample& sample, Bytes& incoming) {
    PieceSet in_flight(geometry_.piece_count());
    for (auto p : sample.in_flight) {
        if (!geometry_.valid(p)) continue;
        in_flight.set(p);
        incoming += geometry_.piece_size(p);
    }
    return in_flight;
}

StreamController::BufferRoom StreamController::plan_buffer_room(Bytes incoming, SteadyTime now,
                                                                ControllerPlan& plan) {
    // Bounded buffer: stored pieces plus every piece on its way must fit.
    BufferRoom room;
    if (!setup_.buffer_limit) return room;
    for (const auto& [p, written] : server_.writing)
        incoming += geometry_.piece_size(p);
    for (auto p : fallback_.in_flight_pieces())
        incoming += geometry_.piece_size(p);
    auto bp = plan_buffer({.geometry = geometry_,
                           .stored = pieces_.stored,
                           .playhead = watcher_.playhead_piece(),
                           .limit = *setup_.buffer_limit,
                           .incoming = incoming});
    for (auto p : bp.eject) {
        if (!pieces_.stored.clear(p)) continue;
        watcher_.on_piece_lost(p, now);
        ++counters_.pieces_ejected;
        plan.eject.push_back(p);
    }
    room.suspend = bp.suspend;
    room.request_end = bp.request_end;
    if (room.suspend != suspended_) {
        plan.upload_mode = room.suspend;
        suspended_ = room.suspend;
    }
    return room;
}

void StreamController::plan_peer_pieces(const SwarmSample& sample, const PieceSet& in_flight,
                                        std::optional<PieceIndex> request_end, ControllerPlan& plan) {
    const auto n = geometry_.piece_count();
    SwarmSnapshot snap;
    snap.piece_count = n;
    snap.had = pieces_.had;
    snap.in_flight = in_flight;
    snap.server_fetching = PieceSet(n);
    if (sample.server_up) {
        for (auto p : fallback_.in_flight_pieces())
            snap.server_fetching.set(p);
    }
    snap.availability = sample.availability;
    snap.refused = server_.refused;
    snap.playhead = watcher_.playhead_piece();
    // The give-up zone is the server's last moment (fetch estimate + margin): closer pieces are the server's.
    // Farther ones are asked of peers as far as they can deliver them (admission below), and the server takes
    // those only at their last moment, unless peers sending them fall behind. Without a server to reach, the
    // zone's pieces are the most urgent ones peers have: first, in playback order, with deadlines, whatever
    // the picker (a random draw would put later pieces before the one playback waits for).
    const auto zone = fallback_.lead();
    set_zone(snap, horizon_.pieces_within(zone, watcher_.into_playhead_piece()), sample.server_up);
    snap.inorder_window = inorder_window_pieces();
    snap.request_end = request_end;
    snap.lookahead = lookahead_pieces();
    snap.want_past_pieces = want_past_pieces();
    snap.piece_duration = duration_cast<milliseconds>(geometry_.piece_duration());
    snap.into_playhead_piece = duration_cast<milliseconds>(watcher_.into_playhead_piece());
    plan.horizon = snap.horizon;

    // The pieces kept in order now: [playhead, playhead + window) for hybrid, the rest for inorder.
    window_.reset();
    if (setup_.picker == PickerKind::inorder || setup_.picker == PickerKind::hybrid ||
        setup_.picker == PickerKind::adaptive) {
        auto last = setup_.picker == PickerKind::inorder
                        ? n.value() - 1
                        : std::min(snap.playhead.value() + snap.inorder_window.value(), n.value()) - 1;
        if (snap.playhead.value() <= last) window_ = std::pair{snap.playhead.value(), last};
    }
    plan.pieces = policy_->plan(snap);
    // Nothing is asked of peers that they cannot deliver before the server's last moment, at the rate they
    // were measured delivering. Before the first measurement peers are given the chance: the server still
    // takes each piece at its last moment.
    if (sample.server_up && setup_.has_server && peers_.figures.connected > 0 && horizon_.samples() > 0) {
        counters_.admission_dropped +=
            drop_undeliverable(plan.pieces, snap, zone, horizon_.peer_delivery_time()).dropped;
    }
}

void StreamController::fill_record(StatsRecord& r, SteadyTime now) const {
    static_cast<RecordedCounters&>(r) = counters_;
    r.bytes_from_server = r.bytes_server_useful + r.bytes_server_wasted;
    fill_playback(r, watcher_, now);
    auto since_start = [&](const std::optional<SteadyTime>& at) -> std::optional<std::int64_t> {
        if (!at) return std::nullopt;
        return duration_cast<milliseconds>(*at - started_).count();
    };
    r.session_ms = since_start(startup_.ready_at);
    r.tracker_ms = since_start(startup_.tracker_at);
    r.first_piece_ms = since_start(startup_.first_piece_at);
    r.pieces_had = static_cast<std::uint32_t>(pieces_.had.count().value());
    r.buffer_bytes = stored_bytes().value();
    r.pieces_fetched_ahead = fallback_.fetched_ahead();
    r.fidelity = fidelity_.fidelity();
    r.completed = r.completed || pieces_.had.all();
    r.peers = static_cast<std::uint32_t>(peers_.figures.connected);
    r.inorder_window = window_;
    r.blocks_awaited = server_.held.blocks_awaited();
    r.blocks_awaited_late = server_.held.blocks_awaited_late();
    if (adaptive_) {
        r.adaptive_share = adaptive_->share();
        r.adaptive_peer_ratio = adaptive_->peer_ratio();
    }
}

}  // namespace toast::client
