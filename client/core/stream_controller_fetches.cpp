// StreamController's server side: what the server is asked for each tick (plan_server_fetches, with the
// parts peers are sending left to them, plan_parts, and the held pieces settled, settle_held), and what
// becomes of its answers (written, held, wasted, refused). The tick and the peers' side are in
// stream_controller.cpp.
#include "client/core/stream_controller.hpp"

#include <algorithm>

namespace toast::client {

bool StreamController::on_hash_failed(PieceIndex p, SteadyTime now) {
    // Peers' blocks failed the check while the server's bytes waited for them, or while the server was asked
    // nothing of the piece: it is fetched again as any other. (With a request of it running, its answer is
    // written as it is, fails the check, and the piece is fetched whole.)
    if (server_.held.holding(p) && !server_.held.request_running(p)) {
        counters_.bytes_server_wasted += server_.held.drop(p)->bytes.value();
        fallback_.on_fetch_abandoned(p);
    }
    auto written = server_.writing.find(p);
    if (written == server_.writing.end()) return false;
    ++counters_.hash_failures;
    counters_.bytes_server_wasted += written->second.bytes.value();
    server_.writing.erase(written);
    fallback_.on_fetch_failed(p, now);
    return true;
}

bool StreamController::on_server_data(PieceIndex p, Bytes size, SteadyTime now) {
    auto started = server_.fetching.find(p);
    auto at = started != server_.fetching.end() ? started->second : now;
    if (started != server_.fetching.end()) server_.fetching.erase(started);
    if (!geometry_.valid(p) || pieces_.had.has(p)) {
        // A peer delivered it while the request was running.
        counters_.bytes_server_wasted += size.value();
        if (fallback_.in_flight(p)) fallback_.on_fetch_abandoned(p);
        return false;
    }
    // Held for the peers' blocks, or the blocks peers did not deliver in time: with them the piece is whole.
    if (auto whole = server_.held.on_server_data(p, size, now)) server_.writing[p] = {at, *whole};
    return true;
}

void StreamController::on_fetch_stopped(PieceIndex p, Bytes received) {
    server_.fetching.erase(p);
    counters_.bytes_server_wasted += received.value();
}

void StreamController::on_fetch_failed(PieceIndex p, FetchFault fault,
                                       const std::optional<UnavailableBytes>& unavailable) {
    if (fault != FetchFault::piece) return;
    if (geometry_.valid(p) && !pieces_.had.has(p)) server_.refused.set(p);
    if (!unavailable || unavailable->first >= geometry_.end()) return;
    // piece_at maps offsets beyond the end to the last piece.
    for (auto q = geometry_.piece_at(unavailable->first); q <= geometry_.piece_at(unavailable->last); ++q)
        if (!pieces_.had.has(q)) server_.refused.set(q);
}

void StreamController::on_fetch_refused(PieceIndex p) {
    server_.fetching.erase(p);
    server_.held.drop(p);
    fallback_.on_fetch_abandoned(p);
}

void StreamController::set_urgent_pieces(std::vector<PieceIndex> pieces) {
    server_.urgent_extra = std::move(pieces);
}

std::vector<PieceIndex> StreamController::urgent_pieces(const PieceSet& peer_owned) const {
    // A read-ahead piece peers are sending is theirs until the server's last moment, as for needed pieces.
    auto out = watcher_.urgent_reads({&peer_owned, fallback_.lead()});
    for (auto p : server_.urgent_extra)
        if (!pieces_.had.has(p)) out.push_back(p);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
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
    const bool finding_peers = setup_.has_trackers && now - started_ < tuning_.discovery_grace &&
                               (!discovery_.tracker_answered || known > 0);
    PieceSet peer_owned(n);
    for (auto p : plan.pieces.wanted) {
        auto i = static_cast<std::size_t>(p.value());
        if (finding_peers || (i < by_viewers.size() && by_viewers[i] > 0)) peer_owned.set(p);
    }
    const bool peers_settled = now - started_ >= tuning_.discovery_grace && peers_.figures.connected > 0;
    const FallbackInput fin{
        .had = pieces_.had,
        .playhead = watcher_.playhead_piece(),
        .piece_duration = geometry_.piece_duration(),
        .into_playhead_piece = watcher_.into_playhead_piece(),
        .horizon = horizon_.horizon_time(),
        .urgent = urgent_pieces(peer_owned),
        // "No peer has it" means nothing until peers had time to send their bitfields, nor while no peer is
        // connected: every piece would qualify.
        .availability = peers_settled ? &by_viewers : nullptr,
        .request_end = buffer.request_end,
        .suspended = buffer.suspend,
        .peer_sending = &in_flight,
        .peer_owned = &peer_owned,
    };
    bool is_late = false;
    if (setup_.has_server) {
        auto planned = fallback_.plan(fin, now);
        PieceSet fetched(n);
        int late = 0;
        for (const auto& f : planned) {
            if (f.reason == FetchReason::urgent) ++counters_.urgent_fetches;
            // Left to peers until the server's last moment, or started by them, and they did not make it.
            if (f.reason != FetchReason::ahead && (server_.peer_owned.has(f.piece) || in_flight.has(f.piece)))
                ++late;
            server_.fetching[f.piece] = now;
            fetched.set(f.piece);
        }
        plan_parts(sample, planned);
        // What the server fetches now is no longer asked of peers (unless the server does not answer).
        if (!planned.empty() && sample.server_up) drop_from_plan(plan.pieces, fetched);
        plan.fetches.insert(plan.fetches.end(), planned.begin(), planned.end());
        counters_.late_pieces += static_cast<std::uint64_t>(late);
        is_late = late > 0;
    }
    server_.peer_owned = std::move(peer_owned);
    plan_operator_tier(sample, peers_settled ? &by_viewers : nullptr, is_late, buffer, plan);
}

void StreamController::plan_operator_tier(const SwarmSample& sample, const std::vector<int>* by_viewers,
                                          bool late, const BufferRoom& buffer, ControllerPlan& plan) {
    if (setup_.ask_operator == AskOperator::always) {
        plan.ask_operator = true;
        return;
    }
    // The fallback's reach: the pieces it fetches now when they are due, and ahead when no viewer holds them.
    const auto reach = fallback_.need_window(horizon_.horizon_time()) + tuning_.fetch_ahead_window;
    const OperatorTierInput in{
        .had = pieces_.had,
        .playhead = watcher_.playhead_piece(),
        .piece_duration = geometry_.piece_duration(),
        .into_playhead_piece = watcher_.into_playhead_piece(),
        .reach = reach,
        .viewer_availability = by_viewers,
        .request_end = buffer.request_end,
        .viewers = peers_.figures.connected - peers_.figures.operator_peers,
        .late = late,
        .running = sample.now - started_,
    };
    plan.ask_operator = operator_tier_.update(in, sample.now);
}

void StreamController::plan_parts(const SwarmSample& sample, std::vector<FallbackFetch>& fetches) {
    const auto now = sample.now;
    // A fetch with time to spare (not a player's read, nor a retry) leaves the blocks peers are sending to
    // them: what has not arrived by the next tick is fetched then (settle_held), and the time to spare must
    // hold a second fetch. Not while the server refuses pieces (a lost block, failing disks): its answers
    // then come late, and the tick's wait would come out of the piece's margin: viewers would stall more
    // often.
    const auto await_until = 2 * fallback_.fetch_estimate() + tuning_.tick + tuning_.await_guard;
    const bool server_degraded = server_.refused.count().value() > 0;
    for (auto it = fetches.begin(); it != fetches.end();) {
        auto& f = *it;
        // A retry after a failure (perhaps a peer's block failed the check with the server's) is fetched
        // whole, as is the rest of a held piece.
        auto pp = std::find_if(sample.progress.begin(), sample.progress.end(),
                               [&](const PieceProgress& x) { return x.piece == f.piece; });
        if (f.revalidate || server_.held.holding(f.piece) || pp == sample.progress.end()) {
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
            server_.held.hold(f.piece, std::move(share.awaited), now, nothing_asked);
            if (nothing_asked) {
                // Every block peers have not delivered is on its way: no request.
                server_.fetching.erase(f.piece);
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
    auto settled = server_.held.settle(sample.progress, geometry_, now);
    for (const auto& r : settled.release) {
        plan.release.push_back(r.piece);
        server_.writing[r.piece] = {now - r.took, r.bytes};
    }
    // Late: the server sends those blocks too, now, at the piece's last moment.
    for (const auto& rest : settled.fetch) {
        plan.fetches.push_back({.piece = rest.piece,
                                .reason = FetchReason::needed,
                                .revalidate = false,
                                .due = watcher_.time_until_needed(rest.piece),
                                .part = rest.part});
        server_.fetching[rest.piece] = now;
    }
}

}  // namespace toast::client
