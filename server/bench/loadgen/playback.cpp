#include "server/bench/loadgen/playback.hpp"

#include <algorithm>

namespace toast::loadgen {

NeedCurve NeedCurve::constant(double bytes_per_second, std::uint64_t size) {
    NeedCurve c;
    c.rate_ = bytes_per_second;
    c.size_ = size;
    return c;
}

NeedCurve NeedCurve::rounds(std::chrono::nanoseconds round, const std::vector<std::uint64_t>& bytes) {
    NeedCurve c;
    c.round_ = std::chrono::duration<double>(round).count();
    std::uint64_t total = 0;
    for (auto b : bytes) {
        total += b;
        c.cumulative_.push_back(total);
    }
    c.size_ = total;
    return c;
}

double NeedCurve::duration() const {
    if (rate_ > 0) return static_cast<double>(size_) / rate_;
    return round_ * static_cast<double>(cumulative_.size());
}

double NeedCurve::playable(std::uint64_t bytes) const {
    if (bytes >= size_) return duration();
    if (rate_ > 0) return static_cast<double>(bytes) / rate_;
    // Round k can be played once everything it needs is held: the first round needing more than `bytes`
    // is where the playhead stops.
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), bytes);
    return round_ * static_cast<double>(it - cumulative_.begin());
}

Playback::Playback(NeedCurve need, std::uint64_t initial, Clock::time_point requested,
                   std::optional<double> watch)
    : need_(std::move(need)),
      initial_(std::min(initial, need_.size())),
      requested_(requested),
      limit_(watch ? std::min(*watch, need_.duration()) : need_.duration()) {}

double Playback::seconds_since_request(Clock::time_point t) const {
    return std::chrono::duration<double>(t - requested_).count();
}

bool Playback::done() const {
    return finished_ || (started_ && position_ >= limit_);
}

std::optional<double> Playback::start_latency() const {
    if (!started_) return std::nullopt;
    return start_;
}

void Playback::advance(double now) {
    if (!started_ || stalled_since_ || position_ >= limit_) {
        last_ = now;
        return;
    }
    const double reachable = std::min(limit_, need_.playable(received_));
    const double wanted = position_ + (now - last_);
    if (wanted > reachable && reachable < limit_) {
        // Ran dry between the last update and now.
        stalled_since_ = last_ + (reachable - position_);
        position_ = reachable;
    } else {
        position_ = std::min(wanted, limit_);
    }
    last_ = now;
}

void Playback::on_bytes(Clock::time_point t, std::uint64_t received) {
    if (finished_) return;
    const double now = seconds_since_request(t);
    advance(now);  // with what was held before these bytes
    received_ = std::max(received_, received);
    if (!started_) {
        if (received_ >= initial_ && received_ > 0) {
            started_ = true;
            start_ = now;
            last_ = now;
        }
        return;
    }
    if (stalled_since_ && need_.playable(received_) > position_) {
        stalls_.push_back({*stalled_since_, now - *stalled_since_});
        stalled_since_.reset();
        last_ = now;
    }
}

void Playback::finish(Clock::time_point t) {
    if (finished_) return;
    const double now = seconds_since_request(t);
    advance(now);
    if (stalled_since_) {
        stalls_.push_back({*stalled_since_, now - *stalled_since_});
        stalled_since_.reset();
    }
    finished_ = true;
}

}  // namespace toast::loadgen
