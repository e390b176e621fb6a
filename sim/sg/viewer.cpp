#include "sim/sg/viewer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "client/core/plan_applier.hpp"
#include "client/core/stream_controller.hpp"
#include "sim/core/model_piece_control.hpp"
#include "sim/core/received_bytes.hpp"

namespace sg4 = simgrid::s4u;

namespace toast::sim {

using toast::Bytes;
using client::PieceIndex;

namespace {

constexpr std::uint64_t kBlock = 16 * 1024;
// A CANCEL cannot call back what is already in the uploader's send buffer: the block being sent and the next.
constexpr std::uint64_t kSendBuffer = 2 * kBlock;
// The client's own tick (ClientTuning::tick): at it or below, the viewer ticks as the client does and nothing
// more; longer ticks (to simulate more boxes) add wake-ups at the moments the client's ticks would have caught.
constexpr double kClientTick = 0.2 + 1e-9;

// Cancels a communication and collects it. SimGrid 3.32 keeps a cancelled communication in its actor's list
// of communications until someone waits on it, and removes each finished one from that list by a linear
// search: a viewer that cancels thousands of transfers over an hour made every later transfer slower.
void drop(sg4::Comm& comm) {
    comm.cancel();
    try {
        comm.wait_for(0);
    } catch (const simgrid::Exception&) {
        // cancelled: expected
    }
}

class Viewer {
  public:
    Viewer(World& world, ViewerPlan plan);
    void run();

  private:
    struct Flow {
        bool server = false;
        bool bell = false;  // the doorbell (World::poke): not a transfer
        int conn = -1;  // peer flows
        int piece = -1;
        std::uint64_t bytes = 0;
        double started = 0;
        int node = 0;  // server flows
    };
    struct Fetch {
        std::uint64_t offset = 0;  // in the piece
        std::uint64_t length = 0;
        int node = 0;
        bool sending = false;
    };

    double now() const { return sg4::Engine::get_clock(); }
    client::SteadyTime at(double s) const { return steady_at(s); }
    Member& member() { return *swarm_.find(plan_.box); }

    void tick();
    client::SwarmSample sample(double t);
    void apply(const client::ControllerPlan& plan, double t);
    void pump(double t);
    void announce(double t, bool completed);
    void measure_rates(double t);

    void start_fetch(const client::FallbackFetch& f, double t);
    void send_fetch(int piece, double t);
    void stop_fetch(int piece, double t);
    void on_flow_done(std::size_t i, double t);
    void on_server_bytes(const Flow& f, double t);
    void on_peer_bytes(const Flow& f, double t);
    void piece_finished(int piece, bool from_server, double t);
    void cede_to_server(int piece, std::uint64_t server_from, std::uint64_t server_to, double t);
    void restart(int conn, int piece, std::uint64_t until, double t);

    std::size_t add_flow(sg4::CommPtr comm, Flow f);
    void remove_flow(std::size_t i);
    std::optional<std::size_t> peer_flow(int conn) const;
    std::optional<std::size_t> server_flow(int piece) const;
    std::uint64_t done_bytes(std::size_t i) const;
    ReceivedBytes received(int piece) const;  // what peers have delivered of the piece so far
    void finish(double t);
    void arm_bell();
    double next_wake(double t);

    World& world_;
    ViewerPlan plan_;
    TitleState& title_;
    SwarmModel& swarm_;
    const client::TitleGeometry& geometry_;
    sg4::Host* host_;
    std::unique_ptr<client::StreamController> ctl_;
    client::PlanApplier applier_;
    ModelPieceControl control_;

