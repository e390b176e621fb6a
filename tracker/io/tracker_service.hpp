// TrackerService: everything toast-tracker answers, as functions that touch no socket. The HTTP and UDP
// servers hand it a request, the source address and the time, and send back what it returns. It owns the
// swarm registry, the rate limiter, the UDP connection ids, the whitelist file and the metrics.
//
// Threading: one io thread calls every member (the servers, the maintenance timer and the SIGHUP handler
// share one io_context), so the state needs no locks; only the MetricsRegistry is read from elsewhere.
//
// HTTP status decisions (libtorrent 2.0.8 reports any non-200 answer as "HTTP error <status>" with the
// reason phrase and does not read the body, so the reason phrase carries the failure reason too):
//   400 malformed announce/scrape, 403 info-hash not whitelisted or no valid passkey (under a passkey file),
//   404 unknown path, 405 not GET,
//   414 request target too long, 429 per-IP rate limit, 503 swarm limit reached.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toast/common/access_log.hpp"
#include "toast/common/metrics.hpp"
#include "tracker/core/passkeys.hpp"
#include "tracker/core/rate_limiter.hpp"
#include "tracker/core/swarm_registry.hpp"
#include "tracker/core/tracker_config.hpp"
#include "tracker/core/udp_protocol.hpp"
#include "tracker/core/whitelist.hpp"
#include "tracker/io/http_request_rules.hpp"
#include "tracker/io/tracker_metrics.hpp"

namespace toast::tracker {

struct HttpAnswer {
    int status = 200;
    std::string reason;  // empty: the standard phrase
    std::string content_type = "text/plain";
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

// Reads and parses a whitelist file; errors name the file and the line.
Result<Whitelist, std::string> load_whitelist_file(const std::filesystem::path& path);
// Reads and parses a passkey file; errors name the file and the line, never a key.
Result<PasskeyStore, std::string> load_passkey_file(const std::filesystem::path& path, SipKey hash_key);

struct ServiceSecrets {
    SipKey hash_key;    // hash tables
    SipKey udp_secret;  // UDP connection ids
};

class TrackerService {
  public:
    // Throws std::runtime_error if the configured whitelist or passkey file cannot be loaded (a start-up
    // error).
    TrackerService(const TrackerConfig& config, ServiceSecrets secrets, MetricsRegistry& metrics);

    HttpAnswer handle_http(std::string_view method, std::string_view target, const IpAddress& source,
                           TimePoint now);
    // An answer for requests the HTTP layer rejects before they reach handle_http (header too large, ...).
    HttpAnswer http_error(const HttpRefusal& refusal);

    // What the access log says about a UDP packet (see access_log.hpp).
    struct UdpOutcome {
        std::string request;  // "ANNOUNCE /announce?info_hash=HEX UDP"; empty when malformed
        int status = 400;
    };
    // The reply datagram, or nullopt when the packet is dropped (and counted).
    std::optional<std::vector<std::uint8_t>> handle_udp(std::span<const std::uint8_t> packet,
                                                        const PeerEndpoint& source, TimePoint now,
                                                        UdpOutcome* outcome = nullptr);

    // Periodic upkeep: expiry, rate-limiter pruning, gauges.
    void tick(TimePoint now);

    struct ReloadOutcome {
        bool ok = false;
        std::string message;
    };
    // Re-reads the whitelist file; on any error the previous list stays in force. Without a configured
    // whitelist this is a no-op that says so.
    ReloadOutcome reload_whitelist();

    // SIGHUP with a new configuration: applies every key that can change while running (all of them but
    // a whitelist, passkey file or access log that cannot be read or opened, which keep their previous
    // file), re-reads the whitelist and the passkey file and reopens the access log (for logrotate).
    // `changed` lists "key: old -> new" and what the passkey file changed; `not_applied` says what was kept
    // and why. A passkey taken out of the file is refused from the next request on, and every peer that
    // announced with it is removed from every swarm at once, so no other box is handed its address.
    struct ConfigReload {
        std::vector<std::string> changed;
        std::vector<std::string> not_applied;
    };
    ConfigReload apply_config(const TrackerConfig& next);
    void count_config_reload(bool ok) {
        (ok ? service_.config_reloads_ok : service_.config_reloads_failed).inc();
    }

