// The viewer's side of the bytes: the swarm sample it reads, the transfers from peers, the server's fetches.
#include <algorithm>
#include <cmath>

#include "sim/sg/viewer_session.hpp"

namespace toast::sim::viewer_detail {

std::uint64_t Viewer::done_bytes(std::size_t i) const {
    const auto& f = flows_[i];
    const double t = now();
    if (f.done_at == t) return f.done;
    const double remaining = lanes_[i] ? lanes_[i]->remaining() : 0.0;
    const auto left = static_cast<std::uint64_t>(std::max(0.0, std::ceil(remaining)));
    f.done = f.bytes > left ? f.bytes - left : 0;
    f.done_at = t;
    return f.done;
}

void Viewer::prefetch_flows() const {
    // A flow's delivered bytes are a chain of objects no tick has touched since the last (the lane, its
    // put, SimGrid's communication and action): each tick asks every flow, one chain after another, each
    // link a cache miss. Fetching each link of every flow at once overlaps the misses.
    for (const auto& lane : lanes_)
        if (lane) __builtin_prefetch(lane.get());
    for (const auto& lane : lanes_)
        if (lane && lane->put) __builtin_prefetch(lane->put.get());
    for (const auto& lane : lanes_)
        if (lane && lane->put) __builtin_prefetch(lane->put->get_impl());
}

void Viewer::received(int piece, ReceivedBytes& got) const {
    got.clear();
    const auto* m = self_;
    if (auto it = m->partial.find(piece); it != m->partial.end()) got = it->second;
    // The pipes sending the piece are those of this viewer's flows (one a connection), fewer than its
    // connections.
    for (std::size_t i = 0; i < flows_.size(); ++i) {
        if (flows_[i].server || flows_[i].bell) continue;
        const auto& pipe = swarm_.connection(flows_[i].conn).towards(plan_.box);
        if (pipe.active == piece) got.add(pipe.from, pipe.from + done_bytes(i));
    }
}

client::SwarmSample& Viewer::sample(double t) {
    // Refilled in place every tick: its vectors keep their room from one tick to the next.
    auto& s = sample_;
    s.now = at(t);
    auto& m = member();
    // availability: the member's, lent by tick() for the controller's tick.
    const int blocks_per_piece = static_cast<int>((geometry_.piece_length().value() + kBlock - 1) / kBlock);
    std::uint64_t partial_bytes = 0;
    auto& sending = sending_;  // piece, [delivered, to)
    sending.clear();
    std::size_t peers = 0;
    for (int c : m.conns) {
        const auto& cn = swarm_.connection(c);
        if (!cn.open) continue;
        const auto* peer = &swarm_.peer_of(c, plan_.box);
        const auto& pipe = cn.towards(plan_.box);
        if (peers == s.peers.size()) s.peers.emplace_back();
        auto& ps = s.peers[peers++];
        ps.seed = peer->have.all();
        ps.upload_only = !peer->downloading || peer->upload_mode;
        ps.operator_peer = peer->setup.operator_peer;
        if (ps.operator_peer && !ps.seed) {
            ps.pieces = peer->have.to_piece_set();
        } else if (ps.pieces.size().value() != 0) {
            ps.pieces = client::PieceSet();
        }
        ps.download_rate = pipe.rate;
        int asked = static_cast<int>(pipe.queue.size()) * blocks_per_piece;
        std::uint64_t done = 0;
        if (pipe.active >= 0) {
            const auto fi = peer_flow(c);
            done = fi ? done_bytes(*fi) : 0;
            partial_bytes += done;
            const std::uint64_t delivered = pipe.from + done;
            asked += static_cast<int>((pipe.to - std::min(pipe.to, delivered) + kBlock - 1) / kBlock);
            sending.emplace_back(pipe.active, std::pair{delivered, pipe.to});
        }
        ps.queue_length = reported_queue(asked, pipe.pipeline.depth(pipe.rate, pipe.delivered + done));
    }
    s.peers.resize(peers);
    // Pieces peers are sending or have sent part of: which blocks are here, and the two blocks at the front
    // of each transfer (the one being sent and the next).
    auto& pieces = pieces_scratch_;
    pieces.clear();
    for (const auto& [piece, at] : sending)
        pieces.push_back(piece);
    for (const auto& [piece, got] : m.partial)
        pieces.push_back(piece);
    std::sort(pieces.begin(), pieces.end());
    pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
    std::size_t progress = 0;
    for (int piece : pieces) {
        if (m.have.test(piece)) continue;
        const auto size = swarm_.piece_size(piece);
        const auto blocks = static_cast<std::size_t>((size + kBlock - 1) / kBlock);
        auto& got = received_scratch_;
        received(piece, got);
        if (progress == s.progress.size()) s.progress.emplace_back();
        auto& pp = s.progress[progress++];
        pp.piece = PieceIndex(piece);
        pp.delivered.assign(blocks, false);
        pp.queue_position.assign(blocks, -1);
        // A block is here when one span holds it whole (the spans are disjoint and not touching): from the
        // first block starting in a span to the last ending in it.
        for (const auto& [from, to] : got.spans()) {
            const auto last = to >= size ? blocks : static_cast<std::size_t>(to / kBlock);
            const auto first = static_cast<std::size_t>((from + kBlock - 1) / kBlock);
            if (first < last)
                std::fill(pp.delivered.begin() + static_cast<std::ptrdiff_t>(first),
                          pp.delivered.begin() + static_cast<std::ptrdiff_t>(last), true);
        }
        for (const auto& [p, range] : sending) {
            if (p != piece) continue;
            for (auto b = static_cast<std::size_t>(range.first / kBlock), place = std::size_t{0};
                 b < blocks && place < 2 && b * kBlock < range.second; ++b) {
                if (pp.delivered[b]) continue;
                pp.queue_position[b] = static_cast<int>(place++);
            }
        }
    }
    s.progress.resize(progress);
    s.in_flight.clear();
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
    // Each connection's delivered bytes against its mark of the last measurement (marks kept for the
    // connections open then, in the member's order, which rarely changes between two measurements).
    marks_.clear();
    std::size_t hint = 0;
    for (int c : member().conns) {
        const auto& cn = swarm_.connection(c);
        if (!cn.open) continue;
        const auto& pipe = cn.towards(plan_.box);
        std::uint64_t total = pipe.delivered;
        if (pipe.active >= 0)
            if (auto fi = peer_flow(c)) total += done_bytes(*fi);
        std::uint64_t before = 0;
        if (hint < rate_mark_.size() && rate_mark_[hint].first == c) {
            before = rate_mark_[hint++].second;
        } else if (auto it = std::find_if(rate_mark_.begin(), rate_mark_.end(),
                                          [c](const auto& m) { return m.first == c; });
                   it != rate_mark_.end()) {
            before = it->second;
            hint = static_cast<std::size_t>(it - rate_mark_.begin()) + 1;
        }
        swarm_.set_rate(c, plan_.box, total >= before ? static_cast<double>(total - before) / dt : 0.0, dt);
        marks_.emplace_back(c, total);
    }
    rate_mark_.swap(marks_);
}

void Viewer::restart(int conn, int piece, std::uint64_t until, double t) {
    // The uploader on `conn` stops at byte `until` of the piece: its transfer is cut there (SimGrid cannot
    // shorten a communication: the rest is a new one).
    auto fi = peer_flow(conn);
    if (!fi) return;
    const auto done = done_bytes(*fi);
    const double started = flows_[*fi].started;
    drop_flow(*fi);
    remove_flow(*fi);
    const auto from = swarm_.connection(conn).towards(plan_.box).from;
    auto carried = swarm_.cancel_transfer(conn, plan_.box, done);
    world_.add_upload(carried.up, carried.bytes, started, t);
    from_peers_ += carried.bytes;
    if (from + done >= until || !swarm_.connection(conn).open) return;
    auto s = swarm_.resume_transfer(conn, plan_.box, piece, from + done, until);
    add_transfer(world_.host_of(s.up), Flow{false, false, conn, piece, s.to - s.from, t, 0});
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
            drop_flow(*fi);
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
        add_transfer(world_.host_of(s.up), Flow{false, false, s.conn, s.piece, s.to - s.from, t, 0});
        ++world_.transfers;
    }
}