    int* bell_data_ = nullptr;
    std::vector<sg4::CommPtr> comms_;
    std::vector<Flow> flows_;
    std::map<int, Fetch> fetches_;
    // The server's bytes of pieces the controller holds (ServerFallback keeps them until the piece is whole).
    std::map<int, ReceivedBytes> from_server_bytes_;
    std::multimap<double, int> disk_ready_;  // server fetches whose bytes are read: piece
    std::optional<double> tracker_reply_at_;
    std::optional<double> deadline_at_;  // a wake-up at the server's last moment for the next missing piece
    std::vector<BoxId> named_;
    std::map<int, std::uint64_t> rate_mark_;  // conn -> delivered at the last measurement
    double last_rate_ = 0;
    double next_tick_ = 0;
    bool ready_ = false;
    bool done_ = false;
    SessionRecord rec_;
    std::uint64_t from_peers_ = 0;
    std::uint64_t redundant_ = 0, raced_ = 0;
    std::uint64_t uploaded_at_start_ = 0;
    client::PieceSet from_server_;
};

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
    auto setup = client::controller_setup_for(plan_.options, limit, true, true,
                                              client::watcher_config_for(plan_.options, geometry_, tuning,
                                                                         client::ByteOffset(0)));
    ctl_ = std::make_unique<client::StreamController>(geometry_, setup, tuning, at(t0));
    MemberSetup ms;
    ms.choker = plan_.options.choker == client::ChokerOption::tit_for_tat ? ChokerKind::tit_for_tat
                : plan_.options.choker == client::ChokerOption::seed      ? ChokerKind::seed_style
                : plan_.options.choker == client::ChokerOption::leader    ? ChokerKind::leader
                                                                          : ChokerKind::nearest;
    ms.slots = client::unchoke_slots_of(plan_.options);
    ms.max_connections = plan_.options.max_connections;
    ms.seed = plan_.options.seed;
    swarm_.join(plan_.box, ms);
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
    world_.listen(plan_.box, true);
    arm_bell();
    announce(t0, false);
    next_tick_ = t0;
    last_rate_ = t0;
    while (!done_) {
        const double t = now();
        const double wake = next_wake(t);
        if (wake > t) {
            if (comms_.empty()) {
                sg4::this_actor::sleep_until(wake);
            } else {
                const auto i = sg4::Comm::wait_any_for(comms_, wake - t);
                if (i >= 0) {
                    ++world_.events;
                    on_flow_done(static_cast<std::size_t>(i), now());
                    continue;
                }
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
            const double window = std::chrono::duration<double>(fb.need_window(ctl_->horizon().horizon_time())).count();
            const double lead = std::chrono::duration<double>(fb.lead()).count();
            const auto& had = ctl_->had();
            int looked = 0;
            for (auto p = w.playhead_piece(); p.value() < geometry_.piece_count().value() && looked < 4; ++p) {
                if (had.has(p) || fb.in_flight(p)) continue;
                ++looked;
                const double until = std::chrono::duration<double>(w.time_until_needed(p)).count();
                // A millisecond past the moment: at the moment itself the fallback's comparison may still fail.
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
    if (t - last_rate_ >= world_.tuning().rate_interval_s) measure_rates(t);
    auto plan = ctl_->tick(sample(t));
    apply(plan, t);
    pump(t);
    // A seeding viewer's process stays in the swarm; its session (what the report counts) ends with playback.
    bool leave = plan.leave || (plan_.options.behavior == client::Behavior::seed && ctl_->watcher().reached_end());
    if (plan_.watch_s) {
        const auto played = std::chrono::duration<double>(
                                geometry_.media_time_at(ctl_->watcher().playhead()))
                                .count();
        if (played >= *plan_.watch_s - 1e-6) leave = true;
    }
    if (leave) finish(t);
}

std::uint64_t Viewer::done_bytes(std::size_t i) const {
    const double remaining = comms_[i]->get_remaining();
    const auto left = static_cast<std::uint64_t>(std::max(0.0, std::ceil(remaining)));
    return flows_[i].bytes > left ? flows_[i].bytes - left : 0;
}

ReceivedBytes Viewer::received(int piece) const {
    ReceivedBytes got;
    const auto* m = swarm_.find(plan_.box);
    if (!m) return got;
    if (auto it = m->partial.find(piece); it != m->partial.end()) got = it->second;
    for (int c : m->conns) {
        const auto& pipe = swarm_.connection(c).towards(plan_.box);
        if (pipe.active != piece) continue;
        if (auto fi = peer_flow(c)) got.add(pipe.from, pipe.from + done_bytes(*fi));
    }
    return got;
}

client::SwarmSample Viewer::sample(double t) {
    client::SwarmSample s;
    s.now = at(t);
    auto& m = member();
    s.availability = m.availability;
    const int blocks_per_piece = static_cast<int>((geometry_.piece_length().value() + kBlock - 1) / kBlock);
    std::uint64_t partial_bytes = 0;
    std::vector<std::pair<int, std::pair<std::uint64_t, std::uint64_t>>> sending;  // piece, [delivered, to)
    for (int c : m.conns) {
        const auto& cn = swarm_.connection(c);
        if (!cn.open) continue;
        const auto* peer = swarm_.find(cn.other(plan_.box));
        if (!peer) continue;
        const auto& pipe = cn.towards(plan_.box);
        client::PeerSample ps;
        ps.seed = peer->have.all();
        ps.operator_peer = peer->setup.operator_peer;
        if (ps.operator_peer && !ps.seed) ps.pieces = peer->have.to_piece_set();
        ps.download_rate = pipe.rate;
        ps.queue_length = static_cast<int>(pipe.queue.size()) * blocks_per_piece;
        if (pipe.active >= 0) {
            const auto fi = peer_flow(c);
            const std::uint64_t done = fi ? done_bytes(*fi) : 0;
            partial_bytes += done;
            const std::uint64_t delivered = pipe.from + done;
            ps.queue_length += static_cast<int>((pipe.to - std::min(pipe.to, delivered) + kBlock - 1) / kBlock);
            sending.emplace_back(pipe.active, std::pair{delivered, pipe.to});
        }
        s.peers.push_back(std::move(ps));
    }
    // Pieces peers are sending or have sent part of: which blocks are here, and the two blocks at the front
    // of each transfer (the one being sent and the next).
    std::vector<int> pieces;
    for (const auto& [piece, at] : sending)
        pieces.push_back(piece);
    for (const auto& [piece, got] : m.partial)
        pieces.push_back(piece);
    std::sort(pieces.begin(), pieces.end());
    pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
    for (int piece : pieces) {
        if (m.have.test(piece)) continue;
        const auto size = swarm_.piece_size(piece);
        const auto blocks = static_cast<std::size_t>((size + kBlock - 1) / kBlock);
        const auto got = received(piece);
        client::PieceProgress pp{PieceIndex(piece), std::vector<bool>(blocks, false), std::vector<int>(blocks, -1)};
        for (std::size_t b = 0; b < blocks; ++b)
            pp.delivered[b] = got.covers(b * kBlock, std::min<std::uint64_t>((b + 1) * kBlock, size));
        for (const auto& [p, range] : sending) {
            if (p != piece) continue;
            for (auto b = static_cast<std::size_t>(range.first / kBlock), place = std::size_t{0};
                 b < blocks && place < 2 && b * kBlock < range.second; ++b) {
                if (pp.delivered[b]) continue;
                pp.queue_position[b] = static_cast<int>(place++);
            }
        }
        s.progress.push_back(std::move(pp));
    }
    m.requested.for_each([&](int p) { s.in_flight.push_back(PieceIndex(p)); });
    for (const auto& [piece, got] : m.partial)
        if (!m.requested.test(piece) && !m.have.test(piece)) s.in_flight.push_back(PieceIndex(piece));
    s.from_peers = Bytes(from_peers_ + partial_bytes);
    s.known_peers = static_cast<int>(named_.size());
    s.server_up = true;
    return s;
}

void Viewer::measure_rates(double t) {
    const double dt = t - last_rate_;
    last_rate_ = t;
    if (dt <= 0) return;
    std::map<int, std::uint64_t> marks;
    for (int c : member().conns) {
        const auto& cn = swarm_.connection(c);
        if (!cn.open) continue;
        const auto& pipe = cn.towards(plan_.box);
        std::uint64_t total = pipe.delivered;
        if (pipe.active >= 0)
            if (auto fi = peer_flow(c)) total += done_bytes(*fi);
        const auto it = rate_mark_.find(c);
        const std::uint64_t before = it == rate_mark_.end() ? 0 : it->second;
        swarm_.set_rate(c, plan_.box, total >= before ? static_cast<double>(total - before) / dt : 0.0);
        marks[c] = total;
    }
    rate_mark_ = std::move(marks);
}

void Viewer::apply(const client::ControllerPlan& plan, double t) {
    for (auto p : plan.eject)
        swarm_.on_lost(plan_.box, p.value());
    if (plan.upload_mode) member().upload_mode = *plan.upload_mode;
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
        completed ? 0 : geometry_.total_size().value() - static_cast<std::uint64_t>(m.have.count()) *
                                                             geometry_.piece_length().value();
    const int numwant = std::max(plan_.options.max_connections * 3 / 8, 1);
    named_ = world_.announce(plan_.title, plan_.box, completed ? 0 : std::max<std::uint64_t>(left, 1), false,
                             numwant, t);
    tracker_reply_at_ = t + world_.tuning().tracker_rtt_s;
}

void Viewer::restart(int conn, int piece, std::uint64_t until, double t) {
    // The uploader on `conn` stops at byte `until` of the piece: its transfer is cut there (SimGrid cannot
    // shorten a communication: the rest is a new one).
    auto fi = peer_flow(conn);
    if (!fi) return;
    const auto done = done_bytes(*fi);
    const double started = flows_[*fi].started;
    drop(*comms_[*fi]);
    remove_flow(*fi);
    const auto from = swarm_.connection(conn).towards(plan_.box).from;
    auto carried = swarm_.cancel_transfer(conn, plan_.box, done);
    world_.add_upload(carried.up, carried.bytes, started, t);
    from_peers_ += carried.bytes;
    if (from + done >= until || !swarm_.connection(conn).open) return;
    auto s = swarm_.resume_transfer(conn, plan_.box, piece, from + done, until);
    add_flow(sg4::Comm::sendto_async(world_.host_of(s.up), host_, s.to - s.from),
             Flow{false, false, conn, piece, s.to - s.from, t, 0});
    ++world_.transfers;
}

void Viewer::pump(double t) {
    auto r = swarm_.pump(plan_.box, t, [this](int conn) -> std::uint64_t {
        auto fi = peer_flow(conn);
        return fi ? done_bytes(*fi) : 0;
    });
    for (const auto& sp : r.split)
        restart(sp.conn, sp.piece, sp.at, t);
    for (const auto& c : r.cancel) {
        if (auto fi = peer_flow(c.conn)) {
            const auto done = done_bytes(*fi);
            drop(*comms_[*fi]);
            auto carried = swarm_.cancel_transfer(c.conn, plan_.box, done);
            world_.add_upload(carried.up, carried.bytes, flows_[*fi].started, t);
            from_peers_ += carried.bytes;
            remove_flow(*fi);
        } else {
            swarm_.cancel_transfer(c.conn, plan_.box, 0);
        }
    }
    for (BoxId w : r.unchoked)
        world_.poke(w);
    for (const auto& s : r.start) {
        auto comm = sg4::Comm::sendto_async(world_.host_of(s.up), host_, s.to - s.from);
        add_flow(comm, Flow{false, false, s.conn, s.piece, s.to - s.from, t, 0});
        ++world_.transfers;
    }
}

void Viewer::arm_bell() {
    Flow f;
    f.bell = true;
    add_flow(world_.bell(plan_.box)->get_async<int>(&bell_data_), f);
}

std::size_t Viewer::add_flow(sg4::CommPtr comm, Flow f) {
    comms_.push_back(std::move(comm));
    flows_.push_back(f);
    return comms_.size() - 1;
}

void Viewer::remove_flow(std::size_t i) {
    comms_[i] = comms_.back();
    comms_.pop_back();
    flows_[i] = flows_.back();
    flows_.pop_back();
}

std::optional<std::size_t> Viewer::peer_flow(int conn) const {
    for (std::size_t i = 0; i < flows_.size(); ++i)
        if (!flows_[i].server && !flows_[i].bell && flows_[i].conn == conn) return i;
    return std::nullopt;
}

std::optional<std::size_t> Viewer::server_flow(int piece) const {
    for (std::size_t i = 0; i < flows_.size(); ++i)
        if (flows_[i].server && flows_[i].piece == piece) return i;
    return std::nullopt;
}

void Viewer::start_fetch(const client::FallbackFetch& f, double t) {
    const int p = f.piece.value();
    if (fetches_.count(p)) {
        ctl_->on_fetch_refused(f.piece);  // one request per piece at a time, as the fetcher
        return;
    }
    const auto size = geometry_.piece_size(f.piece).value();
    Fetch fetch;
    fetch.offset = f.part ? f.part->offset.value() : 0;
    fetch.length = f.part ? f.part->length.value() : size;
    const double arrive = t + world_.platform().box_server_latency(plan_.box) + world_.server().setup().request_overhead_s;
    auto read = world_.server().read(plan_.title, geometry_.piece_start(f.piece).value() + fetch.offset,
                                     fetch.length, arrive);
    fetch.node = read.node;
    fetches_[p] = fetch;
    disk_ready_.emplace(read.ready, p);
}

void Viewer::send_fetch(int piece, double t) {
    auto it = fetches_.find(piece);
    if (it == fetches_.end() || it->second.sending) return;
    it->second.sending = true;
    auto comm = sg4::Comm::sendto_async(world_.server_host(it->second.node), host_, it->second.length);
    add_flow(comm, Flow{true, false, -1, piece, it->second.length, t, it->second.node});
    ++world_.transfers;
}

void Viewer::stop_fetch(int piece, double t) {
    auto it = fetches_.find(piece);
    if (it == fetches_.end()) return;
    std::uint64_t received = 0;
    if (auto fi = server_flow(piece)) {
        received = done_bytes(*fi);
        drop(*comms_[*fi]);
        world_.add_server_bytes(received, flows_[*fi].started, t, false);
        remove_flow(*fi);
    } else {
        for (auto d = disk_ready_.begin(); d != disk_ready_.end(); ++d)
            if (d->second == piece) {
                disk_ready_.erase(d);
                break;
            }
    }
    fetches_.erase(it);
    ctl_->on_fetch_stopped(PieceIndex(piece), Bytes(received));
}

void Viewer::on_flow_done(std::size_t i, double t) {
    const Flow f = flows_[i];
    remove_flow(i);
    if (f.bell) {
        world_.answered(plan_.box);
        arm_bell();
    } else if (f.server) {
        on_server_bytes(f, t);
    } else {
        on_peer_bytes(f, t);
    }
    pump(t);
}

void Viewer::on_peer_bytes(const Flow& f, double t) {
    auto carried = swarm_.finish_transfer(f.conn, plan_.box);
    world_.add_upload(carried.up, carried.bytes, f.started, t);
    from_peers_ += carried.bytes;
    const PieceIndex p(carried.piece);
    if (ctl_->had().has(p)) {
        redundant_ += carried.bytes;
        if (from_server_.has(p)) raced_ += carried.bytes;
        return;
    }
    if (carried.whole) {
        piece_finished(carried.piece, false, t);
    } else if (ctl_->holding(p) && world_.tuning().tick_s > kClientTick) {
        // The blocks a held server part waited for are here: with ticks longer than the client's, the tick that
        // writes it comes now, not a whole tick later (at the client's own tick it comes when the client's would).
        next_tick_ = std::min(next_tick_, t);
    }
}

void Viewer::cede_to_server(int piece, std::uint64_t server_from, std::uint64_t server_to, double t) {
    // The server's bytes [server_from, server_to) are here: peers' requests for them are cancelled
    // (ServerFallback cancels on arrival). A peer still sending blocks before them goes on up to there; one
    // already sending inside them stops, and its send buffer still arrives, redundant.
    for (int c : std::vector<int>(member().conns)) {
        const auto& pipe = swarm_.connection(c).towards(plan_.box);
        if (pipe.active != piece) continue;
        auto fi = peer_flow(c);
        if (!fi) continue;
        const auto done = done_bytes(*fi);
        const auto from = pipe.from;
        const auto delivered = from + done;
        const auto to = pipe.to;
        if (to <= server_from || delivered >= server_to) continue;  // its blocks are outside the server's
        if (delivered < server_from && swarm_.connection(c).open) {
            restart(c, piece, server_from, t);
            continue;
        }
        const double started = flows_[*fi].started;
        drop(*comms_[*fi]);
        remove_flow(*fi);
        const auto extra = std::min(kSendBuffer, to - std::min(to, delivered));
        auto carried = swarm_.cancel_transfer(c, plan_.box, done + extra);
        world_.add_upload(carried.up, carried.bytes, started, t);
        from_peers_ += carried.bytes;
        const auto overlap = delivered > std::max(from, server_from) ? delivered - std::max(from, server_from) : 0;
        redundant_ += overlap + extra;
        raced_ += overlap + extra;
    }
}

void Viewer::on_server_bytes(const Flow& f, double t) {
    auto it = fetches_.find(f.piece);
    const Fetch fetch = it != fetches_.end() ? it->second : Fetch{};
    if (it != fetches_.end()) fetches_.erase(it);
    world_.add_server_bytes(f.bytes, f.started, t, false);
    const PieceIndex p(f.piece);
    if (!ctl_->on_server_data(p, Bytes(f.bytes), at(t))) return;  // a peer was faster: wasted
    cede_to_server(f.piece, fetch.offset, fetch.offset + fetch.length, t);
    auto& server = from_server_bytes_[f.piece];
    server.add(fetch.offset, fetch.offset + fetch.length);
    if (ctl_->holding(p)) return;
    auto got = received(f.piece);
    for (const auto& [a, b] : server.spans())
        got.add(a, b);
    from_server_bytes_.erase(f.piece);
    if (!got.covers(0, geometry_.piece_size(p).value())) {
        // Peers' blocks outside the server's parts are not all here: add_piece would write zeros there.
        ctl_->on_hash_failed(p, at(t));
        return;
    }
    piece_finished(f.piece, true, t);
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
    world_.listen(plan_.box, false);
    for (std::size_t i = flows_.size(); i-- > 0;) {
        const Flow f = flows_[i];
        if (f.bell) {
            drop(*comms_[i]);
            remove_flow(i);
            continue;
        }
        const auto done = done_bytes(i);
        drop(*comms_[i]);
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
    ctl_->on_stop(at(t));
    client::StatsRecord r;
    ctl_->fill_record(r, at(t));
    rec_.end_s = t;
    rec_.completed = r.completed || (plan_.watch_s && std::chrono::duration<double>(
                                                          geometry_.media_time_at(ctl_->watcher().playhead()))
                                                              .count() >= *plan_.watch_s - 1e-6);
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
        world_.announce(plan_.title, plan_.box, 0, true, 0, t);
        swarm_.leave(plan_.box);
    }
    world_.add_session(rec_);
}

}  // namespace

void run_viewer(World& world, ViewerPlan plan) {
    Viewer v(world, std::move(plan));
    v.run();
}

}  // namespace toast::sim
