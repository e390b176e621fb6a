#include "sim/core/swarm_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>

namespace toast::sim {

using client::PieceIndex;

namespace {

// What the model asks a peer for, in pieces: libtorrent's request pipeline (RequestPipeline) in bytes.
constexpr double kQueueSeconds = RequestPipeline::kQueueSeconds;
constexpr std::uint64_t kMaxQueueBytes = RequestPipeline::kMax * RequestPipeline::kBlock;
constexpr std::uint8_t kInitialPriority = 4;  // a new torrent's pieces

bool toast_choker(ChokerKind k) {
    return k == ChokerKind::nearest || k == ChokerKind::leader || k == ChokerKind::seed_style;
}

// Whether downloader d asks uploader u for pieces at all: an operator's peer only while d's operator tier
// wants it.
bool asks(const Member& d, const Member& u) {
    return !u.setup.operator_peer || d.operator_wanted;
}

}  // namespace

SwarmModel::SwarmModel(int pieces, std::uint64_t piece_length, std::uint64_t total_bytes,
                       double piece_seconds)
    : pieces_(pieces), piece_length_(piece_length), total_(total_bytes), piece_seconds_(piece_seconds) {}

std::uint64_t SwarmModel::piece_size(int p) const {
    if (p < pieces_ - 1) return piece_length_;
    return total_ - piece_length_ * static_cast<std::uint64_t>(pieces_ - 1);
}

double SwarmModel::round_period(ChokerKind k) {
    return toast_choker(k) ? 1.0 : 15.0;
}

int SwarmModel::slot_of(BoxId box) const {
    auto it = slot_.find(box);
    return it == slot_.end() ? -1 : it->second;
}

Member* SwarmModel::find(BoxId box) {
    int s = slot_of(box);
    return s < 0 ? nullptr : &members_[static_cast<std::size_t>(s)];
}

const Member* SwarmModel::find(BoxId box) const {
    int s = slot_of(box);
    return s < 0 ? nullptr : &members_[static_cast<std::size_t>(s)];
}

Member& SwarmModel::at(BoxId box) {
    auto* m = find(box);
    if (!m) throw std::logic_error("swarm model: box " + std::to_string(box) + " is not a member");
    return *m;
}

Member& SwarmModel::join(BoxId box, const MemberSetup& setup) {
    if (auto* m = find(box)) return *m;
    int s;
    if (!free_members_.empty()) {
        s = free_members_.back();
        free_members_.pop_back();
        members_[static_cast<std::size_t>(s)] = Member{};
    } else {
        s = static_cast<int>(members_.size());
        members_.emplace_back();
    }
    slot_[box] = s;
    auto& m = members_[static_cast<std::size_t>(s)];
    m.box = box;
    m.setup = setup;
    m.have = PieceBits(pieces_);
    m.joined = joins_++;
    return m;
}

void SwarmModel::leave(BoxId box) {
    int s = slot_of(box);
    if (s < 0) return;
    auto& m = members_[static_cast<std::size_t>(s)];
    for (int c : std::vector<int>(m.conns))
        close(c);
    slot_.erase(box);
    m = Member{};
    free_members_.push_back(s);
}

bool SwarmModel::connected(BoxId a, BoxId b) const {
    const auto* m = find(a);
    if (!m) return false;
    for (int c : m->conns) {
        const auto& cn = conns_[static_cast<std::size_t>(c)];
        if (cn.open && cn.other(a) == b) return true;
    }
    return false;
}

bool SwarmModel::connect(BoxId a, BoxId b, double now) {
    if (a == b) return false;
    auto* ma = find(a);
    auto* mb = find(b);
    if (!ma || !mb || connected(a, b)) return false;
    auto open_count = [&](const Member& m) {
        return static_cast<int>(std::count_if(
            m.conns.begin(), m.conns.end(), [&](int c) { return conns_[static_cast<std::size_t>(c)].open; }));
    };
    if (open_count(*ma) >= ma->setup.max_connections || open_count(*mb) >= mb->setup.max_connections)
        return false;
    int id;
    if (!free_conns_.empty()) {
        id = free_conns_.back();
        free_conns_.pop_back();
    } else {
        id = static_cast<int>(conns_.size());
        conns_.emplace_back();
    }
    auto& cn = conns_[static_cast<std::size_t>(id)];
    cn = Connection{};
    cn.a = a;
    cn.b = b;
    cn.a_slot = slot_of(a);
    cn.b_slot = slot_of(b);
    cn.open = true;
    cn.a_sees_b = {mb->have.first_missing(), now};
    cn.b_sees_a = {ma->have.first_missing(), now};
    ma->conns.push_back(id);
    mb->conns.push_back(id);
    if (ma->downloading) mb->have.for_each([&](int p) { ++ma->availability[static_cast<std::size_t>(p)]; });
    if (mb->downloading) ma->have.for_each([&](int p) { ++mb->availability[static_cast<std::size_t>(p)]; });
    return true;
}

void SwarmModel::detach(int conn, Member& m) {
    auto it = std::find(m.conns.begin(), m.conns.end(), conn);
    if (it != m.conns.end()) m.conns.erase(it);
    auto& cn = conns_[static_cast<std::size_t>(conn)];
    const BoxId other = cn.other(m.box);
    const auto* o = find(other);
    const bool other_attached = o && std::find(o->conns.begin(), o->conns.end(), conn) != o->conns.end();
    if (!other_attached) {
        cn = Connection{};
        free_conns_.push_back(conn);
    }
}

void SwarmModel::close(int conn) {
    auto& cn = conns_[static_cast<std::size_t>(conn)];
    if (!cn.open) return;
    cn.open = false;
    for (BoxId side : {cn.a, cn.b}) {
        auto* m = find(side);
        if (!m) continue;
        const BoxId other = cn.other(side);
        auto& towards = cn.towards(side);
        if (m->downloading) {
            if (const auto* o = find(other))
                o->have.for_each([&](int p) { --m->availability[static_cast<std::size_t>(p)]; });
            for (int p : towards.queue)
                unask(*m, p);
        }
        towards.queue.clear();
    }
    // Each side lets go of it, except a downloader whose transfer over it is running: its adapter cancels
    // that transfer at its next pump.
    for (BoxId side : {cn.a, cn.b}) {
        auto* m = find(side);
        if (!m) continue;
        if (cn.towards(side).active >= 0 && m->downloading) continue;
        detach(conn, *m);
    }
}

void SwarmModel::start_download(BoxId box) {
    auto& m = at(box);
    if (m.downloading) return;
    m.downloading = true;
    m.wanted = PieceBits(pieces_);
    m.requested = PieceBits(pieces_);
    m.asked.clear();
    m.priority.assign(static_cast<std::size_t>(pieces_), kInitialPriority);
    for (int p = 0; p < pieces_; ++p)
        if (!m.have.test(p)) m.wanted.set(p);
    m.deadline.clear();
    m.partial.clear();
    m.upload_mode = false;
    m.availability.assign(static_cast<std::size_t>(pieces_), 0);
    for (int c : m.conns) {
        const auto& cn = conns_[static_cast<std::size_t>(c)];
        if (!cn.open) continue;
        if (const auto* o = find(cn.other(box)))
            o->have.for_each([&](int p) { ++m.availability[static_cast<std::size_t>(p)]; });
    }
    // libtorrent keeps the pieces of one priority in a random order.
    m.order.resize(static_cast<std::size_t>(pieces_));
    std::mt19937_64 rng(m.setup.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(box));
    for (int p = 0; p < pieces_; ++p)
        m.order[static_cast<std::size_t>(p)] = static_cast<std::uint32_t>(rng() >> 32);
}

void SwarmModel::stop_download(BoxId box) {
    auto& m = at(box);
    if (!m.downloading) return;
    m.downloading = false;
    for (int c : std::vector<int>(m.conns)) {
        auto& cn = conns_[static_cast<std::size_t>(c)];
        auto& pipe = cn.towards(box);
        pipe.queue.clear();
        pipe.active = -1;
        pipe.interested = false;
        pipe.unchoked = false;
        if (!cn.open) detach(c, m);
    }
    m.wanted = PieceBits();
    m.requested = PieceBits();
    m.asked.clear();
    m.priority.clear();
    m.deadline.clear();
    m.partial.clear();
    m.availability.clear();
}

void SwarmModel::on_have(BoxId box, int piece) {
    auto& m = at(box);
    if (!m.have.set(piece)) return;
    if (m.downloading) {
        m.wanted.clear(piece);
        m.requested.clear(piece);
        m.asked.erase(piece);
        m.deadline.erase(piece);
        m.partial.erase(piece);
    }
    for (int c : m.conns) {
        const auto& cn = conns_[static_cast<std::size_t>(c)];
        if (!cn.open) continue;
        auto& o = peer(cn, box);
        if (o.downloading) ++o.availability[static_cast<std::size_t>(piece)];
    }
}

void SwarmModel::on_lost(BoxId box, int piece) {
    auto& m = at(box);
    if (!m.have.clear(piece)) return;
    if (m.downloading && m.priority[static_cast<std::size_t>(piece)] > 0) m.wanted.set(piece);
    for (int c : m.conns) {
        const auto& cn = conns_[static_cast<std::size_t>(c)];
        if (!cn.open) continue;
        auto& o = peer(cn, box);
        if (o.downloading) --o.availability[static_cast<std::size_t>(piece)];
    }
}

void SwarmModel::set_priority(BoxId box, int piece, std::uint8_t prio) {
    auto& m = at(box);
    if (!m.downloading || piece < 0 || piece >= pieces_) return;
    m.priority[static_cast<std::size_t>(piece)] = prio;
    if (prio > 0 && !m.have.test(piece)) {
        m.wanted.set(piece);
    } else {
        m.wanted.clear(piece);
    }
}

void SwarmModel::set_deadline(BoxId box, int piece, double at_time) {
    auto& m = at(box);
    if (!m.downloading || m.have.test(piece)) return;
    m.deadline[piece] = at_time;
    set_priority(box, piece, 7);  // set_piece_deadline raises the piece to 7
}

void SwarmModel::reset_deadline(BoxId box, int piece) {
    auto& m = at(box);
    if (!m.downloading) return;
    if (m.deadline.erase(piece)) set_priority(box, piece, 1);  // libtorrent puts it back to 1
}

int SwarmModel::desired_queue(const Pipe& p) const {
    const double bytes = std::min<double>(kQueueSeconds * p.rate, kMaxQueueBytes);
    return std::max(1, static_cast<int>(std::ceil(bytes / static_cast<double>(piece_length_))));
}

void SwarmModel::ask(Member& d, int piece) {
    ++d.asked[piece];
    d.requested.set(piece);
}

void SwarmModel::unask(Member& d, int piece) {
    auto it = d.asked.find(piece);
    if (it == d.asked.end()) return;
    if (--it->second <= 0) {
        d.asked.erase(it);
        d.requested.clear(piece);
    }
}

std::vector<int> SwarmModel::pick(const Member& d, const Member& u, int n) const {
    std::vector<int> out;
    if (n <= 0 || !d.downloading) return out;
    auto candidate = [&](int p) { return u.have.test(p) && d.wanted.test(p) && !d.requested.test(p); };
    if (!d.deadline.empty()) {
        std::vector<std::pair<double, int>> by_time;
        for (const auto& [p, t] : d.deadline)
            if (candidate(p)) by_time.emplace_back(t, p);
        std::sort(by_time.begin(), by_time.end());
        for (const auto& [t, p] : by_time) {
            if (static_cast<int>(out.size()) >= n) return out;
            out.push_back(p);
        }
    }
    auto& ranked = ranked_;
    ranked.clear();
    d.wanted.for_each_and_not(u.have, d.requested, [&](int p) {
        if (d.deadline.count(p)) return;
        const auto i = static_cast<std::size_t>(p);
        const std::int64_t adj = d.partial.count(p) ? -3 : -2;  // pieces being downloaded come first
        const std::int64_t key =
            (static_cast<std::int64_t>(d.availability[i]) + 1) * (8 - d.priority[i]) * 3 + adj;
        ranked.push_back({key, d.order[i], p});
    });
    const auto want = static_cast<std::size_t>(n) - out.size();
    if (ranked.size() > want) {
        std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(want), ranked.end());
        ranked.resize(want);
    } else {
        std::sort(ranked.begin(), ranked.end());
    }
    for (const auto& r : ranked)
        out.push_back(r.piece);
    return out;
}

