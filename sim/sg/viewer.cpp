#include "sim/sg/viewer.hpp"

#include <algorithm>
#include <cmath>

#include "client/core/choker.hpp"
#include "sim/sg/viewer_session.hpp"

namespace toast::sim {
namespace viewer_detail {

Viewer::Viewer(World& world, ViewerPlan plan)
    : world_(world),
      plan_(std::move(plan)),
      title_(world.title(plan_.title)),
      swarm_(*title_.swarm),
      geometry_(title_.geometry),
      host_(world.host_of(plan_.box)),
      applier_(geometry_.piece_count(), world.client_tuning().applier),
      control_(swarm_, plan_.box),
      from_server_(geometry_.piece_count()) {}

void Viewer::run() {
    const double t0 = now();
    const auto& tuning = world_.client_tuning();
    std::optional<Bytes> limit;
    if (plan_.options.buffer_limit) limit = plan_.options.buffer_limit->resolve(geometry_.total_size());
    auto setup = client::controller_setup_for(
        plan_.options, limit, true, true,
        client::watcher_config_for(plan_.options, geometry_, tuning, client::ByteOffset(0)));
    ctl_ = std::make_unique<client::StreamController>(geometry_, setup, tuning, at(t0));
    self_ = &swarm_.join(plan_.box, member_setup_for(plan_.options));
    swarm_.start_download(plan_.box);
    uploaded_at_start_ = world_.uploaded(plan_.box);
    // The torrent is added with the first plan's priorities.
    auto first = ctl_->initial_plan();
    for (std::size_t p = 0; p < first.priority.size(); ++p)
        if (first.priority[p] != 4) swarm_.set_priority(plan_.box, static_cast<int>(p), first.priority[p]);
    applier_.assume_applied(first.priority);
    rec_.box = plan_.box;
    rec_.title = plan_.title;
    rec_.start_s = t0;
    rec_.watch_s = plan_.watch_s.value_or(std::chrono::duration<double>(geometry_.title_duration()).count());
    rec_.upload_cap_bps = plan_.upload_cap_bps;
    inbox_ = std::make_shared<Inbox>(sg4::Actor::self());
    world_.listen(plan_.box, inbox_);
    arm_bell();
    announce(t0, false);
    next_tick_ = t0;
    last_rate_ = t0;
    while (!done_) {
        const double t = now();
        const double wake = next_wake(t);
        if (wake > t) {
            const bool none_yet = inbox_->arrived.empty();
            inbox_->wait(wake - t);
            if (auto i = take_arrival(none_yet)) {
                ++world_.events;
                on_flow_done(*i, now());
                continue;
            }
        }
        ++world_.events;
        const double t1 = now();
        if (tracker_reply_at_ && *tracker_reply_at_ <= t1) {
            tracker_reply_at_.reset();
            int connected = 0;
            for (BoxId b : named_)
                if (swarm_.connect(plan_.box, b, t1) || swarm_.connected(plan_.box, b)) ++connected;
            ctl_->on_tracker_reply(static_cast<int>(named_.size()), at(t1));
            pump(t1);
        }
        while (!disk_ready_.empty() && disk_ready_.begin()->first <= t1) {
            const int piece = disk_ready_.begin()->second;
            disk_ready_.erase(disk_ready_.begin());
            send_fetch(piece, t1);
        }
        if (t1 >= next_tick_ - 1e-9 || (deadline_at_ && t1 >= *deadline_at_ - 1e-9)) {
            tick();
            if (t1 >= next_tick_ - 1e-9) next_tick_ = t1 + world_.tuning().tick_s;
        }
        if (world_.tuning().end_s > 0 && t1 >= world_.tuning().end_s) finish(t1);
    }
}

double Viewer::next_wake(double t) {
    double wake = next_tick_;
    deadline_at_.reset();
    if (tracker_reply_at_) wake = std::min(wake, *tracker_reply_at_);
    if (!disk_ready_.empty()) wake = std::min(wake, disk_ready_.begin()->first);
    if (world_.tuning().end_s > 0) wake = std::min(wake, world_.tuning().end_s);
    if (world_.tuning().deadline_wakeups && ready_ && world_.tuning().tick_s > kClientTick) {
        // The fallback fetches a missing piece once its deadline is inside the need window (horizon + fetch
        // estimate + margin), or, for a piece left to peers, at its last moment (estimate + margin): with
        // ticks longer than that margin such a moment would pass between two ticks. Wake at the next of
        // them for the first few missing pieces the server is not already fetching.
        const auto& w = ctl_->watcher();
        if (w.state() == client::PlaybackState::playing) {
            const auto& fb = ctl_->fallback();
            const double window =
                std::chrono::duration<double>(fb.need_window(ctl_->horizon().horizon_time())).count();
            const double lead = std::chrono::duration<double>(fb.lead()).count();
            const auto& had = ctl_->had();
            int looked = 0;
            // A title held whole (a warm cache's) has no missing piece: no walk to its end at every wake-up.
            for (auto p = w.playhead_piece();
                 !had.all() && p.value() < geometry_.piece_count().value() && looked < 4; ++p) {
                if (had.has(p) || fb.in_flight(p)) continue;
                ++looked;
                const double until = std::chrono::duration<double>(w.time_until_needed(p)).count();
                // A millisecond past the moment: at the moment itself the fallback's comparison may still
                // fail.
                for (double due : {t + until - window + 0.001, t + until - lead + 0.001}) {
                    if (due > t + 1e-4 && due < wake) {
                        wake = due;
                        deadline_at_ = due;
                    }
                }
            }
        }
    }
    return std::max(wake, t);
}

void Viewer::tick() {
    const double t = now();
    ++world_.controller_ticks;
    if (!ready_) {
        ready_ = true;
        ctl_->on_ready(member().have.to_piece_set(), at(t));
        for (auto p : ctl_->had().pieces())
            applier_.on_piece_had(p);
    }
    prefetch_flows();
    if (t - last_rate_ >= world_.tuning().rate_interval_s) measure_rates(t);
    // The sample lends the member's availability to the controller for its tick (no copy of a count per
    // piece): nothing else runs meanwhile.
    auto& s = sample(t);
    s.availability.swap(member().availability);
    auto plan = ctl_->tick(s);
    s.availability.swap(member().availability);
    apply(plan, t);
    set_choker_position();
    pump(t);
    // A seeding viewer's process stays in the swarm; its session (what the report counts) ends with playback.
    bool leave =
        plan.leave || (plan_.options.behavior == client::Behavior::seed && ctl_->watcher().reached_end());
    if (plan_.watch_s) {
        const auto played =
            std::chrono::duration<double>(geometry_.media_time_at(ctl_->watcher().playhead())).count();
        if (played >= *plan_.watch_s - 1e-6) leave = true;
    }
    if (leave) finish(t);
}

// Where the viewer stands for its choker after each tick, as the client's TitleStream::choker_position.
void Viewer::set_choker_position() {
    auto& m = member();
    const auto chain = client::chain_position(ctl_->watcher(), geometry_, plan_.options.upload_limit);
    m.playhead = chain.playhead;
    m.chain_gap = chain.min_gap;
}

void Viewer::apply(const client::ControllerPlan& plan, double t) {
    for (auto p : plan.eject)
        swarm_.on_lost(plan_.box, p.value());
    if (plan.upload_mode) member().upload_mode = *plan.upload_mode;
    member().operator_wanted = plan.ask_operator;
    for (auto p : plan.release)
        piece_finished(p.value(), true, t);
    for (const auto& f : plan.fetches)
        start_fetch(f, t);
    if (plan.apply_pieces) {
        control_.set_now(t);
        const auto ms = static_cast<std::int64_t>(std::llround((t - rec_.start_s) * 1000));
        applier_.apply(plan.pieces, ctl_->had(), ms, control_);
    }
    if (plan.reannounce) announce(t, false);
    if (plan.announce_completed) announce(t, true);
}

void Viewer::announce(double t, bool completed) {
    const auto& m = member();
    const std::uint64_t left =
        completed ? 0
                  : geometry_.total_size().value() -
                        static_cast<std::uint64_t>(m.have.count()) * geometry_.piece_length().value();
    const int numwant = std::max(plan_.options.max_connections * 3 / 8, 1);
    named_ = world_.announce(plan_.title, plan_.box, completed ? 0 : std::max<std::uint64_t>(left, 1),
                             World::Announcing::downloading, numwant, t);
    tracker_reply_at_ = t + world_.tuning().tracker_rtt_s;
}

void Viewer::piece_finished(int piece, bool from_server, double t) {
    const PieceIndex p(piece);
    from_server_bytes_.erase(piece);
    auto arrival = ctl_->on_piece_finished(p, at(t));
    if (arrival.cancel_fetch) stop_fetch(piece, t);
    if (arrival.from_server || from_server) {
        from_server_.set(p);
        ++rec_.pieces_from_server;
    }
    // Whatever peers are still sending of it is cancelled (their send buffers still arrive, redundant).
    cede_to_server(piece, 0, geometry_.piece_size(p).value(), t);
    if (!arrival.new_piece) return;
    swarm_.on_have(plan_.box, piece);
    applier_.on_piece_had(p);
    for (BoxId d : swarm_.would_request(plan_.box, piece))
        world_.poke(d);
}

void Viewer::finish(double t) {
    if (done_) return;
    done_ = true;
    world_.listen(plan_.box, nullptr);
    for (std::size_t i = flows_.size(); i-- > 0;) {
        const Flow f = flows_[i];
        if (f.bell) {
            drop_flow(i);
            remove_flow(i);
            continue;
        }
        const auto done = done_bytes(i);
        drop_flow(i);
        remove_flow(i);
        if (f.server) {
            world_.add_server_bytes(done, f.started, t, false);
            fetches_.erase(f.piece);
            ctl_->on_fetch_stopped(PieceIndex(f.piece), Bytes(done));
        } else {
            auto carried = swarm_.cancel_transfer(f.conn, plan_.box, done);
            world_.add_upload(carried.up, carried.bytes, f.started, t);
            from_peers_ += carried.bytes;
        }
    }
    inbox_->closed = true;
    inbox_->arrived.clear();
    ctl_->on_stop(at(t));
    client::StatsRecord r;
    ctl_->fill_record(r, at(t));
    rec_.end_s = t;
    rec_.completed =
        r.completed ||
        (plan_.watch_s &&
         std::chrono::duration<double>(geometry_.media_time_at(ctl_->watcher().playhead())).count() >=
             *plan_.watch_s - 1e-6);
    rec_.bytes_from_peers = from_peers_;
    rec_.bytes_from_server = r.bytes_from_server;
    rec_.bytes_server_wasted = r.bytes_server_wasted;
    rec_.bytes_uploaded = world_.uploaded(plan_.box) - uploaded_at_start_;
    rec_.bytes_redundant = redundant_;
    rec_.bytes_redundant_raced = raced_;
    rec_.stalls = r.stalls;
    rec_.stall_seconds = r.stall_seconds;
    rec_.startup_ms = r.startup_ms;
    rec_.late_pieces = r.late_pieces;
    swarm_.stop_download(plan_.box);
    if (plan_.on_end) plan_.on_end(plan_, rec_);
    if (plan_.leave_at_end) {
        world_.announce(plan_.title, plan_.box, 0, World::Announcing::stopped, 0, t);
        swarm_.leave(plan_.box);
    }
    world_.add_session(rec_);
}

}  // namespace viewer_detail

void run_viewer(World& world, ViewerPlan plan) {
    viewer_detail::Viewer v(world, std::move(plan));
    v.run();
}

}  // namespace toast::sim
