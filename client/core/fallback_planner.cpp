#include "client/core/fallback_planner.hpp"

#include <algorithm>
#include <iterator>

namespace toast::client {

using std::chrono::nanoseconds;

namespace {

nanoseconds time_until_needed(const FallbackInput& in, PieceIndex p) {
    if (p <= in.playhead) return nanoseconds(0);
    auto t = in.piece_duration * (p - in.playhead).value() - in.into_playhead_piece;
    return t.count() > 0 ? t : nanoseconds(0);
}

bool has(const PieceSet* set, PieceIndex p) {
    return set != nullptr && set->has(p);
}

nanoseconds saturating_add(nanoseconds a, nanoseconds b) {
    if (b.count() > 0 && a > nanoseconds::max() - b) return nanoseconds::max();
    return a + b;
}

}  // namespace

std::string_view to_string(FetchReason r) {
    switch (r) {
        case FetchReason::urgent:
            return "urgent";
        case FetchReason::needed:
            return "needed";
        case FetchReason::ahead:
            return "ahead";
    }
    return "unknown";
}

FallbackPlanner::FallbackPlanner(FallbackConfig config)
    : config_(config), estimate_(config.initial_fetch_estimate) {}

nanoseconds FallbackPlanner::need_window(nanoseconds horizon) const {
    return saturating_add(horizon, lead());
}

nanoseconds FallbackPlanner::lead() const {
    return saturating_add(estimate_, config_.lead_margin);
}

bool FallbackPlanner::startable(PieceIndex p, const FallbackInput& input, SteadyTime now) const {
    if (!input.had.contains_index(p) || input.had.has(p) || in_flight(p)) return false;
    auto f = failures_.find(p);
    return f == failures_.end() || now >= f->second.retry_at;
}

std::vector<FallbackFetch> FallbackPlanner::plan(const FallbackInput& input, SteadyTime now) {
    std::vector<FallbackFetch> out;
    auto start = [&](PieceIndex p, FetchReason why) {
        in_flight_.emplace(p, why);
        const auto due = why == FetchReason::urgent ? nanoseconds(0)
                                                    : std::max(nanoseconds(0), time_until_needed(input, p));
        out.push_back({.piece = p,
                       .reason = why,
                       .revalidate = failures_.count(p) != 0,
                       .due = due,
                       .part = std::nullopt});
        ++started_;
        if (why == FetchReason::ahead) ++fetched_ahead_;
    };
    auto count = [&](FetchReason why) {
        return static_cast<std::size_t>(std::count_if(in_flight_.begin(), in_flight_.end(),
                                                      [&](const auto& e) { return e.second == why; }));
    };

    auto urgent = input.urgent;
    std::sort(urgent.begin(), urgent.end());
    urgent.erase(std::unique(urgent.begin(), urgent.end()), urgent.end());
    for (auto p : urgent)
        if (startable(p, input, now)) start(p, FetchReason::urgent);

    const auto n = input.had.size().value();
    const auto end = input.request_end ? std::min(input.request_end->value(), n) : n;
    const auto window = need_window(input.horizon);
    std::size_t needed = count(FetchReason::needed);
    const auto last_moment = lead();
    for (PieceIndex p = std::max(input.playhead, PieceIndex(0)); p.value() < end; ++p) {
        auto due = time_until_needed(input, p);
        if (due > window) break;
        // A full buffer still lets the piece under the playhead through (playback cannot free space without
        // it), and the needed pieces inside the buffer's window: request_end already counts room for every
        // missing piece before it, so fetching them cannot overrun the limit. Holding each back until it is
        // under the playhead would stall playback for a fetch time at each one.
        if (input.suspended && p != input.playhead && !(input.request_end && p < *input.request_end)) break;
        if (needed >= config_.max_concurrent) break;
        if (!startable(p, input, now)) continue;
        if (due > last_moment && (has(input.peer_sending, p) || has(input.peer_owned, p))) continue;
        start(p, FetchReason::needed);
        ++needed;
    }

    if (input.availability && !input.suspended) {
        fetched_ahead_pieces_.erase(fetched_ahead_pieces_.begin(),
                                    fetched_ahead_pieces_.lower_bound(input.playhead));
        std::size_t ahead = count(FetchReason::ahead) + fetched_ahead_pieces_.size();
        const auto ahead_end = saturating_add(window, config_.ahead_window);
        for (PieceIndex p = std::max(input.playhead, PieceIndex(0));
             p.value() < end && ahead < config_.max_ahead; ++p) {
            auto due = time_until_needed(input, p);
            if (due <= window) continue;
            if (due > ahead_end) break;
            auto i = static_cast<std::size_t>(p.value());
            bool nobody_has = i >= input.availability->size() || (*input.availability)[i] <= 0;
            if (!nobody_has || !startable(p, input, now)) continue;
            start(p, FetchReason::ahead);
            ++ahead;
        }
    }
    return out;
}

void FallbackPlanner::on_fetch_succeeded(PieceIndex p, nanoseconds took) {
    auto it = in_flight_.find(p);
    if (it == in_flight_.end()) return;
    if (it->second == FetchReason::ahead) fetched_ahead_pieces_.insert(p);
    in_flight_.erase(it);
    failures_.erase(p);
    ++succeeded_;
    if (took.count() <= 0) return;
    if (!estimated_) {
        estimate_ = took;
        estimated_ = true;
    } else {
        auto next = config_.ewma_alpha * static_cast<double>(took.count()) +
                    (1.0 - config_.ewma_alpha) * static_cast<double>(estimate_.count());
        estimate_ = nanoseconds(static_cast<std::int64_t>(next));
    }
}

void FallbackPlanner::on_fetch_failed(PieceIndex p, SteadyTime now) {
    if (in_flight_.erase(p) == 0) return;
    ++failed_;
    auto& f = failures_[p];
    ++f.attempts;
    auto backoff = config_.backoff_initial;
    for (std::uint32_t i = 1; i < f.attempts && backoff < config_.backoff_max; ++i)
        backoff *= 2;
    f.retry_at = now + std::min(backoff, config_.backoff_max);
}

void FallbackPlanner::on_fetch_abandoned(PieceIndex p) {
    in_flight_.erase(p);
    failures_.erase(p);
}

std::vector<PieceIndex> FallbackPlanner::in_flight_pieces() const {
    std::vector<PieceIndex> out;
    for (const auto& [p, why] : in_flight_)
        out.push_back(p);
    return out;
}

std::optional<SteadyTime> FallbackPlanner::retry_at(PieceIndex p) const {
    auto f = failures_.find(p);
    if (f == failures_.end()) return std::nullopt;
    return f->second.retry_at;
}

PiecePart server_part(Bytes piece_size, Bytes block_size, const std::vector<bool>& delivered) {
    const auto size = piece_size.value();
    const auto block = block_size.value();
    if (block == 0 || size == 0) return {Bytes(0), piece_size};
    const auto blocks = static_cast<std::size_t>((size + block - 1) / block);
    auto held = [&](std::size_t b) { return b < delivered.size() && delivered[b]; };
    std::size_t first = 0;
    while (first < blocks && held(first))
        ++first;
    if (first == blocks) first = blocks - 1;
    std::size_t last = blocks - 1;
    while (last > first && held(last))
        --last;
    auto begin = static_cast<std::uint64_t>(first) * block;
    auto end = std::min<std::uint64_t>(static_cast<std::uint64_t>(last + 1) * block, size);
    return {Bytes(begin), Bytes(end - begin)};
}

std::vector<bool> arriving_blocks(const std::vector<bool>& delivered, const std::vector<int>& queue_position,
                                  int committed) {
    std::vector<bool> out(queue_position.size(), false);
    for (std::size_t b = 0; b < queue_position.size(); ++b) {
        const bool here = b < delivered.size() && delivered[b];
        out[b] = !here && queue_position[b] >= 0 && queue_position[b] < committed;
    }
    return out;
}

ServerShare server_share(Bytes piece_size, Bytes block_size, const std::vector<bool>& delivered,
                         const std::vector<bool>& arriving) {
    const auto size = piece_size.value();
    const auto block = block_size.value();
    if (block == 0 || size == 0) return {{Bytes(0), piece_size}, {}};
    const auto blocks = static_cast<std::size_t>((size + block - 1) / block);
    auto at = [](const std::vector<bool>& v, std::size_t b) { return b < v.size() && v[b]; };
    std::vector<bool> left(blocks, false);  // delivered, or left to the peer sending it
    std::vector<std::int32_t> waiting;      // arriving, not delivered
    for (std::size_t b = 0; b < blocks; ++b) {
        left[b] = at(delivered, b) || at(arriving, b);
        if (at(arriving, b) && !at(delivered, b)) waiting.push_back(static_cast<std::int32_t>(b));
    }
    if (waiting.empty()) return {server_part(piece_size, block_size, delivered), {}};
    if (std::all_of(left.begin(), left.end(), [](bool l) { return l; }))
        return {{Bytes(0), Bytes(0)}, waiting};
    // Some block is for the server: server_part of what is left is exactly its range.
    ServerShare out{server_part(piece_size, block_size, left), {}};
    const auto part_first = out.part.offset.value() / block;
    const auto part_end = (out.part.offset.value() + out.part.length.value() + block - 1) / block;
    std::copy_if(waiting.begin(), waiting.end(), std::back_inserter(out.awaited), [&](std::int32_t b) {
        const auto i = static_cast<std::uint64_t>(b);
        return i < part_first || i >= part_end;
    });
    return out;
}

}  // namespace toast::client
