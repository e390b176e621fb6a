#include "tracker/io/tracker_service.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "toast/common/read_file.hpp"
#include "tracker/core/announce_request.hpp"
#include "tracker/io/bencode_responses.hpp"
#include "tracker/io/state_file.hpp"

namespace toast::tracker {
namespace {

constexpr const char* kBencodeType = "text/plain";
constexpr std::string_view kRateLimited = "rate limit exceeded for your address; slow down";

// 403 for an info-hash the whitelist refuses, 503 when the swarm limit is reached.
int refusal_status(AnnounceRefusal refusal) {
    return refusal == AnnounceRefusal::not_whitelisted ? 403 : 503;
}

}  // namespace

Result<Whitelist, std::string> load_whitelist_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileReadError& e) {
        return std::string("cannot read whitelist file '" + path.string() + "': " + e.reason());
    }
    auto parsed = parse_whitelist(text);
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
      http_(metrics),
      udp_(metrics),
      service_(metrics) {
    if (config_.whitelist) {
        auto list = load_whitelist_file(*config_.whitelist);
        if (!list) throw std::runtime_error(list.error());
        whitelist_size_ = list.value().size();
        service_.whitelist_entries.set(static_cast<double>(whitelist_size_));
        registry_.set_whitelist(std::move(list).value());
    }
    if (config_.access_log.path) access_log_ = std::make_unique<AccessLogFile>(*config_.access_log.path);
}

TrackerService::ConfigReload TrackerService::apply_config(const TrackerConfig& next_in) {
    ConfigReload out;
    out.changed = describe_changes(config_, next_in);
    TrackerConfig next = next_in;

    if (next.whitelist) {
        auto list = load_whitelist_file(*next.whitelist);
        if (list) {
            whitelist_size_ = list.value().size();
            registry_.set_whitelist(std::move(list).value());
            service_.whitelist_reloads_ok.inc();
        } else {
            service_.whitelist_reloads_failed.inc();
            out.not_applied.push_back(list.error() + "; keeping the previous whitelist" +
                                      (config_.whitelist ? " (" + config_.whitelist->string() + ")" : ""));
            next.whitelist = config_.whitelist;
        }
    } else {
        whitelist_size_ = 0;
        registry_.set_whitelist(std::nullopt);
    }
    service_.whitelist_entries.set(static_cast<double>(whitelist_size_));

    if (next.access_log.path != config_.access_log.path) {
        try {
            access_log_ =
                next.access_log.path ? std::make_unique<AccessLogFile>(*next.access_log.path) : nullptr;
        } catch (const std::exception& e) {
            out.not_applied.push_back(std::string(e.what()) + "; keeping the previous access log");
            next.access_log.path = config_.access_log.path;
        }
    } else if (access_log_) {
        if (auto error = access_log_->reopen()) {
            out.not_applied.push_back("access log '" + access_log_->path().string() + "': " + *error +
                                      "; still writing to the old file");
        }
    }

    if (next.state_file != config_.state_file) state_saves_off_ = false;
    registry_.set_policy(next.registry);
    limiter_.set_limit(next.rate_limit);
    config_ = next;
    update_gauges();
    return out;
}

namespace {

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string seconds_text(std::chrono::milliseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
    return buf;
}

// "; left out: 2 swarms not whitelisted, 4 peers in them, ..." or "" when nothing was.
std::string left_out(const ImportCounts& c) {
    std::string out;
    auto add = [&](std::size_t n, std::string_view what) {
        if (n == 0) return;
        out += (out.empty() ? "; left out: " : ", ") + std::to_string(n) + " " + std::string(what);
    };
    add(c.swarms_not_whitelisted, "swarms not whitelisted");
    add(c.swarms_over_limit, "swarms beyond max_swarms");
    add(c.peers_refused, "peers in them");
    add(c.swarms_expired, "swarms idle past peer_expiry");
    add(c.peers_expired, "peers silent past peer_expiry");
    add(c.peers_duplicate, "duplicate peers");
    return out;
}

}  // namespace