std::vector<BoxId> SwarmModel::would_request(BoxId up, int piece) const {
    std::vector<BoxId> out;
    const auto* u = find(up);
    if (!u) return out;
    for (int c : u->conns) {
        const auto& cn = conns_[static_cast<std::size_t>(c)];
        if (!cn.open) continue;
        const BoxId down = cn.other(up);
        const auto& pipe = cn.towards(down);
        if (!pipe.unchoked || pipe.active >= 0 || !pipe.queue.empty()) continue;
        const auto* d = &peer(cn, up);
        if (d && d->downloading && !d->upload_mode && asks(*d, *u) && d->wanted.test(piece) &&
            !d->requested.test(piece))
            out.push_back(down);
    }
    return out;
}

PumpResult SwarmModel::pump(BoxId down, double now, const std::function<std::uint64_t(int)>& delivered) {
    PumpResult r;
    auto& d = at(down);
    if (!d.downloading) return r;
    woken_.clear();
    pumped_.assign(d.conns.begin(), d.conns.end());  // a copy: a connection that closed is detached below
    for (int c : pumped_) {
        auto& cn = conns_[static_cast<std::size_t>(c)];
        auto& pipe = cn.towards(down);
        if (!cn.open) {
            // The uploader left: its transfer stops (the adapter cancels it and calls cancel_transfer, which
            // lets go of the connection).
            if (pipe.active >= 0) {
                r.cancel.push_back({c, pipe.active});
            } else {
                detach(c, d);
            }
            continue;
        }
        auto* u = &peer(cn, down);
        // Requests for pieces no longer wanted (had, given to the server, beyond the buffer) are dropped.
        for (auto it = pipe.queue.begin(); it != pipe.queue.end();) {
            if (!d.wanted.test(*it)) {
                unask(d, *it);
                it = pipe.queue.erase(it);
            } else {
                ++it;
            }
        }
        const bool asked = !d.upload_mode && asks(d, *u);
        // A seed has every piece wanted (no walk over its pieces, by far the most of this loop's time).
        const bool want =
            asked && (u->have.all() ? !d.wanted.none() : u->have.any_and_not(d.wanted, PieceBits()));
        if (want != pipe.interested) {
            // libtorrent's NOT_INTERESTED ends its slow start; the operator tier's is the plugin's own
            // message, which libtorrent does not hear of.
            if (!want && asked) pipe.pipeline.on_not_interested();
            pipe.interested = want;
            if (want) on_interested(*u, c, now);
        }
        ensure_round(*u, now);
        if (!pipe.unchoked || d.upload_mode) {
            for (int p : pipe.queue)
                unask(d, p);
            pipe.queue.clear();
            continue;
        }
        if (want && !d.upload_mode) {
            const int room =
                desired_queue(pipe) - (pipe.active >= 0 ? 1 : 0) - static_cast<int>(pipe.queue.size());
            for (int p : pick(d, *u, room)) {
                pipe.queue.push_back(p);
                ask(d, p);
            }
        }
        if (want && !d.upload_mode && pipe.active < 0 && pipe.queue.empty() && delivered) {
            if (auto sp = split_for(d, *u, c, delivered)) {
                auto& other = conns_[static_cast<std::size_t>(sp->conn)].towards(down);
                const auto to = other.to;
                // A transfer started in this same pump has sent nothing yet: it starts shorter instead
                // (the adapter has no flow of it to cut, and both would carry the second half).
                auto fresh = std::find_if(r.start.begin(), r.start.end(),
                                          [&](const TransferStart& x) { return x.conn == sp->conn; });
                if (fresh != r.start.end()) {
                    fresh->to = sp->at;
                    other.to = sp->at;
                } else {
                    r.split.push_back(*sp);
                }
                ask(d, sp->piece);
                pipe.active = sp->piece;
                pipe.from = sp->at;
                pipe.to = to;
                r.start.push_back({c, u->box, sp->piece, pipe.from, pipe.to});
                continue;
            }
        }
        if (pipe.active < 0 && !pipe.queue.empty()) {
            const int p = pipe.queue.front();
            pipe.queue.pop_front();
            pipe.active = p;
            pipe.from = 0;
            pipe.to = piece_size(p);
            if (auto got = d.partial.find(p); got != d.partial.end()) {
                const auto gap = got->second.gap_from(0, piece_size(p));
                pipe.from = gap.first;
                pipe.to = gap.second;
            }
            r.start.push_back({c, u->box, p, pipe.from, pipe.to});
        }
    }
    for (BoxId w : woken_)
        if (w != down && std::find(r.unchoked.begin(), r.unchoked.end(), w) == r.unchoked.end())
            r.unchoked.push_back(w);
    woken_.clear();
    return r;
}

