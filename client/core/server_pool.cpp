#include "client/core/server_pool.hpp"

#include <algorithm>

#include "toast/common/tier.hpp"

namespace toast::client {

std::chrono::milliseconds backoff_delay(int attempt, std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max) {
    if (attempt <= 0) return std::chrono::milliseconds(0);
    auto delay = initial;
    for (int i = 1; i < attempt && delay < max; ++i)
        delay *= 2;
    return std::min(delay, max);
}

ServerPool::ServerPool(std::size_t servers, Backoff backoff) : backoff_(backoff), servers_(servers) {}

std::optional<std::size_t> ServerPool::choose(Clock::time_point now, std::optional<std::size_t> avoid) const {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        const auto& s = servers_[i];
        if (s.ready_at > now || (avoid && i == *avoid)) continue;
        if (!best) {
            best = i;
            continue;
        }
        const auto& b = servers_[*best];
        // Healthy before recently failed, on time before recently late, then unmeasured (explore), then
        // fastest; ties keep the earlier URL.
        bool s_failed = s.failures > 0, b_failed = b.failures > 0;
        bool s_late = s.late_until > now, b_late = b.late_until > now;
        bool s_unknown = s.throughput == 0, b_unknown = b.throughput == 0;
        if (s_failed != b_failed) {
            if (!s_failed) best = i;
        } else if (s_late != b_late) {
            if (!s_late) best = i;
        } else if (s_unknown != b_unknown) {
            if (s_unknown) best = i;
        } else if (s.throughput > b.throughput) {
            best = i;
        }
    }
    if (!best && avoid && *avoid < servers_.size() && servers_[*avoid].ready_at <= now) best = avoid;
    return best;
}

std::optional<std::size_t> ServerPool::choose_holder(Clock::time_point now,
                                                     std::span<const std::size_t> holders,
                                                     std::optional<std::size_t> avoid,
                                                     std::uint64_t tie_break) const {
    std::vector<HolderView> views;
    for (auto h : holders) {
        if (h >= servers_.size() || (avoid && h == *avoid)) continue;
        const auto& s = servers_[h];
        views.push_back({NodeIndex(static_cast<std::uint32_t>(h)), s.ready_at <= now, s.late_until > now,
                         s.load, std::chrono::duration<double, std::milli>(now - s.load_at).count()});
    }
    const auto chosen = toast::choose_holder(views, tie_break);
    if (!chosen) return std::nullopt;
    return chosen->value();
}

ServerPool::Clock::time_point ServerPool::next_ready() const {
    auto earliest = Clock::time_point::max();
    for (const auto& s : servers_)
        earliest = std::min(earliest, s.ready_at);
    return earliest;
}

void ServerPool::on_success(std::size_t server, std::uint64_t bytes, std::chrono::nanoseconds took) {
    auto& s = servers_.at(server);
    s.failures = 0;
    s.ready_at = {};
    double seconds = std::max(std::chrono::duration<double>(took).count(), 1e-6);
    double rate = static_cast<double>(bytes) / seconds;
    s.throughput = s.throughput == 0 ? rate : 0.7 * s.throughput + 0.3 * rate;
}

bool ServerPool::reachable(Clock::time_point now) const {
    return std::any_of(servers_.begin(), servers_.end(), [&](const Server& s) {
        return s.failures == 0 && (!s.failed_at || now - *s.failed_at >= backoff_.settle);
    });
}

void ServerPool::on_failure(std::size_t server, Clock::time_point now,
                            std::optional<std::chrono::seconds> retry_after) {
    auto& s = servers_.at(server);
    ++s.failures;
    s.failed_at = now;
    auto rest = std::chrono::milliseconds(backoff_delay(s.failures, backoff_.initial, backoff_.max));
    if (retry_after) rest = std::max<std::chrono::milliseconds>(rest, *retry_after);
    s.ready_at = now + rest;
}

void ServerPool::on_late(std::size_t server, Clock::time_point now) {
    servers_.at(server).late_until = now + backoff_.max;
}

}  // namespace toast::client