TrackerService::StateOutcome TrackerService::restore_state(TimePoint now,
                                                           std::chrono::system_clock::time_point wall_now) {
    if (!config_.state_file) return {};
    const auto& path = *config_.state_file;
    auto content = read_state_file(path);
    std::optional<std::string> problem;
    if (!content) {
        problem = content.error();
    } else if (!content->exists) {
        return {true, "state: no state file at " + path.string() + " yet; starting empty"};
    } else if (auto decoded = decode_state(content->bytes); !decoded) {
        problem = "state file '" + path.string() + "' is not usable: " + decoded.error();
    } else {
        // Wall-clock time, since the steady clock starts afresh with the process; a clock set back reads as
        // no time at all.
        const auto down_for = std::chrono::milliseconds(
            std::max<std::int64_t>(0, unix_ms(wall_now) - decoded->saved_at_unix_ms));
        const ImportCounts c = registry_.import_state(decoded->state, now, down_for);
        update_gauges();
        return {true, "state: restored " + std::to_string(c.swarms) + " swarms, " + std::to_string(c.peers) +
                          " peers from " + path.string() + " (saved " + seconds_text(down_for) + " ago)" +
                          left_out(c)};
    }
    auto moved = move_aside(path);
    if (!moved) {
        state_saves_off_ = true;
        return {false, "state: " + *problem + "; " + moved.error() +
                           ", so saving is off until state_file changes (SIGHUP); starting empty"};
    }
    return {false, "state: " + *problem + "; moved it to " + moved->string() + " and starting empty"};
}

TrackerService::StateOutcome TrackerService::save_state(TimePoint now,
                                                        std::chrono::system_clock::time_point wall_now) {
    auto snapshot = snapshot_state(now, wall_now);
    if (!snapshot) return {};
    const auto started = std::chrono::steady_clock::now();
    auto error = write_state_file(snapshot->path, snapshot->bytes);
    return record_save(*snapshot, error, std::chrono::steady_clock::now() - started);
}

std::optional<TrackerService::StateSnapshot> TrackerService::snapshot_state(
    TimePoint now, std::chrono::system_clock::time_point wall_now) {
    if (!config_.state_file || state_saves_off_) return std::nullopt;
    const auto started = std::chrono::steady_clock::now();
    StateSnapshot s;
    s.path = *config_.state_file;
    s.bytes = encode_state(registry_.export_state(now), unix_ms(wall_now));
    const auto t = registry_.totals();
    s.swarms = t.swarms;
    s.peers = t.seeders + t.leechers;
    s.encoding = std::chrono::steady_clock::now() - started;
    return s;
}

TrackerService::StateOutcome TrackerService::record_save(const StateSnapshot& snapshot,
                                                         const std::optional<std::string>& error,
                                                         std::chrono::steady_clock::duration writing) {
    const std::chrono::duration<double> took = snapshot.encoding + writing;
    service_.state_save_seconds.set(took.count());
    if (error) {
        service_.state_saves_failed.inc();
        return {false, "state: " + *error + "; the previous state file stays"};
    }
    service_.state_saves_ok.inc();
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f ms", took.count() * 1000);
    return {true, "state: saved " + std::to_string(snapshot.swarms) + " swarms, " +
                      std::to_string(snapshot.peers) + " peers to " + snapshot.path.string() + " in " + ms};
}

void TrackerService::observe_latency(bool udp, double seconds) {
    transport(udp).latency.observe(seconds);
}

bool TrackerService::within_rate_limit(TransportMetrics& t, const IpAddress& source, TimePoint now) {
    if (limiter_.allow(source, now)) return true;
    t.rate_limited.inc();
    return false;
}

HttpAnswer TrackerService::rate_limited_answer() {
    HttpAnswer a = failure(429, kRateLimited);
    a.headers.emplace_back("Retry-After", "1");
    return a;
}

HttpAnswer TrackerService::failure(int status, std::string_view reason) {
    HttpAnswer a;
    a.status = status;
    a.reason = std::string(reason);
    a.content_type = kBencodeType;
    a.body = bencode_failure(reason, config_.registry.interval, config_.registry.min_interval);
    return a;
}

HttpAnswer TrackerService::http_error(const HttpRefusal& refusal) {
    http_.malformed(refusal.metric).inc();
    return failure(refusal.status, refusal.reason);
}

