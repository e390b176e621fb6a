#include "tracker/io/tracker_service.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <unordered_set>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "toast/common/read_file.hpp"
#include "tracker/core/announce_request.hpp"
#include "tracker/io/bencode_responses.hpp"

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

Result<PasskeyStore, std::string> load_passkey_file(const std::filesystem::path& path, SipKey hash_key) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileReadError& e) {
        return std::string("cannot read passkey file '" + path.string() + "': " + e.reason());
    }
    auto parsed = parse_passkey_file(text, hash_key);
    if (!parsed) {
        return std::string("passkey file '" + path.string() + "' line " +
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
      passkeys_(secrets.udp_secret),
      hash_key_(secrets.hash_key),
      http_(metrics),
      udp_(metrics),
      service_(metrics) {
    // Created up front so that a scrape of /metrics shows them at zero before anything goes wrong.
    for (auto why : {PasskeyRefusal::missing, PasskeyRefusal::unknown, PasskeyRefusal::revoked}) {
        http_.refused(to_string(why));
        udp_.refused(to_string(why));
    }
    if (config_.passkeys) {
        auto store = load_passkey_file(*config_.passkeys, hash_key_);
        if (!store) throw std::runtime_error(store.error());
        replace_passkeys(std::move(store).value());
    }
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

    if (next.passkeys) {
        auto store = load_passkey_file(*next.passkeys, hash_key_);
        if (store) {
            service_.passkey_reloads_ok.inc();
            out.changed.push_back(replace_passkeys(std::move(store).value()));
        } else {
            service_.passkey_reloads_failed.inc();
            out.not_applied.push_back(store.error() + "; keeping the previous passkeys" +
                                      (config_.passkeys ? " (" + config_.passkeys->string() + ")" : ""));
            next.passkeys = config_.passkeys;
        }
    } else if (passkeys_.enabled()) {
        out.changed.push_back(replace_passkeys(std::nullopt));
    }

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
    if (auto t = parse_tracker_target(path, query)) {
        return t->path == TrackerPath::announce ? announce(query, t.value(), source, now)
                                                : scrape(query, t.value(), source, now);
    } else if (t.error() != TargetError::not_a_tracker_path) {
        http_.malformed(to_string(t.error())).inc();
        return failure(400, failure_reason(t.error()));
    }
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

HttpAnswer TrackerService::announce(std::string_view query, const TrackerTarget& target,
                                    const IpAddress& source, TimePoint now) {
    auto request = parse_announce(query);
    if (!request) {
        http_.malformed(to_string(request.error())).inc();
        return failure(400, failure_reason(request.error()));
    }
    // Before the passkey check, so that nobody can try keys faster than the rate limit.
    if (!within_rate_limit(http_, source, now)) return rate_limited_answer();
    auto owner = passkeys_.admit(target.passkey);
    if (!owner) {
        on_passkey_refused(http_, owner.error(), &request.value(), source);
        return failure(403, failure_reason(owner.error()));
    }
    AnnounceOptions options;
    options.owner = owner.value();
    auto reply = registry_.announce(request.value(), source, now, options);
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

HttpAnswer TrackerService::scrape(std::string_view query, const TrackerTarget& target,
                                  const IpAddress& source, TimePoint now) {
    auto hashes = parse_scrape(query, config_.max_scrape_hashes);
    if (!hashes) {
        http_.malformed("scrape").inc();
        return failure(400, failure_reason(hashes.error()));
    }
    if (!within_rate_limit(http_, source, now)) return rate_limited_answer();
    if (auto owner = passkeys_.admit(target.passkey); !owner) {
        on_passkey_refused(http_, owner.error(), nullptr, source);
        return failure(403, failure_reason(owner.error()));
    }
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
    // A UDP scrape carries no URLData (BEP 41 options follow announces only), so no passkey either.
    if (passkeys_.enabled()) {
        on_passkey_refused(udp_, PasskeyRefusal::missing, nullptr, source.ip);
        o.status = 403;
        return udp::write_error(s.transaction_id,
                                "this tracker needs a passkey: scrape over HTTP at /scrape/PASSKEY");
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
    // libtorrent sends what follows host:port in the URL as BEP 41 URLData: "/announce/KEY",
    // "/announce?passkey=KEY", or for a URL without a tracker path ("udp://host:port?passkey=KEY") just
    // the query, whose passkey counts all the same.
    std::optional<std::string> passkey;
    if (!a.url_data.empty()) {
        auto target = parse_tracker_target(a.url_data);
        if (!target && target.error() == TargetError::not_a_tracker_path) {
            const auto q = a.url_data.find('?');
            target = parse_tracker_target("/announce", q == std::string::npos
                                                           ? std::string_view()
                                                           : std::string_view(a.url_data).substr(q + 1));
        }
        if (target) {
            passkey = target->passkey;
        } else if (target.error() != TargetError::not_a_tracker_path) {
            udp_.count_malformed(to_string(target.error()));
            o.status = 400;
            return udp::write_error(a.transaction_id, failure_reason(target.error()));
        }
    }
    auto owner = passkeys_.admit(passkey);
    if (!owner) {
        on_passkey_refused(udp_, owner.error(), &a.request, source.ip);
        o.status = 403;
        return udp::write_error(a.transaction_id, failure_reason(owner.error()));
    }
    const bool v6 = source.ip.v6;
    AnnounceOptions options;
    options.families = v6 ? Families::v6_only : Families::v4_only;
    options.peer_cap = udp::max_peers_per_datagram(v6);
    options.owner = owner.value();
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

std::string TrackerService::replace_passkeys(std::optional<PasskeyStore> next) {
    const bool was = passkeys_.enabled();
    const auto c = passkeys_.replace(std::move(next));
    std::unordered_set<std::uint64_t> owners(c.revoked_owners.begin(), c.revoked_owners.end());
    const std::size_t removed =
        owners.empty() ? 0 : registry_.remove_owned([&](std::uint64_t o) { return owners.count(o) != 0; });
    service_.revoked_peers_removed.inc(removed);
    service_.passkey_entries.set(static_cast<double>(passkeys_.size()));
    update_gauges();
    if (!passkeys_.enabled())
        return "passkeys: off (" + std::to_string(c.revoked) + " revoked, " + std::to_string(removed) +
               " peers removed); announces need no passkey";
    return std::string("passkeys: ") + (was ? "reloaded, " : "") + std::to_string(passkeys_.size()) +
           " in force (" + std::to_string(c.added) + " added, " + std::to_string(c.revoked) + " revoked, " +
           std::to_string(removed) + " peers removed)";
}

void TrackerService::on_passkey_refused(TransportMetrics& transport, PasskeyRefusal why,
                                        const AnnounceRequest* request, const IpAddress& source) {
    transport.refused(to_string(why)).inc();
    if (!request) return;
    const IpAddress ip = effective_ip(source, request->ip, config_.registry.ip_param_from);
    if (registry_.remove_peer(request->info_hash, request->peer_id, ip)) {
        service_.revoked_peers_removed.inc();
        update_gauges();
    }
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
                          {"partial_seeds", s.counts.partial_seeds},
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
          {"partial_seeds", t.partial_seeds},
          {"completed", t.completed},
          {"announces", t.announces}}},
        {"whitelist", {{"enabled", config_.whitelist.has_value()}, {"entries", whitelist_size_}}},
        {"passkeys", {{"enabled", passkeys_.enabled()}, {"entries", passkeys_.size()}}},
        {"next", more ? nlohmann::json(to_hex(page.back().info_hash.view())) : nlohmann::json(nullptr)},
    };
    return out.dump();
}

}  // namespace toast::tracker
