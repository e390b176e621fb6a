#include "tracker/io/tracker_service.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "tracker/core/announce_request.hpp"
#include "tracker/io/bencode_responses.hpp"

namespace toast::tracker {
namespace {

constexpr const char* kBencodeType = "text/plain";

}  // namespace

Result<Whitelist, std::string> load_whitelist_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::string("cannot read whitelist file '" + path.string() + "'");
    std::stringstream buf;
    buf << in.rdbuf();
    if (in.bad()) return std::string("cannot read whitelist file '" + path.string() + "'");
    auto parsed = parse_whitelist(buf.str());
    if (!parsed) {
        return std::string("whitelist file '" + path.string() + "' line " +
                           std::to_string(parsed.error().line) + ": " + parsed.error().message);
    }
    return std::move(parsed).value();
}

TrackerService::TrackerService(const TrackerConfig& config, ServiceSecrets secrets, MetricsRegistry& metrics)
    : config_(config),
      metrics_(metrics),
      registry_(config.registry, secrets.hash_key),
      limiter_(config.rate_limit, secrets.hash_key),
      connection_ids_(secrets.udp_secret),
      announces_http_(
          metrics.counter("toast_tracker_announces_total", "Accepted announces", {{"transport", "http"}})),
      announces_udp_(
          metrics.counter("toast_tracker_announces_total", "Accepted announces", {{"transport", "udp"}})),
      scrapes_http_(
          metrics.counter("toast_tracker_scrapes_total", "Answered scrapes", {{"transport", "http"}})),
      scrapes_udp_(
          metrics.counter("toast_tracker_scrapes_total", "Answered scrapes", {{"transport", "udp"}})),
      connects_udp_(metrics.counter("toast_tracker_udp_connects_total", "Answered UDP connect requests")),
      bad_connection_ids_(
          metrics.counter("toast_tracker_udp_bad_connection_id_total",
                          "UDP announces and scrapes dropped for a wrong or stale connection id")),
      expired_(metrics.counter("toast_tracker_peers_expired_total", "Peers removed for not re-announcing")),
      reloads_ok_(metrics.counter("toast_tracker_whitelist_reloads_total", "Whitelist reloads (SIGHUP)",
                                  {{"result", "ok"}})),
      reloads_failed_(metrics.counter("toast_tracker_whitelist_reloads_total", "Whitelist reloads (SIGHUP)",
                                      {{"result", "failed"}})),
      connections_refused_(
          metrics.counter("toast_tracker_http_connections_refused_total",
                          "HTTP connections closed at once because max_connections was reached")),
      bytes_sent_http_(metrics.counter("toast_tracker_bytes_sent_total",
                                       "Bytes sent (responses with headers)", {{"transport", "http"}})),
      bytes_sent_udp_(metrics.counter("toast_tracker_bytes_sent_total", "Bytes sent (responses with headers)",
                                      {{"transport", "udp"}})),
      swarms_(metrics.gauge("toast_tracker_swarms", "Swarms currently known")),
      seeders_(metrics.gauge("toast_tracker_seeders", "Seeders in all swarms")),
      leechers_(metrics.gauge("toast_tracker_leechers", "Leechers in all swarms")),
      whitelist_entries_(metrics.gauge("toast_tracker_whitelist_entries",
                                       "Info-hashes on the whitelist (0 when serving every info-hash)")),
      limiter_tracked_(metrics.gauge("toast_tracker_rate_limited_addresses",
                                     "Source addresses with a partly used rate-limit bucket")),
      http_connections_(metrics.gauge("toast_tracker_http_connections", "Open HTTP connections")),
      latency_http_(metrics.histogram("toast_tracker_request_seconds", "Time to answer one request",
                                      latency_buckets(), {{"transport", "http"}})),
      latency_udp_(metrics.histogram("toast_tracker_request_seconds", "Time to answer one request",
                                     latency_buckets(), {{"transport", "udp"}})) {
    // Created up front so that a scrape of /metrics shows them at zero before anything goes wrong.
    refused("http", "rate_limited");
    refused("udp", "rate_limited");
    refused("http", "not_whitelisted");
    refused("udp", "not_whitelisted");
    metrics.counter("toast_tracker_udp_malformed_total", "UDP packets dropped as malformed", {});
    if (config_.whitelist) {
        auto list = load_whitelist_file(*config_.whitelist);
        if (!list) throw std::runtime_error(list.error());
        whitelist_size_ = list.value().size();
        whitelist_entries_.set(static_cast<double>(whitelist_size_));
        registry_.set_whitelist(std::move(list).value());
    }
}