HttpAnswer TrackerService::handle_http(std::string_view method, std::string_view target,
                                       const IpAddress& source, TimePoint now) {
    if (target.size() > config_.http.max_target_length) {
        return http_error(
            {414, "request target longer than " + std::to_string(config_.http.max_target_length) + " bytes",
             "target_too_long"});
    }
    const auto q = target.find('?');
    const std::string_view path = target.substr(0, q);
    const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);

    if (method != "GET") {
        HttpAnswer a = failure(405, "only GET is supported");
        a.headers.emplace_back("Allow", "GET");
        http_.malformed("method").inc();
        return a;
    }
    if (path == "/announce") return announce(query, source, now);
    if (path == "/scrape") return scrape(query, source, now);
    if ((path == "/stats" || path == "/metrics") && !config_.admin_allow.contains(source)) {
        http_.malformed("forbidden").inc();
        return failure(403, std::string(path) + " is served only to the addresses in admin_allow");
    }
    if (path == "/stats") return stats(query);
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
        http_.malformed(to_string(request.error())).inc();
        return failure(400, failure_reason(request.error()));
    }
    if (!within_rate_limit(http_, source, now)) return rate_limited_answer();
    auto reply = registry_.announce(request.value(), source, now);
    if (!reply) {
        http_.count_refusal(reply.error());
        return failure(refusal_status(reply.error()), failure_reason(reply.error()));
    }
    http_.announces.inc();
    update_gauges();
    HttpAnswer a;
    a.content_type = kBencodeType;
    a.body = bencode_announce(reply.value(), request->compact, !request->no_peer_id);
    return a;
}

HttpAnswer TrackerService::scrape(std::string_view query, const IpAddress& source, TimePoint now) {
    auto hashes = parse_scrape(query, config_.max_scrape_hashes);
    if (!hashes) {
        http_.malformed("scrape").inc();
        return failure(400, failure_reason(hashes.error()));
    }
    if (!within_rate_limit(http_, source, now)) return rate_limited_answer();
    // BEP 48: hashes this tracker does not serve are left out of "files".
    std::vector<std::pair<InfoHash, SwarmCounts>> files;
    for (const auto& h : hashes.value()) {
        if (auto counts = registry_.scrape(h)) files.emplace_back(h, *counts);
    }
    http_.scrapes.inc();
    HttpAnswer a;
    a.content_type = kBencodeType;
    a.body = bencode_scrape(files);
    return a;
}

std::optional<std::vector<std::uint8_t>> TrackerService::handle_udp(std::span<const std::uint8_t> packet,
                                                                    const PeerEndpoint& source, TimePoint now,
                                                                    UdpOutcome* outcome) {
    UdpOutcome ignored;
    UdpOutcome& o = outcome ? *outcome : ignored;
    auto parsed = udp::parse_request(packet);
    if (!parsed) {
        udp_.count_malformed(udp::to_string(parsed.error()));
        return std::nullopt;
    }
    o.status = 200;
    if (const auto* c = std::get_if<udp::ConnectRequest>(&parsed.value())) {
        if (outcome) o.request = "CONNECT / UDP";
        udp_.connects.inc();
        return udp::write_connect_response(c->transaction_id, connection_ids_.issue(source.ip, now));
    }
    if (const auto* a = std::get_if<udp::AnnounceRequestPacket>(&parsed.value())) {
        if (outcome)
            o.request = "ANNOUNCE /announce?info_hash=" + to_hex(a->request.info_hash.view()) + " UDP";
        if (auto refusal = refuse_udp(a->connection_id, a->transaction_id, source, now)) {
            o.status = refusal->status;
            return std::move(refusal->reply);
        }
        return udp_announce(*a, source, now, o);
    }
    const auto& s = std::get<udp::ScrapeRequestPacket>(parsed.value());
    if (outcome) {
        o.request = "SCRAPE /scrape?";
        for (std::size_t i = 0; i < s.info_hashes.size(); ++i)
            o.request += (i ? "&info_hash=" : "info_hash=") + to_hex(s.info_hashes[i].view());
        o.request += " UDP";
    }
    if (auto refusal = refuse_udp(s.connection_id, s.transaction_id, source, now)) {
        o.status = refusal->status;
        return std::move(refusal->reply);
    }
    return udp_scrape(s);
}

std::optional<TrackerService::UdpRefusal> TrackerService::refuse_udp(std::uint64_t connection_id,
                                                                     std::uint32_t transaction_id,
                                                                     const PeerEndpoint& source,
                                                                     TimePoint now) {
    if (!connection_ids_.valid(connection_id, source.ip, now)) {
        udp_.bad_connection_ids.inc();
        return UdpRefusal{400, std::nullopt};
    }
    if (!within_rate_limit(udp_, source.ip, now))
        return UdpRefusal{429, udp::write_error(transaction_id, kRateLimited)};
    return std::nullopt;
}