void Viewer::arm_bell() {
    // The doorbell's place among the flows: what arrives on it is handled in that order.
    Flow f;
    f.bell = true;
    add_flow(nullptr, f);
}

std::size_t Viewer::add_transfer(sg4::Host* from, Flow f) {
    return add_flow(world_.couriers().start(from, f.bytes, inbox_), f);
}

std::size_t Viewer::add_flow(std::shared_ptr<TransferLane> lane, Flow f) {
    lanes_.push_back(std::move(lane));
    flows_.push_back(f);
    return flows_.size() - 1;
}

void Viewer::drop_flow(std::size_t i) {
    if (lanes_[i]) drop_transfer(*lanes_[i]);
}

void Viewer::remove_flow(std::size_t i) {
    lanes_[i] = std::move(lanes_.back());
    lanes_.pop_back();
    flows_[i] = flows_.back();
    flows_.pop_back();
}

std::optional<std::size_t> Viewer::take_arrival(bool first_come) {
    auto& arrived = inbox_->arrived;
    // Each arrival's flow (a dropped one has none left: it is skipped).
    auto flow_of = [this](const TransferLane& lane) -> std::optional<std::size_t> {
        if (lane.cancelled) return std::nullopt;
        for (std::size_t i = 0; i < flows_.size(); ++i)
            if (lane.doorbell ? flows_[i].bell : lanes_[i].get() == &lane) return i;
        return std::nullopt;
    };
    // Arrivals without a flow (dropped after their bytes were in) are let go as they are met: each holds its
    // transfer's communication, and that its courier.
    std::optional<std::size_t> best;
    std::size_t best_at = 0;
    for (std::size_t a = 0; a < arrived.size();) {
        const auto i = flow_of(*arrived[a]);
        if (!i) {
            arrived.erase(arrived.begin() + static_cast<std::ptrdiff_t>(a));
            continue;
        }
        if (!best || *i < *best) {
            best = i;
            best_at = a;
        }
        if (first_come) break;
        ++a;
    }
    if (!best) return std::nullopt;
    arrived.erase(arrived.begin() + static_cast<std::ptrdiff_t>(best_at));
    return best;
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
    const double arrive =
        t + world_.platform().box_server_latency(plan_.box) + world_.server().setup().request_overhead_s;
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
    add_transfer(world_.server_host(it->second.node),
                 Flow{true, false, -1, piece, it->second.length, t, it->second.node});
    ++world_.transfers;
}

