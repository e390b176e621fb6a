// The metrics TrackerService keeps (docs/tracker.md lists them): one struct per transport, labelled
// {transport="http"} or {transport="udp"}, and one for what the service does as a whole. Every series but
// the lazily labelled ones (malformed reasons, too_many_swarms) is created at start-up, so that a scrape of
// /metrics shows it at zero before anything happens.
#pragma once

#include <string>
#include <string_view>

#include "toast/common/metrics.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker {

// What both transports count.
struct TransportMetrics {
    TransportMetrics(MetricsRegistry& registry, std::string transport);

    // A well-formed request refused: toast_tracker_refused_total{transport, reason}.
    Counter& refused(std::string_view reason);
    void count_refusal(AnnounceRefusal refusal) {
        refused(refusal == AnnounceRefusal::not_whitelisted ? "not_whitelisted" : "too_many_swarms").inc();
    }

    MetricsRegistry& registry;
    const std::string transport;
    Counter& announces;
    Counter& scrapes;
    Counter& bytes_sent;  // responses with headers, datagrams
    Counter& rate_limited;
    Histogram& latency;
};

struct HttpMetrics : TransportMetrics {
    explicit HttpMetrics(MetricsRegistry& registry);
    // toast_tracker_http_malformed_total{reason}
    Counter& malformed(std::string_view reason);

    Counter& connections_refused;  // closed at once: max_connections reached
    Gauge& connections;
};

struct UdpMetrics : TransportMetrics {
    explicit UdpMetrics(MetricsRegistry& registry);
    // A packet dropped as malformed: the total and toast_tracker_udp_malformed_by_reason_total{reason}.
    void count_malformed(std::string_view reason);

    Counter& connects;
    Counter& bad_connection_ids;
    Counter& malformed_total;
};

// What the service does as a whole: swarms, whitelist, passkeys, reloads, the state file.
struct ServiceMetrics {
    explicit ServiceMetrics(MetricsRegistry& registry);

    Counter& expired;
    Counter& whitelist_reloads_ok;
    Counter& whitelist_reloads_failed;
    Counter& config_reloads_ok;
    Counter& config_reloads_failed;
    Counter& state_saves_ok;
    Counter& state_saves_failed;
    Gauge& state_save_seconds;
    Gauge& swarms;
    Gauge& seeders;
    Gauge& leechers;
    Gauge& whitelist_entries;
    Gauge& passkey_entries;
    Counter& passkey_reloads_ok;
    Counter& passkey_reloads_failed;
    Counter& revoked_peers_removed;
    Gauge& limiter_tracked;
};

}  // namespace toast::tracker
