// The TelemetrySink of a running server: boxes' QoE reports, rate-limited (RateLimiter, under a mutex) and
// added up into Prometheus metrics on /metrics. docs/server.md lists the metrics; the Grafana dashboard and
// deploy/prometheus/toast-alerts.yml read them.
#pragma once

#include <mutex>

#include "server/core/access_routes.hpp"
#include "server/core/rate_limiter.hpp"
#include "server/core/server_config.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

RateLimiter::Limits telemetry_limits(const TelemetryConfig& config);

class QoeMetrics final : public TelemetrySink {
  public:
    QoeMetrics(MetricsRegistry& registry, const TelemetryConfig& config);
    Outcome submit(std::string_view reporter, const QoeReport& report) override;
    // SIGHUP: new rate limits.
    void set_config(const TelemetryConfig& config);

  private:
    std::mutex mutex_;
    RateLimiter limiter_;
    Counter& accepted_;
    Counter& limited_subscriber_;
    Counter& limited_overall_;
    Counter& sessions_;
    Counter& sessions_ended_;
    Histogram& startup_;
    Histogram& stall_;
    Counter& stalls_;
    Counter& stall_seconds_;
    Counter& seeks_;
    Counter& played_seconds_;
    Counter& bytes_peers_;
    Counter& bytes_server_;
    Counter& bytes_uploaded_;
};

}  // namespace toast::server