SwarmModel::Carried SwarmModel::finish_transfer(int conn, BoxId down) {
    auto& cn = conns_[static_cast<std::size_t>(conn)];
    auto& pipe = cn.towards(down);
    Carried c{pipe.active, cn.other(down), pipe.to - pipe.from, false};
    pipe.delivered += c.bytes;
    pipe.active = -1;
    if (auto* d = find(down); d && d->downloading) {
        unask(*d, c.piece);
        if (!d->have.test(c.piece)) {
            auto& got = d->partial[c.piece];
            got.add(pipe.from, pipe.to);
            c.whole = got.covers(0, piece_size(c.piece));
            if (c.whole) d->partial.erase(c.piece);
        }
    }
    if (!cn.open)
        if (auto* d = find(down)) detach(conn, *d);
    return c;
}

SwarmModel::Carried SwarmModel::cancel_transfer(int conn, BoxId down, std::uint64_t delivered) {
    auto& cn = conns_[static_cast<std::size_t>(conn)];
    auto& pipe = cn.towards(down);
    delivered = std::min(delivered, pipe.to - pipe.from);
    Carried c{pipe.active, cn.other(down), delivered, false};
    pipe.delivered += delivered;
    if (auto* d = find(down); d && d->downloading && pipe.active >= 0) {
        unask(*d, pipe.active);
        if (!d->have.test(pipe.active) && delivered > 0)
            d->partial[pipe.active].add(pipe.from, pipe.from + delivered);
    }
    pipe.active = -1;
    if (!cn.open)
        if (auto* d = find(down)) detach(conn, *d);
    return c;
}

