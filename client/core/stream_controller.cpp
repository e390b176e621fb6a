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
      had_(geometry_.piece_count()),
      refused_(geometry_.piece_count()),
      stored_(geometry_.piece_count()),
      peer_owned_(geometry_.piece_count()) {
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
        snap.request_end =
            plan_buffer({geometry_, stored_, PieceIndex(0), *setup_.buffer_limit, Bytes(0)}).request_end;
    }
    auto plan = policy_->plan(snap);
    fidelity_.on_plan(plan.wanted);
    return plan;
}

void StreamController::on_ready(const PieceSet& on_disk, SteadyTime now) {
    ready_ = true;
    ready_at_ = now;
    for (auto p : on_disk.pieces())
        mark_had(p, now, false);
    completion_announced_ = had_.all();
}

void StreamController::mark_had(PieceIndex p, SteadyTime now, bool from_peer) {
    if (!geometry_.valid(p) || had_.has(p)) return;
    had_.set(p);
    refused_.clear(p);
    stored_.set(p);
    if (!first_piece_at_) first_piece_at_ = now;
    watcher_.on_piece_had(p, now);
    if (from_peer) fidelity_.on_arrival(p);
}

PieceArrival StreamController::on_piece_finished(PieceIndex p, SteadyTime now) {
    PieceArrival a;
    if (!geometry_.valid(p)) return a;
    a.new_piece = !had_.has(p);
    // Held for blocks peers were sending, and peers sent the rest too (a peer that ignores CANCELs), or the
    // server was asked for nothing of it.
    if (auto dropped = held_.drop(p)) {
        bytes_server_wasted_ += dropped->bytes.value();
        // Nothing asked of the server, nothing held: no fetch to stop.
        if (!dropped->request_running && dropped->bytes == Bytes(0)) fallback_.on_fetch_abandoned(p);
    }
    auto written = writing_.find(p);
    if (written != writing_.end()) {
        a.from_server = true;
        bytes_server_useful_ += written->second.bytes.value();
        if (written->second.bytes < geometry_.piece_size(p)) ++pieces_mixed_;
        fallback_.on_fetch_succeeded(p, now - written->second.started);
        writing_.erase(written);
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

bool StreamController::on_hash_failed(PieceIndex p, SteadyTime now) {
    // Peers' blocks failed the check while the server's bytes waited for them, or while the server was asked
    // nothing of the piece: it is fetched again as any other. (With a request of it running, its answer is
    // written as it is, fails the check, and the piece is fetched whole.)
    if (held_.holding(p) && !held_.request_running(p)) {
        bytes_server_wasted_ += held_.drop(p)->bytes.value();
        fallback_.on_fetch_abandoned(p);
    }
    auto written = writing_.find(p);
    if (written == writing_.end()) return false;
    ++hash_failures_;
    bytes_server_wasted_ += written->second.bytes.value();
    writing_.erase(written);
    fallback_.on_fetch_failed(p, now);
    return true;
}

bool StreamController::on_server_data(PieceIndex p, Bytes size, SteadyTime now) {
    auto started = fetching_.find(p);
    auto at = started != fetching_.end() ? started->second : now;
    if (started != fetching_.end()) fetching_.erase(started);
    if (!geometry_.valid(p) || had_.has(p)) {
        // A peer delivered it while the request was running.
        bytes_server_wasted_ += size.value();
        if (fallback_.in_flight(p)) fallback_.on_fetch_abandoned(p);
        return false;
    }
    // Held for the peers' blocks, or the blocks peers did not deliver in time: with them the piece is whole.
    if (auto whole = held_.on_server_data(p, size, now)) writing_[p] = {at, *whole};
    return true;
}

void StreamController::on_fetch_stopped(PieceIndex p, Bytes received) {
    fetching_.erase(p);
    bytes_server_wasted_ += received.value();
}

void StreamController::on_fetch_failed(PieceIndex p, FetchFault fault,
                                       const std::optional<UnavailableBytes>& unavailable) {
    if (fault != FetchFault::piece) return;
    if (geometry_.valid(p) && !had_.has(p)) refused_.set(p);
    if (!unavailable || unavailable->first >= geometry_.end()) return;
    // piece_at maps offsets beyond the end to the last piece.
    for (auto q = geometry_.piece_at(unavailable->first); q <= geometry_.piece_at(unavailable->last); ++q)
        if (!had_.has(q)) refused_.set(q);
}

void StreamController::on_fetch_refused(PieceIndex p) {
    fetching_.erase(p);
    held_.drop(p);
    fallback_.on_fetch_abandoned(p);
}

void StreamController::on_tracker_reply(int peers, SteadyTime now) {
    tracker_answered_ = true;
    if (!tracker_at_) tracker_at_ = now;
    // A swarm member that started just before us (the seed is still checking its files, a viewer is still
    // announcing) is missing from the answer, and the tracker's interval is long: until someone is found, ask
    // again soon, a bounded number of times. Meanwhile every piece would come from the server.
    if (peers == 0 && peers_.connected == 0 && empty_announces_ < tuning_.empty_announce_retries) {
        ++empty_announces_;
        reannounce_at_ = now + tuning_.empty_announce_delay;
    }
}

void StreamController::on_tracker_failed(SteadyTime now) {
    // Only until a first answer: with peers connected the swarm carries on without the tracker, and once
    // some tracker has answered, another one failing (a second tracker that is down) says nothing about the
    // swarm; libtorrent's backoff is then right.
    if (tracker_answered_ || peers_.connected > 0) return;
    const auto at =
        now + backoff_delay(++failed_announces_, tuning_.tracker_retry_first, tuning_.tracker_retry_max);
    if (!reannounce_at_ || at < *reannounce_at_) reannounce_at_ = at;
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

void StreamController::set_urgent_pieces(std::vector<PieceIndex> pieces) {
    urgent_extra_ = std::move(pieces);
}

void StreamController::on_stop(SteadyTime now) {
    watcher_.tick(now);
}

std::vector<PieceIndex> StreamController::urgent_pieces(const PieceSet& peer_owned) const {
    // A read-ahead piece peers are sending is theirs until the server's last moment, as for needed pieces.
    auto out = watcher_.urgent_reads({&peer_owned, fallback_.lead()});
    for (auto p : urgent_extra_)
        if (!had_.has(p)) out.push_back(p);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Bytes StreamController::stored_bytes() const {
    Bytes total{0};
    for (auto p : stored_.pieces())
        total += geometry_.piece_size(p);
    return total;
}

bool StreamController::should_leave() const {
    switch (setup_.behavior) {
        case Behavior::download:
            return had_.all();
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

    max_buffer_ = std::max(max_buffer_, stored_bytes().value());
    plan.leave = should_leave();
    return plan;
}

int StreamController::observe_peers(const SwarmSample& sample, ControllerPlan& plan) {
    const auto now = sample.now;
    // Discovery: an empty tracker answer is asked again while nobody is connected.
    peers_ = peer_figures(sample.peers, tuning_.saturated_queue);
    if (reannounce_at_ && now >= *reannounce_at_) {
        reannounce_at_.reset();
        plan.reannounce = peers_.connected == 0;
    }
    // Whichever way the last piece came (server or peers), the tracker hears of the new seed now.
    if (ready_ && !completion_announced_ && had_.all()) {
        completion_announced_ = true;
        plan.announce_completed = true;
    }

    // The rate a missing piece arrives at is what all our peers deliver together: libtorrent gives a
    // deadline piece's blocks to several peers at once. Taking one rate-limited peer's share (a seed shared
    // by every viewer) made the horizon grow to the whole title.
    if (now - last_rate_sample_ >= tuning_.rate_sample_interval) {
        if (peers_.saturated && peers_.rate > 0) horizon_.on_peer_rate(peers_.rate);
        // The tuner takes what peers delivered since the last sample, not libtorrent's per-peer rates: those
        // are five-second averages that start at zero for each new connection, so a newcomer read a
        // fraction of what its peers sent and took them for too slow for the in-order window for about ten
        // seconds.
        if (adaptive_ && peers_.saturated && last_delivered_ && sample.from_peers >= *last_delivered_) {
            const double seconds = std::chrono::duration<double>(now - last_rate_sample_).count();
            const double delivered = static_cast<double>((sample.from_peers - *last_delivered_).value());
            adaptive_->on_peer_ratio(delivered / seconds / bytes_per_second(geometry_.bitrate()));
        }
        last_rate_sample_ = now;
        last_delivered_ = sample.from_peers;
    }
    // Peers the tracker named but we are still connecting to count as peers, and until the first tracker
    // answer (at most discovery_grace) one peer is assumed: the policy keeps asking for pieces beyond the
    // horizon. With none at all the horizon is 0 and the server fetches just in time.
    const int known = std::max(peers_.connected, sample.known_peers);
    const bool discovering =
        !tracker_answered_ && setup_.has_trackers && now - started_ < tuning_.discovery_grace;
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
    for (const auto& [p, written] : writing_)
        incoming += geometry_.piece_size(p);
    for (auto p : fallback_.in_flight_pieces())
        incoming += geometry_.piece_size(p);
    auto bp = plan_buffer({geometry_, stored_, watcher_.playhead_piece(), *setup_.buffer_limit, incoming});
    for (auto p : bp.eject) {
        if (!stored_.clear(p)) continue;
        watcher_.on_piece_lost(p, now);
        ++ejected_;
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
    snap.had = had_;
    snap.in_flight = in_flight;
    snap.server_fetching = PieceSet(n);
    if (sample.server_up) {
        for (auto p : fallback_.in_flight_pieces())
            snap.server_fetching.set(p);
    }
    snap.availability = sample.availability;
    snap.refused = refused_;
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
    if (sample.server_up && setup_.has_server && peers_.connected > 0 && horizon_.samples() > 0) {
        admission_dropped_ +=
            drop_undeliverable(plan.pieces, snap, zone, horizon_.peer_delivery_time()).dropped;
    }
}

void StreamController::plan_server_fetches(const SwarmSample& sample, const PieceSet& in_flight, int known,
                                           const BufferRoom& buffer, ControllerPlan& plan) {
    const auto now = sample.now;
    const auto n = geometry_.piece_count();
    // "No viewer has it" counts only viewers: the operator's peers hold every piece.
    const auto by_viewers = viewer_availability(sample);
    // Pieces left to peers until the server's last moment: those asked of peers that a viewer holds, and
    // while peers are still being found (the tracker has not answered, or named peers we are connecting to),
    // every piece asked of peers.
    const bool finding_peers =
        setup_.has_trackers && now - started_ < tuning_.discovery_grace && (!tracker_answered_ || known > 0);
    PieceSet peer_owned(n);
    for (auto p : plan.pieces.wanted) {
        auto i = static_cast<std::size_t>(p.value());
        if (finding_peers || (i < by_viewers.size() && by_viewers[i] > 0)) peer_owned.set(p);
    }
    const bool peers_settled = now - started_ >= tuning_.discovery_grace && peers_.connected > 0;
    FallbackInput fin{had_, watcher_.playhead_piece(), geometry_.piece_duration(),
                      watcher_.into_playhead_piece(), horizon_.horizon_time(), urgent_pieces(peer_owned),
                      // "No peer has it" means nothing until peers had time to send their bitfields, nor
                      // while no peer is connected: every piece would qualify.
                      peers_settled ? &by_viewers : nullptr, buffer.request_end, buffer.suspend, &in_flight,
                      &peer_owned};
    bool is_late = false;
    if (setup_.has_server) {
        auto planned = fallback_.plan(fin, now);
        PieceSet fetched(n);
        int late = 0;
        for (const auto& f : planned) {
            if (f.reason == FetchReason::urgent) ++urgent_fetches_;
            // Left to peers until the server's last moment, or started by them, and they did not make it.
            if (f.reason != FetchReason::ahead && (peer_owned_.has(f.piece) || in_flight.has(f.piece)))
                ++late;
            fetching_[f.piece] = now;
            fetched.set(f.piece);
        }
        plan_parts(sample, planned);
        // What the server fetches now is no longer asked of peers (unless the server does not answer).
        if (!planned.empty() && sample.server_up) drop_from_plan(plan.pieces, fetched);
        plan.fetches.insert(plan.fetches.end(), planned.begin(), planned.end());
        late_pieces_ += static_cast<std::uint64_t>(late);
        is_late = late > 0;
    }
    peer_owned_ = std::move(peer_owned);
    plan_operator_tier(sample, peers_settled ? &by_viewers : nullptr, is_late, buffer, plan);
}

void StreamController::plan_operator_tier(const SwarmSample& sample, const std::vector<int>* by_viewers,
                                          bool late, const BufferRoom& buffer, ControllerPlan& plan) {
    // The fallback's reach: the pieces it fetches now when they are due, and ahead when no viewer holds them.
    const auto reach = fallback_.need_window(horizon_.horizon_time()) + tuning_.fetch_ahead_window;
    OperatorTierInput in{had_,
                         watcher_.playhead_piece(),
                         geometry_.piece_duration(),
                         watcher_.into_playhead_piece(),
                         reach,
                         by_viewers,
                         buffer.request_end,
                         peers_.connected - peers_.operator_peers,
                         late,
                         sample.now - started_};
    plan.ask_operator = operator_tier_.update(in, sample.now);
}

void StreamController::plan_parts(const SwarmSample& sample, std::vector<FallbackFetch>& fetches) {
    const auto now = sample.now;
    // A fetch with time to spare (not a player's read, nor a retry) leaves the blocks peers are sending to
    // them: what has not arrived by the next tick is fetched then (settle_held), and the time to spare must
    // hold a second fetch. Not while the server refuses pieces (a lost block, failing disks): its answers
    // then come late, and the tick's wait would come out of the piece's margin (the disks-offline drill
    // stalled twice as often).
    const auto await_until = 2 * fallback_.fetch_estimate() + tuning_.tick + tuning_.await_guard;
    const bool server_degraded = refused_.count().value() > 0;
    for (auto it = fetches.begin(); it != fetches.end();) {
        auto& f = *it;
        // A retry after a failure (perhaps a peer's block failed the check with the server's) is fetched
        // whole, as is the rest of a held piece.
        auto pp = std::find_if(sample.progress.begin(), sample.progress.end(),
                               [&](const PieceProgress& x) { return x.piece == f.piece; });
        if (f.revalidate || held_.holding(f.piece) || pp == sample.progress.end()) {
            ++it;
            continue;
        }
        const auto size = geometry_.piece_size(f.piece);
        const bool may_await = f.reason == FetchReason::needed && f.due >= await_until && !server_degraded;
        auto share = server_share(
            size, block_size, pp->delivered,
            may_await ? arriving_blocks(pp->delivered, pp->queue_position, tuning_.committed_requests)
                      : std::vector<bool>{});
        if (!share.awaited.empty()) {
            const bool nothing_asked = share.part.length == Bytes(0);
            held_.hold(f.piece, std::move(share.awaited), now, nothing_asked);
            if (nothing_asked) {
                // Every block peers have not delivered is on its way: no request.
                fetching_.erase(f.piece);
                it = fetches.erase(it);
                continue;
            }
        }
        if (share.part.length < size) f.part = share.part;
        ++it;
    }
}

void StreamController::settle_held(const SwarmSample& sample, ControllerPlan& plan) {
    const auto now = sample.now;
    auto settled = held_.settle(sample.progress, geometry_, now);
    for (const auto& r : settled.release) {
        plan.release.push_back(r.piece);
        writing_[r.piece] = {now - r.took, r.bytes};
    }
    // Late: the server sends those blocks too, now, at the piece's last moment.
    for (const auto& rest : settled.fetch) {
        plan.fetches.push_back(
            {rest.piece, FetchReason::needed, false, watcher_.time_until_needed(rest.piece), rest.part});
        fetching_[rest.piece] = now;
    }
}

void StreamController::fill_record(StatsRecord& r, SteadyTime now) const {
    r.bytes_server_useful = bytes_server_useful_;
    r.bytes_server_wasted = bytes_server_wasted_;
    r.bytes_from_server = r.bytes_server_useful + r.bytes_server_wasted;
    fill_playback(r, watcher_, now);
    auto since_start = [&](const std::optional<SteadyTime>& at) -> std::optional<std::int64_t> {
        if (!at) return std::nullopt;
        return duration_cast<milliseconds>(*at - started_).count();
    };
    r.session_ms = since_start(ready_at_);
    r.tracker_ms = since_start(tracker_at_);
    r.first_piece_ms = since_start(first_piece_at_);
    r.pieces_had = static_cast<std::uint32_t>(had_.count().value());
    r.buffer_bytes = stored_bytes().value();
    r.pieces_fetched_ahead = fallback_.fetched_ahead();
    r.fidelity = fidelity_.fidelity();
    r.completed = r.completed || had_.all();
    r.peers = static_cast<std::uint32_t>(peers_.connected);
    r.urgent_fetches = urgent_fetches_;
    r.inorder_window = window_;
    r.late_pieces = late_pieces_;
    r.pieces_mixed = pieces_mixed_;
    r.blocks_awaited = held_.blocks_awaited();
    r.blocks_awaited_late = held_.blocks_awaited_late();
    if (adaptive_) {
        r.adaptive_share = adaptive_->share();
        r.adaptive_peer_ratio = adaptive_->peer_ratio();
    }
}

}  // namespace toast::client