Counter& TrackerService::http_malformed(std::string_view reason) {
    return metrics_.counter("toast_tracker_http_malformed_total", "HTTP requests refused as malformed",
                            {{"reason", std::string(reason)}});
}

Counter& TrackerService::udp_malformed(std::string_view reason) {
    metrics_.counter("toast_tracker_udp_malformed_total", "UDP packets dropped as malformed", {}).inc();
    return metrics_.counter("toast_tracker_udp_malformed_by_reason_total",
                            "UDP packets dropped as malformed, by reason", {{"reason", std::string(reason)}});
}

Counter& TrackerService::refused(std::string_view transport, std::string_view reason) {
    return metrics_.counter("toast_tracker_refused_total",
                            "Well-formed requests refused (rate limit, whitelist, swarm limit)",
                            {{"transport", std::string(transport)}, {"reason", std::string(reason)}});
}

void TrackerService::observe_latency(bool udp, double seconds) {
    (udp ? latency_udp_ : latency_http_).observe(seconds);
}

HttpAnswer TrackerService::failure(int status, std::string_view reason) {
    HttpAnswer a;
    a.status = status;
    a.reason = std::string(reason);
    a.content_type = kBencodeType;
    a.body = bencode_failure(reason, config_.registry.interval, config_.registry.min_interval);
    return a;
}

HttpAnswer TrackerService::http_error(int status, std::string_view reason) {
    http_malformed(status == 414   ? "target_too_long"
                   : status == 431 ? "header_too_large"
                                   : "bad_request")
        .inc();
    return failure(status, reason);
}

HttpAnswer TrackerService::handle_http(std::string_view method, std::string_view target,
                                       const IpAddress& source, TimePoint now) {
    if (target.size() > config_.http.max_target_length) {
        return http_error(
            414, "request target longer than " + std::to_string(config_.http.max_target_length) + " bytes");
    }
    const auto q = target.find('?');
    const std::string_view path = target.substr(0, q);
    const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);

    if (method != "GET") {
        HttpAnswer a = failure(405, "only GET is supported");
        a.headers.emplace_back("Allow", "GET");
        http_malformed("method").inc();
        return a;
    }
    if (path == "/announce") return announce(query, source, now);
    if (path == "/scrape") return scrape(query, source, now);
    if (path == "/stats") {
        HttpAnswer a;
        a.content_type = "application/json";
        a.body = stats_json();
        return a;
    }
    if (path == "/metrics") {
        update_gauges();
        HttpAnswer a;
        a.content_type = "text/plain; version=0.0.4";
        a.body = metrics_text();
        return a;
    }
    HttpAnswer a = failure(404, "no such path; try /announce, /scrape, /stats or /metrics");
    return a;
}

HttpAnswer TrackerService::announce(std::string_view query, const IpAddress& source, TimePoint now) {
    auto request = parse_announce(query);
    if (!request) {
        http_malformed(to_string(request.error())).inc();
        return failure(400, failure_reason(request.error()));
    }
    if (!limiter_.allow(source, now)) {
        refused("http", "rate_limited").inc();
        HttpAnswer a = failure(429, "rate limit exceeded for your address; slow down");
        a.headers.emplace_back("Retry-After", "1");
        return a;
    }
    auto reply = registry_.announce(request.value(), source, now);
    if (!reply) {
        const bool listed = reply.error() == AnnounceRefusal::not_whitelisted;
        refused("http", listed ? "not_whitelisted" : "too_many_swarms").inc();
        return failure(listed ? 403 : 503, failure_reason(reply.error()));
    }
    announces_http_.inc();
    update_gauges();
    HttpAnswer a;
    a.content_type = kBencodeType;
    a.body = bencode_announce(reply.value(), request->compact, !request->no_peer_id);
    return a;
}

HttpAnswer TrackerService::scrape(std::string_view query, const IpAddress& source, TimePoint now) {
    auto hashes = parse_scrape(query, config_.max_scrape_hashes);
    if (!hashes) {
        http_malformed("scrape").inc();
        return failure(400, failure_reason(hashes.error()));
    }
    if (!limiter_.allow(source, now)) {
        refused("http", "rate_limited").inc();
        HttpAnswer a = failure(429, "rate limit exceeded for your address; slow down");
        a.headers.emplace_back("Retry-After", "1");
        return a;
    }
    // BEP 48: hashes this tracker does not serve are left out of "files".
    std::vector<std::pair<InfoHash, SwarmCounts>> files;
    for (const auto& h : hashes.value()) {
        if (auto counts = registry_.scrape(h)) files.emplace_back(h, *counts);
    }
    scrapes_http_.inc();
    HttpAnswer a;
    a.content_type = kBencodeType;
    a.body = bencode_scrape(files);
    return a;
}

