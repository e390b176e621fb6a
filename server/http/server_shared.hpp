// State shared by the listeners and every session of one HttpService (private to server/http).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "server/core/access_policy.hpp"
#include "server/core/disk_control.hpp"
#include "server/core/request_handler.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "server/http/qoe_metrics.hpp"
#include "server/http/response_transfer.hpp"
#include "server/http/stream_admission.hpp"
#include "server/io/push_coordinator.hpp"
#include "toast/common/access_log.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class HttpSession;

// Counters and gauges this layer exports (the store registers its own).
class HttpMetrics {
  public:
    explicit HttpMetrics(MetricsRegistry& registry);
    void count_response(unsigned status);
    // toast_http_bytes_sent_total for one title (sessions keep the reference while they send it).
    Counter& bytes_sent(const std::string& title);
    Gauge& open_connections;
    Counter& rejected_connections;
    Histogram& response_seconds;
    // toast_access_denied_total{reason}: content requests refused by the signed-URL check.
    void count_denial(const std::string& reason, std::uint64_t n = 1);
    Counter& renewals;
    Counter& tls_handshake_failures;
    Gauge& max_connections;  // the limit in force, so that dashboards and alerts can show how near it is

  private:
    MetricsRegistry& registry_;
    std::array<std::atomic<Counter*>, 600> by_status_{};
};

// What a reload (SIGHUP) may change while serving. Acceptors and sessions read the current value each time
// they need one, so a change applies to the next connection, request or response.
struct HttpSettings {
    std::size_t max_connections = 0;
    std::chrono::nanoseconds idle_timeout{0};
    std::size_t header_limit = 0;
    std::size_t max_pipelined = 0;
    HandlerLimits limits;
    ResponseTransfer::Limits transfer_limits;
    AccessPolicy access;

    static HttpSettings from(const ServerConfig& config);
};

class TierClient;

struct ServerShared {
    ServerShared(const ServerConfig& c, TitleStore& s, DiskControl& d, MetricsRegistry& m, TierClient* t);

    ServerConfig config;  // as at start-up: what a reload cannot change
    TitleStore& store;
    DiskControl& disks;
    MetricsRegistry& registry;
    HttpMetrics metrics;
    std::unique_ptr<StreamAdmission> admission;  // null: every /stream is accepted
    TierClient* tier;                            // null: not a node of a tier
    NodeReport node_report;                      // Toast-Load and GET /tier
    Counter& redirected_streams;                 // /stream sent to another node of the tier
    QoeMetrics qoe;                              // POST /telemetry's sink
    std::unique_ptr<PushCoordinator> push;       // catalogue demand, and pre-placement when enabled

    std::shared_ptr<const HttpSettings> settings() const { return settings_.load(); }
    void set_settings(const ServerConfig& c) {
        settings_.store(std::make_shared<const HttpSettings>(HttpSettings::from(c)));
        qoe.set_config(c.telemetry);
        metrics.max_connections.set(static_cast<double>(c.max_connections));
    }
    // The TLS context new connections on the main listener use; null: plain HTTP.
    std::shared_ptr<boost::asio::ssl::context> tls() const { return tls_.load(); }
    void set_tls(std::shared_ptr<boost::asio::ssl::context> context) { tls_.store(std::move(context)); }
    // Null when no access log is configured.
    std::shared_ptr<AccessLogFile> access_log() const { return access_log_.load(); }
    void set_access_log(std::shared_ptr<AccessLogFile> log) { access_log_.store(std::move(log)); }

    std::atomic<std::size_t> connections{0};         // sessions counted against max_connections
    std::atomic<std::int64_t> outstanding_reads{0};  // store reads whose handler has not returned yet
    std::atomic<bool> draining{false};

    void register_session(HttpSession* key, std::weak_ptr<HttpSession> session);
    // Called once per session when it closes; may finish a drain.
    void unregister_session(HttpSession* key, bool counted);
    std::vector<std::shared_ptr<HttpSession>> live_sessions();
    std::function<void()> on_all_closed;  // set by the service while draining

  private:
    std::atomic<std::shared_ptr<const HttpSettings>> settings_;
    std::atomic<std::shared_ptr<AccessLogFile>> access_log_;
    std::atomic<std::shared_ptr<boost::asio::ssl::context>> tls_;
    std::mutex mutex_;
    std::unordered_map<HttpSession*, std::weak_ptr<HttpSession>> sessions_;
};

// The current time as an IMF-fixdate, formatted at most once per second per thread.
std::string_view cached_http_date();

}  // namespace toast::server
