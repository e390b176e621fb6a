#include "client/core/qoe_reporter.hpp"

#include <algorithm>

namespace toast::client {

namespace {

double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

// Totals only grow; a smaller one (a counter that started again) counts from zero rather than wrapping.
std::uint64_t delta(std::uint64_t now, std::uint64_t before) {
    return now >= before ? now - before : now;
}

}  // namespace

QoeReporter::QoeReporter(std::string session_id, std::string title, std::chrono::nanoseconds interval,
                         SteadyTime start)
    : session_(std::move(session_id)), title_(std::move(title)), interval_(interval), last_(start) {}

std::optional<QoeReport> QoeReporter::on_tick(const QoeSample& sample, SteadyTime now) {
    if (ended_ || now - last_ < interval_) return std::nullopt;
    last_ = now;
    return make(sample, false);
}

std::optional<QoeReport> QoeReporter::on_end(const QoeSample& sample) {
    if (ended_) return std::nullopt;
    ended_ = true;
    return make(sample, true);
}

QoeReport QoeReporter::make(const QoeSample& s, bool final) {
    QoeReport q;
    q.session = session_;
    q.sequence = sequence_++;
    q.title = title_;
    q.final = final;
    if (s.startup_ms && !startup_sent_) {
        q.startup_seconds = std::max<double>(0, static_cast<double>(*s.startup_ms) / 1000.0);
        startup_sent_ = true;
    }
    if (s.stalls) {
        const auto& all = *s.stalls;
        for (std::size_t i = std::min(stalls_sent_, all.size()); i < all.size(); ++i) {
            const double d = std::min(seconds(all[i]), kMaxReportSeconds);
            ++q.stall_count;
            q.stall_seconds += d;
            if (q.stall_durations.size() < kMaxStallDurations) q.stall_durations.push_back(d);
        }
        stalls_sent_ = all.size();
    }
    q.stall_seconds = std::min(q.stall_seconds, kMaxReportSeconds);
    q.seeks = delta(s.seeks, sent_.seeks);
    q.played_seconds = std::min(kMaxReportSeconds, std::max(0.0, seconds(s.played - sent_.played)));
    q.bytes_from_peers = delta(s.bytes_from_peers, sent_.bytes_from_peers);
    q.bytes_from_server = delta(s.bytes_from_server, sent_.bytes_from_server);
    q.bytes_uploaded = delta(s.bytes_uploaded, sent_.bytes_uploaded);
    sent_ = s;
    sent_.stalls = nullptr;
    return q;
}

}  // namespace toast::client