    // The state file (config state_file; docs/tracker.md "Restarts"). Both do nothing without one, and
    // return a message for the log (empty when there is nothing to say).
    struct StateOutcome {
        bool ok = true;
        std::string message;
    };
    // At start-up: restores the swarms saved in the state file, aged by the wall-clock time since the save.
    // A missing file is normal. One that cannot be read or decoded is renamed to PATH.bad, so that nothing
    // is lost and the next save does not overwrite it, and the tracker starts empty (ok = false); if even
    // the rename fails, saving stays off until a reload names another state_file.
    StateOutcome restore_state(TimePoint now, std::chrono::system_clock::time_point wall_now);
    // Writes every swarm to the state file, atomically (state_file.hpp); counts and times the save. A failed
    // save leaves the previous file in place.
    StateOutcome save_state(TimePoint now, std::chrono::system_clock::time_point wall_now);
    // The same in two steps, so that the writing (an fsync can take long on a busy disk) can run on another
    // thread while this one answers announces: the encoded state (none without a state file), then, back on
    // the service's thread, the outcome of writing it.
    struct StateSnapshot {
        std::filesystem::path path;
        std::string bytes;
        std::size_t swarms = 0;
        std::size_t peers = 0;
        std::chrono::steady_clock::duration encoding{};
    };
    std::optional<StateSnapshot> snapshot_state(TimePoint now,
                                                std::chrono::system_clock::time_point wall_now);
    StateOutcome record_save(const StateSnapshot& snapshot, const std::optional<std::string>& error,
                             std::chrono::steady_clock::duration writing);

    // The access log (common/access_log.hpp, the format every Toast server writes), or nullptr when none
    // is configured; HTTP sessions and the UDP server write to it.
    AccessLogFile* access_log() { return access_log_.get(); }
    bool access_log_udp() const { return access_log_ && config_.access_log.udp; }

    // GET /stats: totals and one page of swarms in info-hash order (see docs/tracker.md).
    std::string stats_json(const std::optional<InfoHash>& after, std::size_t limit) const;
    std::string metrics_text() const { return metrics_.render(); }
    void observe_latency(bool udp, double seconds);
    void count_http_connection_refused() { http_.connections_refused.inc(); }
    // Bytes the tracker sent (HTTP responses with headers, UDP datagrams): the testbed counts the tracker's
    // upload as server-host traffic, as the thesis did.
    void count_sent(bool udp, std::size_t bytes) { transport(udp).bytes_sent.inc(bytes); }
    Gauge& http_connections() { return http_.connections; }

    const SwarmRegistry& registry() const { return registry_; }
    const TrackerConfig& config() const { return config_; }

  private:
    HttpAnswer announce(std::string_view query, const TrackerTarget& target, const IpAddress& source,
                        TimePoint now);
    HttpAnswer scrape(std::string_view query, const TrackerTarget& target, const IpAddress& source,
                      TimePoint now);
    // Puts a passkey file's keys in force (nullopt: passkeys off), removes the peers of revoked keys, and
    // says what changed.
    std::string replace_passkeys(std::optional<PasskeyStore> next);
    // Counts and answers a request the passkey gate refused; for an announce, also forgets the announcer
    // (peer id and address) in that swarm: a box whose key is revoked leaves its swarm at its next
    // announce even when it was restored from the state file, whose peers carry no owner.
    void on_passkey_refused(TransportMetrics& transport, PasskeyRefusal why, const AnnounceRequest* request,
                            const IpAddress& source);
    HttpAnswer stats(std::string_view query);
    HttpAnswer failure(int status, std::string_view reason);
    // Takes a token from the source's rate-limit bucket; false, counted, when the bucket is empty.
    bool within_rate_limit(TransportMetrics& transport, const IpAddress& source, TimePoint now);
    HttpAnswer rate_limited_answer();
    // The connection-id and rate-limit checks a UDP announce or scrape passes before it is answered.
    struct UdpRefusal {
        int status = 400;
        std::optional<std::vector<std::uint8_t>> reply;  // nothing for a bad connection id
    };
    std::optional<UdpRefusal> refuse_udp(std::uint64_t connection_id, std::uint32_t transaction_id,
                                         const PeerEndpoint& source, TimePoint now);
    std::vector<std::uint8_t> udp_announce(const udp::AnnounceRequestPacket& packet,
                                           const PeerEndpoint& source, TimePoint now, UdpOutcome& outcome);
    std::vector<std::uint8_t> udp_scrape(const udp::ScrapeRequestPacket& packet);
    void update_gauges();
    TransportMetrics& transport(bool udp) {
        return udp ? static_cast<TransportMetrics&>(udp_) : static_cast<TransportMetrics&>(http_);
    }

    TrackerConfig config_;
    MetricsRegistry& metrics_;
    SwarmRegistry registry_;
    RateLimiter limiter_;
    udp::ConnectionIds connection_ids_;
    PasskeyGate passkeys_;
    SipKey hash_key_;
    std::size_t whitelist_size_ = 0;
    std::unique_ptr<AccessLogFile> access_log_;
    bool state_saves_off_ = false;  // a bad state file could not be moved aside

    HttpMetrics http_;
    UdpMetrics udp_;
    ServiceMetrics service_;
};

}  // namespace toast::tracker