std::vector<std::uint8_t> TrackerService::udp_announce(const udp::AnnounceRequestPacket& a,
                                                       const PeerEndpoint& source, TimePoint now,
                                                       UdpOutcome& o) {
    const bool v6 = source.ip.v6;
    AnnounceOptions options;
    options.families = v6 ? Families::v6_only : Families::v4_only;
    options.peer_cap = udp::max_peers_per_datagram(v6);
    auto reply = registry_.announce(a.request, source.ip, now, options);
    if (!reply) {
        udp_.count_refusal(reply.error());
        o.status = refusal_status(reply.error());
        return udp::write_error(a.transaction_id, failure_reason(reply.error()));
    }
    udp_.announces.inc();
    update_gauges();
    return udp::write_announce_response(a.transaction_id, reply->interval, reply->counts, reply->peers, v6);
}

std::vector<std::uint8_t> TrackerService::udp_scrape(const udp::ScrapeRequestPacket& s) {
    // A UDP scrape answer is positional, so a hash this tracker does not serve reads as an empty swarm.
    std::vector<SwarmCounts> counts;
    for (const auto& h : s.info_hashes)
        counts.push_back(registry_.scrape(h).value_or(SwarmCounts{}));
    udp_.scrapes.inc();
    return udp::write_scrape_response(s.transaction_id, counts);
}

void TrackerService::tick(TimePoint now) {
    service_.expired.inc(registry_.expire(now));
    limiter_.prune(now);
    update_gauges();
}

void TrackerService::update_gauges() {
    auto t = registry_.totals();
    service_.swarms.set(static_cast<double>(t.swarms));
    service_.seeders.set(static_cast<double>(t.seeders));
    service_.leechers.set(static_cast<double>(t.leechers));
    service_.limiter_tracked.set(static_cast<double>(limiter_.tracked()));
}

TrackerService::ReloadOutcome TrackerService::reload_whitelist() {
    if (!config_.whitelist) return {true, "no whitelist configured; nothing to reload"};
    auto list = load_whitelist_file(*config_.whitelist);
    if (!list) {
        service_.whitelist_reloads_failed.inc();
        return {false, list.error() + "; keeping the previous whitelist"};
    }
    const auto n = list.value().size();
    registry_.set_whitelist(std::move(list).value());
    whitelist_size_ = n;
    service_.whitelist_entries.set(static_cast<double>(n));
    service_.whitelist_reloads_ok.inc();
    return {true, "whitelist reloaded: " + std::to_string(n) + " info-hashes"};
}

HttpAnswer TrackerService::stats(std::string_view query) {
    auto params = parse_query(query);
    if (!params) return failure(400, "bad percent-encoding in the query");
    std::optional<InfoHash> after;
    std::size_t limit = std::min<std::size_t>(100, config_.stats_page_limit);
    for (const auto& [key, value] : *params) {
        if (key == "after") {
            auto bytes = from_hex(value);
            if (!bytes || bytes->size() != 20) return failure(400, "after must be a 40-digit hex info-hash");
            after = InfoHash::from_bytes(*bytes);
        } else if (key == "limit") {
            std::size_t n = 0;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
            if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
                n > config_.stats_page_limit) {
                return failure(400,
                               "limit must be an integer in 0.." + std::to_string(config_.stats_page_limit));
            }
            limit = n;
        } else {
            return failure(400, "unknown /stats parameter '" + key + "' (after, limit)");
        }
    }
    HttpAnswer a;
    a.content_type = "application/json";
    a.body = stats_json(after, limit);
    return a;
}

std::string TrackerService::stats_json(const std::optional<InfoHash>& after, std::size_t limit) const {
    // One more than asked tells whether there is a next page. A limit of 0 asks for the totals alone: no
    // page, so nothing to continue after.
    std::vector<SwarmStats> page;
    if (limit > 0) page = registry_.swarm_stats(after, limit + 1);
    const bool more = page.size() > limit;
    if (more) page.pop_back();
    nlohmann::json swarms = nlohmann::json::array();
    for (const auto& s : page) {
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
        {"next", more ? nlohmann::json(to_hex(page.back().info_hash.view())) : nlohmann::json(nullptr)},
    };
    return out.dump();
}

}  // namespace toast::tracker
