#include "server/http/qoe_metrics.hpp"

#include <cmath>

namespace toast::server {

namespace {

constexpr const char* kReports = "toast_qoe_reports_total";
constexpr const char* kReportsHelp = "Box QoE reports (POST /telemetry) by result";
constexpr const char* kBytes = "toast_qoe_bytes_total";
constexpr const char* kBytesHelp = "Title bytes boxes received, by source (peers, server), as they reported";

// Startup: from a quarter second (a warm swarm) to a minute (a box that gave up on its peers).
std::vector<double> startup_buckets() {
    return {0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60};
}

// Stalls: a rebuffering blip to a long outage.
std::vector<double> stall_buckets() {
    return {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300};
}

// Counters count whole units: seconds are kept as milliseconds' worth, rounded.
std::uint64_t whole(double v) {
    return v <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(v));
}

}  // namespace

RateLimiter::Limits telemetry_limits(const TelemetryConfig& c) {
    RateLimiter::Limits l;
    l.rate = c.per_subscriber_per_minute / 60.0;
    l.burst = static_cast<double>(c.per_subscriber_burst);
    l.overall_rate = c.overall_per_second;
    l.overall_burst = static_cast<double>(c.overall_burst);
    l.max_keys = c.tracked_subscribers;
    return l;
}

QoeMetrics::QoeMetrics(MetricsRegistry& m, const TelemetryConfig& config)
    : limiter_(telemetry_limits(config)),
      accepted_(m.counter(kReports, kReportsHelp, {{"result", "accepted"}})),
      limited_subscriber_(m.counter(kReports, kReportsHelp, {{"result", "rate_limited_subscriber"}})),
      limited_overall_(m.counter(kReports, kReportsHelp, {{"result", "rate_limited_overall"}})),
      sessions_(
          m.counter("toast_qoe_sessions_total", "Viewing sessions boxes reported (their first report)")),
      sessions_ended_(
          m.counter("toast_qoe_sessions_ended_total", "Viewing sessions whose final report came")),
      startup_(m.histogram("toast_qoe_startup_seconds",
                           "Time from a box asking for a title to playback starting", startup_buckets())),
      stall_(m.histogram("toast_qoe_stall_seconds", "Length of each stall boxes reported", stall_buckets())),
      stalls_(m.counter("toast_qoe_stalls_total", "Stalls boxes reported")),
      stall_seconds_(m.counter("toast_qoe_stall_milliseconds_total", "Time boxes spent stalled, in ms")),
      seeks_(m.counter("toast_qoe_seeks_total", "Seeks boxes reported")),
      played_seconds_(m.counter("toast_qoe_played_milliseconds_total", "Media time boxes played, in ms")),
      bytes_peers_(m.counter(kBytes, kBytesHelp, {{"source", "peers"}})),
      bytes_server_(m.counter(kBytes, kBytesHelp, {{"source", "server"}})),
      bytes_uploaded_(
          m.counter("toast_qoe_uploaded_bytes_total", "Title bytes boxes uploaded to other boxes")) {}

void QoeMetrics::set_config(const TelemetryConfig& config) {
    std::lock_guard lock(mutex_);
    limiter_.set_limits(telemetry_limits(config));
}

TelemetrySink::Outcome QoeMetrics::submit(std::string_view reporter, const QoeReport& q) {
    RateLimiter::Decision d;
    {
        std::lock_guard lock(mutex_);
        d = limiter_.take(reporter, std::chrono::steady_clock::now());
    }
    if (!d.allowed) {
        (d.overall ? limited_overall_ : limited_subscriber_).inc();
        return {false, d.retry_after};
    }
    accepted_.inc();
    if (q.sequence == 0) sessions_.inc();
    if (q.final) sessions_ended_.inc();
    if (q.startup_seconds) startup_.observe(*q.startup_seconds);
    for (double s : q.stall_durations)
        stall_.observe(s);
    stalls_.inc(q.stall_count);
    stall_seconds_.inc(whole(q.stall_seconds * 1000));
    seeks_.inc(q.seeks);
    played_seconds_.inc(whole(q.played_seconds * 1000));
    bytes_peers_.inc(q.bytes_from_peers);
    bytes_server_.inc(q.bytes_from_server);
    bytes_uploaded_.inc(q.bytes_uploaded);
    return {true, {}};
}

}  // namespace toast::server