void Viewer::stop_fetch(int piece, double t) {
    auto it = fetches_.find(piece);
    if (it == fetches_.end()) return;
    std::uint64_t received = 0;
    if (auto fi = server_flow(piece)) {
        received = done_bytes(*fi);
        drop_flow(*fi);
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
    const bool had = ctl_->had().has(p);
    if (had || f.draining) {
        redundant_ += carried.bytes;
        if (f.draining || from_server_.has(p)) raced_ += carried.bytes;
        if (had) return;
    }
    if (carried.whole) {
        piece_finished(carried.piece, false, t);
    } else if (ctl_->holding(p) && world_.tuning().tick_s > kClientTick) {
        // The blocks a held server part waited for are here: with ticks longer than the client's, the tick
        // that writes it comes now, not a whole tick later (at the client's own tick it comes when the
        // client's would).
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
        if (!fi || flows_[*fi].draining) continue;
        const auto done = done_bytes(*fi);
        const auto from = pipe.from;
        const auto delivered = from + done;
        const auto to = pipe.to;
        if (to <= server_from || delivered >= server_to) continue;  // its blocks are outside the server's
        const bool open = swarm_.connection(c).open;
        if (delivered < server_from && open) {
            restart(c, piece, server_from, t);
            continue;
        }
        const auto overlap =
            delivered > std::max(from, server_from) ? delivered - std::max(from, server_from) : 0;
        redundant_ += overlap;
        raced_ += overlap;
        const auto extra = std::min(kSendBuffer, to - std::min(to, delivered));
        if (extra > 0 && open) {
            // The block being sent and the next still go out through the uploader's uplink, then count as
            // redundant when they arrive (on_peer_bytes).
            restart(c, piece, delivered + extra, t);
            if (auto rest = peer_flow(c)) flows_[*rest].draining = true;
            continue;
        }
        const double started = flows_[*fi].started;
        drop_flow(*fi);
        remove_flow(*fi);
        auto carried = swarm_.cancel_transfer(c, plan_.box, done);
        world_.add_upload(carried.up, carried.bytes, started, t);
        from_peers_ += carried.bytes;
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
    ReceivedBytes got;
    received(f.piece, got);
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

}  // namespace toast::sim::viewer_detail
