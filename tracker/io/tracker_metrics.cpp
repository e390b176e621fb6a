#include "tracker/io/tracker_metrics.hpp"

#include <utility>

namespace toast::tracker {

namespace {

Counter& by_result(MetricsRegistry& m, const char* name, const char* help, const char* result) {
    return m.counter(name, help, {{"result", result}});
}

}  // namespace

TransportMetrics::TransportMetrics(MetricsRegistry& m, std::string t)
    : registry(m),
      transport(std::move(t)),
      announces(m.counter("toast_tracker_announces_total", "Accepted announces", {{"transport", transport}})),
      scrapes(m.counter("toast_tracker_scrapes_total", "Answered scrapes", {{"transport", transport}})),
      bytes_sent(m.counter("toast_tracker_bytes_sent_total", "Bytes sent (responses with headers)",
                           {{"transport", transport}})),
      rate_limited(refused("rate_limited")),
      latency(m.histogram("toast_tracker_request_seconds", "Time to answer one request", latency_buckets(),
                          {{"transport", transport}})) {
    refused("not_whitelisted");
}

Counter& TransportMetrics::refused(std::string_view reason) {
    return registry.counter("toast_tracker_refused_total",
                            "Well-formed requests refused (rate limit, whitelist, swarm limit, passkey)",
                            {{"transport", transport}, {"reason", std::string(reason)}});
}

HttpMetrics::HttpMetrics(MetricsRegistry& m)
    : TransportMetrics(m, "http"),
      connections_refused(m.counter("toast_tracker_http_connections_refused_total",
                                    "HTTP connections closed at once because max_connections was reached")),
      connections(m.gauge("toast_tracker_http_connections", "Open HTTP connections")) {}

Counter& HttpMetrics::malformed(std::string_view reason) {
    return registry.counter("toast_tracker_http_malformed_total", "HTTP requests refused as malformed",
                            {{"reason", std::string(reason)}});
}

UdpMetrics::UdpMetrics(MetricsRegistry& m)
    : TransportMetrics(m, "udp"),
      connects(m.counter("toast_tracker_udp_connects_total", "Answered UDP connect requests")),
      bad_connection_ids(m.counter("toast_tracker_udp_bad_connection_id_total",
                                   "UDP announces and scrapes dropped for a wrong or stale connection id")),
      malformed_total(m.counter("toast_tracker_udp_malformed_total", "UDP packets dropped as malformed")) {}

void UdpMetrics::count_malformed(std::string_view reason) {
    malformed_total.inc();
    registry
        .counter("toast_tracker_udp_malformed_by_reason_total", "UDP packets dropped as malformed, by reason",
                 {{"reason", std::string(reason)}})
        .inc();
}

ServiceMetrics::ServiceMetrics(MetricsRegistry& m)
    : expired(m.counter("toast_tracker_peers_expired_total", "Peers removed for not re-announcing")),
      whitelist_reloads_ok(
          by_result(m, "toast_tracker_whitelist_reloads_total", "Whitelist reloads (SIGHUP)", "ok")),
      whitelist_reloads_failed(
          by_result(m, "toast_tracker_whitelist_reloads_total", "Whitelist reloads (SIGHUP)", "failed")),
      config_reloads_ok(by_result(m, "toast_tracker_config_reloads_total",
                                  "Configuration reloads (SIGHUP with --config)", "ok")),
      config_reloads_failed(by_result(m, "toast_tracker_config_reloads_total",
                                      "Configuration reloads (SIGHUP with --config)", "failed")),
      state_saves_ok(by_result(m, "toast_tracker_state_saves_total", "Saves of the state file", "ok")),
      state_saves_failed(
          by_result(m, "toast_tracker_state_saves_total", "Saves of the state file", "failed")),
      state_save_seconds(m.gauge("toast_tracker_state_save_seconds",
                                 "Time the last state save took (export, encode, write, fsync, rename)")),
      swarms(m.gauge("toast_tracker_swarms", "Swarms currently known")),
      seeders(m.gauge("toast_tracker_seeders", "Seeders in all swarms")),
      leechers(m.gauge("toast_tracker_leechers", "Leechers in all swarms")),
      whitelist_entries(m.gauge("toast_tracker_whitelist_entries",
                                "Info-hashes on the whitelist (0 when serving every info-hash)")),
      passkey_entries(m.gauge("toast_tracker_passkeys", "Passkeys in force (0 when announces need none)")),
      passkey_reloads_ok(by_result(m, "toast_tracker_passkey_reloads_total",
                                   "Passkey file loads after start-up (SIGHUP)", "ok")),
      passkey_reloads_failed(by_result(m, "toast_tracker_passkey_reloads_total",
                                       "Passkey file loads after start-up (SIGHUP)", "failed")),
      revoked_peers_removed(m.counter("toast_tracker_revoked_peers_removed_total",
                                      "Peers removed from their swarms because their passkey was revoked")),
      limiter_tracked(m.gauge("toast_tracker_rate_limited_addresses",
                              "Source addresses with a partly used rate-limit bucket")) {}

}  // namespace toast::tracker