TransferStart SwarmModel::resume_transfer(int conn, BoxId down, int piece, std::uint64_t from,
                                          std::uint64_t to) {
    auto& cn = conns_[static_cast<std::size_t>(conn)];
    auto& pipe = cn.towards(down);
    pipe.active = piece;
    pipe.from = from;
    pipe.to = to;
    if (auto* d = find(down); d && d->downloading) ask(*d, piece);
    return {conn, cn.other(down), piece, from, to};
}

std::optional<TransferSplit> SwarmModel::split_for(Member& d, const Member& u, int conn,
                                                   const std::function<std::uint64_t(int)>& delivered) const {
    constexpr std::uint64_t block = 16 * 1024;
    std::optional<TransferSplit> best;
    std::uint64_t most = 0;
    for (int oc : d.conns) {
        if (oc == conn) continue;
        const auto& cn = conns_[static_cast<std::size_t>(oc)];
        const auto& other = cn.towards(d.box);
        if (other.active < 0 || !u.have.test(other.active) || d.asked.count(other.active) == 0 ||
            d.asked.at(other.active) > 1)
            continue;
        const auto at = other.from + delivered(oc);
        if (other.to <= at) continue;
        const auto left = other.to - at;
        if (left < 4 * block || left <= most) continue;
        // The second half of what is left, from a block boundary.
        const auto cut = (at + left / 2) / block * block;
        if (cut <= at || cut >= other.to) continue;
        most = left;
        best = TransferSplit{oc, other.active, cut};
    }
    return best;
}

void SwarmModel::set_rate(int conn, BoxId down, double bytes_per_second, double seconds) {
    auto& pipe = conns_[static_cast<std::size_t>(conn)].towards(down);
    pipe.rate = bytes_per_second;
    pipe.pipeline.on_rate(bytes_per_second, seconds, pipe.unchoked);
}

}  // namespace toast::sim