std::optional<std::vector<std::uint8_t>> TrackerService::handle_udp(std::span<const std::uint8_t> packet,
                                                                    const PeerEndpoint& source,
                                                                    TimePoint now) {
    auto parsed = udp::parse_request(packet);
    if (!parsed) {
        udp_malformed(udp::to_string(parsed.error())).inc();
        return std::nullopt;
    }
    const bool v6 = source.ip.v6;
    if (const auto* c = std::get_if<udp::ConnectRequest>(&parsed.value())) {
        connects_udp_.inc();
        return udp::write_connect_response(c->transaction_id, connection_ids_.issue(source.ip, now));
    }
    if (const auto* a = std::get_if<udp::AnnounceRequestPacket>(&parsed.value())) {
        if (!connection_ids_.valid(a->connection_id, source.ip, now)) {
            bad_connection_ids_.inc();
            return std::nullopt;
        }
        if (!limiter_.allow(source.ip, now)) {
            refused("udp", "rate_limited").inc();
            return udp::write_error(a->transaction_id, "rate limit exceeded for your address; slow down");
        }
        AnnounceOptions options;
        options.families = v6 ? Families::v6_only : Families::v4_only;
        options.peer_cap = udp::max_peers_per_datagram(v6);
        auto reply = registry_.announce(a->request, source.ip, now, options);
        if (!reply) {
            const bool listed = reply.error() == AnnounceRefusal::not_whitelisted;
            refused("udp", listed ? "not_whitelisted" : "too_many_swarms").inc();
            return udp::write_error(a->transaction_id, failure_reason(reply.error()));
        }
        announces_udp_.inc();
        update_gauges();
        return udp::write_announce_response(a->transaction_id, reply->interval, reply->counts, reply->peers,
                                            v6);
    }
    const auto& s = std::get<udp::ScrapeRequestPacket>(parsed.value());
    if (!connection_ids_.valid(s.connection_id, source.ip, now)) {
        bad_connection_ids_.inc();
        return std::nullopt;
    }
    if (!limiter_.allow(source.ip, now)) {
        refused("udp", "rate_limited").inc();
        return udp::write_error(s.transaction_id, "rate limit exceeded for your address; slow down");
    }
    // A UDP scrape answer is positional, so a hash this tracker does not serve reads as an empty swarm.
    std::vector<SwarmCounts> counts;
    for (const auto& h : s.info_hashes)
        counts.push_back(registry_.scrape(h).value_or(SwarmCounts{}));
    scrapes_udp_.inc();
    return udp::write_scrape_response(s.transaction_id, counts);
}

void TrackerService::tick(TimePoint now) {
    expired_.inc(registry_.expire(now));
    limiter_.prune(now);
    update_gauges();
}

void TrackerService::update_gauges() {
    auto t = registry_.totals();
    swarms_.set(static_cast<double>(t.swarms));
    seeders_.set(static_cast<double>(t.seeders));
    leechers_.set(static_cast<double>(t.leechers));
    limiter_tracked_.set(static_cast<double>(limiter_.tracked()));
}

TrackerService::ReloadOutcome TrackerService::reload_whitelist() {
    if (!config_.whitelist) return {true, "no whitelist configured; nothing to reload"};
    auto list = load_whitelist_file(*config_.whitelist);
    if (!list) {
        reloads_failed_.inc();
        return {false, list.error() + "; keeping the previous whitelist"};
    }
    const auto n = list.value().size();
    registry_.set_whitelist(std::move(list).value());
    whitelist_size_ = n;
    whitelist_entries_.set(static_cast<double>(n));
    reloads_ok_.inc();
    return {true, "whitelist reloaded: " + std::to_string(n) + " info-hashes"};
}

std::string TrackerService::stats_json() const {
    nlohmann::json swarms = nlohmann::json::array();
    for (const auto& s : registry_.swarm_stats()) {
        swarms.push_back({{"info_hash", to_hex(s.info_hash.view())},
                          {"seeders", s.counts.seeders},
                          {"leechers", s.counts.leechers},
                          {"completed", s.counts.completed},
                          {"announces", s.announces}});
    }
    auto t = registry_.totals();
    nlohmann::json out = {
        {"swarms", std::move(swarms)},
        {"totals",
         {{"swarms", t.swarms},
          {"seeders", t.seeders},
          {"leechers", t.leechers},
          {"completed", t.completed},
          {"announces", t.announces}}},
        {"whitelist", {{"enabled", config_.whitelist.has_value()}, {"entries", whitelist_size_}}},
    };
    return out.dump();
}

}  // namespace toast::tracker
