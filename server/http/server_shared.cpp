#include "server/http/server_shared.hpp"

#include <ctime>

#include "server/core/http_date.hpp"
#include "server/core/tier_view.hpp"

namespace toast::server {

HttpMetrics::HttpMetrics(MetricsRegistry& registry)
    : open_connections(registry.gauge("toast_http_open_connections", "HTTP connections currently open")),
      rejected_connections(registry.counter("toast_http_rejected_connections_total",
                                            "Connections answered 503 because max_connections was reached")),
      response_seconds(registry.histogram("toast_http_response_seconds",
                                          "Time from a parsed request to its last response byte written",
                                          latency_buckets())),
      renewals(registry.counter("toast_access_renewals_total", "Tokens renewed (POST /token/renew)")),
      tls_handshake_failures(registry.counter("toast_http_tls_handshake_failures_total",
                                              "TLS connections that failed or timed out before a request")),
      max_connections(registry.gauge("toast_http_max_connections", "The max_connections limit in force")),
      registry_(registry) {
    // Present from the start, so that dashboards and alert rules see zeros rather than no series.
    for (const char* reason :
         {"missing", "malformed", "unknown_key", "bad_signature", "expired", "revoked", "out_of_scope"})
        count_denial(reason, 0);
}

void HttpMetrics::count_denial(const std::string& reason, std::uint64_t n) {
    registry_
        .counter("toast_access_denied_total", "Requests refused 403 by the signed-URL check, by reason",
                 {{"reason", reason}})
        .inc(n);
}

void HttpMetrics::count_response(unsigned status) {
    if (status >= by_status_.size()) status = 599;
    auto* c = by_status_[status].load(std::memory_order_acquire);
    if (!c) {
        c = &registry_.counter("toast_http_requests_total", "HTTP responses by status code",
                               {{"status", std::to_string(status)}});
        by_status_[status].store(c, std::memory_order_release);
    }
    c->inc();
}

Counter& HttpMetrics::bytes_sent(const std::string& title) {
    return registry_.counter("toast_http_bytes_sent_total", "Title body bytes sent over HTTP",
                             {{"title", title}});
}

HttpSettings HttpSettings::from(const ServerConfig& c) {
    HttpSettings s;
    s.max_connections = c.max_connections;
    s.idle_timeout = c.idle_timeout;
    s.header_limit = c.header_limit;
    s.max_pipelined = c.max_pipelined;
    s.limits.max_ranges = c.max_ranges;
    s.limits.max_multipart_bytes = c.max_multipart_bytes.value();
    s.limits.admin_on_separate_listener = c.admin_listen.has_value();
    s.transfer_limits.time_slice = c.time_slice;
    s.limits.telemetry = c.telemetry.enabled;
    s.limits.telemetry_max_body = c.telemetry.max_body;
    s.access = c.access;
    return s;
}

ServerShared::ServerShared(const ServerConfig& c, TitleStore& s, DiskControl& d, MetricsRegistry& m,
                           TierClient* t)
    : config(c),
      store(s),
      disks(d),
      registry(m),
      metrics(m),
      tier(t),
      redirected_streams(m.counter("toast_admission_decisions_total", "Paced streams admitted or refused",
                                   Labels{{"result", "redirected"}})),
      qoe(m, c.telemetry) {
    set_settings(c);
    push = std::make_unique<PushCoordinator>(c.demand, c.push, s);
    if (c.admission.enabled)
        admission = std::make_unique<StreamAdmission>(c, d, m, settings()->transfer_limits.window);
    node_report.load_ms = [&d] { return node_load_ms(d.disk_status()); };
    if (c.tier) {
        node_report.tier_status = [this] {
            NodeStatus status;
            status.node = config.tier->self_node().id;
            status.load_ms = node_load_ms(disks.disk_status());
            status.admission = admission != nullptr;
            if (admission) {
                const auto room = admission->room(std::chrono::steady_clock::now());
                status.room = room.share;
                status.streams = room.streams;
            }
            return node_status_json(status);
        };
    }
}

void ServerShared::register_session(HttpSession* key, std::weak_ptr<HttpSession> session) {
    std::lock_guard lock(mutex_);
    sessions_.emplace(key, std::move(session));
}

void ServerShared::unregister_session(HttpSession* key, bool counted) {
    std::function<void()> done;
    {
        std::lock_guard lock(mutex_);
        sessions_.erase(key);
        if (counted) {
            connections.fetch_sub(1);
            metrics.open_connections.add(-1);
        }
        if (sessions_.empty() && draining.load()) done = on_all_closed;
    }
    if (done) done();
}

std::vector<std::shared_ptr<HttpSession>> ServerShared::live_sessions() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<HttpSession>> out;
    for (auto& [key, weak] : sessions_) {
        if (auto s = weak.lock()) out.push_back(std::move(s));
    }
    return out;
}

std::string_view cached_http_date() {
    thread_local std::time_t cached_second = -1;
    thread_local std::string cached;
    auto now = std::chrono::system_clock::now();
    auto second = std::chrono::system_clock::to_time_t(now);
    if (second != cached_second) {
        cached_second = second;
        cached = format_http_date(now);
    }
    return cached;
}

}  // namespace toast::server
