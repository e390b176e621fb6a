#include "client/service/title_service.hpp"

#include <algorithm>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/core/client_options.hpp"
#include "client/lt/engine.hpp"
#include "client/lt/torrent_file.hpp"
#include "client/service/piece_map.hpp"
#include "client/service/service_title.hpp"
#include "client/service/torrent_download.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace asio = boost::asio;
namespace lt = libtorrent;
using json = nlohmann::ordered_json;

namespace toast::client {

std::int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

namespace {

constexpr auto kTorrentFetchTimeout = std::chrono::seconds(15);

ControlResponse json_reply(int status, const json& body) {
    return {.status = status, .body = body.dump()};
}

ControlResponse error_reply(int status, const std::string& message, std::string allow = {}) {
    return {.status = status, .body = api_error_body(message), .allow = std::move(allow)};
}

}  // namespace

TitleService::TitleService(asio::io_context& io, ServeOptions options, ClientTuning tuning)
    : io_(io), options_(std::move(options)), tuning_(std::move(tuning)), tick_timer_(io) {
    {
        ClientOptions o;
        o.token = options_.token;
        o.token_file = options_.token_file;
        o.ca_file = options_.ca_file;
        access_ = server_access_for(o);
    }
    titles_dir_ = options_.save_dir / "titles";
    std::error_code ec;
    std::filesystem::create_directories(titles_dir_, ec);
    if (ec) throw std::runtime_error("cannot create " + titles_dir_.string() + ": " + ec.message());
    SessionConfig sc;
    sc.interface = options_.listen.host;
    sc.listen_port = options_.listen.port;
    sc.upload_limit = options_.upload_limit;
    sc.download_limit = options_.download_limit;
    sc.max_connections = options_.max_connections;
    sc.torrent_connections = ClientOptions{}.max_connections;
    sc.disk_io = options_.disk_io;
    sc.ssl_listen_port = ssl_listen_port_of(options_);
    sc.enable_upnp = options_.upnp;
    sc.enable_natpmp = options_.natpmp;
    sc.choker = choker_kind_of(options_.choker);
    sc.unchoke_slots = default_unchoke_slots(options_.choker);
    session_ = std::make_unique<StreamSession>(
        io_, sc, load_peer_credentials(options_.passkey, options_.ssl_cert, options_.ssl_key));
    session_->on_session_event([](const LtEvent& e) {
        if (e.kind == LtEventKind::listen_failed)
            spdlog::error("cannot listen on port {}: {}", e.port, e.message);
    });
    // Players wait on pieces: alerts are handled as they come, not at the next tick.
    session_->pump_on_alerts();
    load_saved();
    load_box_id();
    if (!options_.servers.empty()) {
        auto base = options_.servers.front();
        while (!base.empty() && base.back() == '/')
            base.pop_back();
        link_ = std::make_unique<ServerLink>(io_, base, options_.box_id,
                                             options_.cache == CachePolicy::popularity, access_);
        if (options_.push_quota) {
            PushHost& host = *this;
            push_ = std::make_unique<PushAgent>(io_, host,
                                                PushAgentConfig{.server = base,
                                                                .box_id = options_.box_id,
                                                                .quota = *options_.push_quota,
                                                                .rate = options_.push_rate,
                                                                .upload = options_.upload_limit,
                                                                .save_dir = options_.save_dir,
                                                                .access = access_});
        }
    }
    ControlServerConfig cc;
    cc.listen = options_.api;
    server_ = std::make_unique<ControlServer>(
        io_, cc,
        [this](const ControlRequest& r, ControlServer::Reply reply) { handle(r, std::move(reply)); });
    server_->start();
}

TitleService::~TitleService() {
    stop();
    push_.reset();
    link_.reset();
    titles_.clear();
    renewer_.reset();
    telemetry_.reset();
    server_.reset();
    session_.reset();
}

std::uint16_t TitleService::listen_port() {
    return session_->session().listen_port();
}

void TitleService::link_server(const std::vector<ServerUrl>& title_servers) {
    if (renewer_ || telemetry_) return;
    std::vector<ServerUrl> servers;
    for (const auto& s : options_.servers)
        if (auto u = parse_http_url(s)) servers.push_back(*u);
    if (servers.empty()) servers = title_servers;
    if (servers.empty() && options_.telemetry.empty()) return;
    ClientOptions o;
    o.telemetry = options_.telemetry;
    if (access_.credential && !servers.empty()) {
        renewer_ = std::make_unique<TokenRenewer>(io_, access_, servers.front());
        renewer_->start();
    }
    if (auto endpoint = telemetry_endpoint(o, servers))
        telemetry_ = std::make_unique<TelemetrySender>(io_, access_, *endpoint);
}

void TitleService::start() {
    if (!options_.servers.empty()) link_server({});
    spdlog::info(
        "serving {} title(s) from {}; control API http://{}:{}/, BitTorrent port {}; box {}, cache {}{}",
        titles_.size(), options_.save_dir.string(), options_.api.host, api_port(), listen_port(),
        options_.box_id, to_string(options_.cache),
        options_.push_quota ? ", push quota " + format_bytes(*options_.push_quota) : std::string());
    if (!keeps_watched_titles(options_.cache)) {
        std::vector<std::string> watched;
        for (auto& [id, t] : titles_)
            if (!t->saved.pushed) watched.push_back(id);
        for (const auto& id : watched)
            remove_title(id);
    }
    ControlResponse ignored;
    make_room(nullptr, &ignored);
    if (link_) link_->start();
    if (push_) push_->start();
    schedule_tick();
}

void TitleService::schedule_tick() {
    tick_timer_.expires_after(std::chrono::seconds(1));
    tick_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || stopped_) return;
        // A smaller quota after a restart, or titles that grew: the least recently watched leave.
        ControlResponse ignored;
        make_room(nullptr, &ignored);
        publish_status();
        schedule_tick();
    });
}

void TitleService::publish_status() {
    if (server_->streams() > 0) server_->publish("status", service_json().dump());
}

void TitleService::stop() {
    if (stopped_) return;
    stopped_ = true;
    tick_timer_.cancel();
    if (renewer_) renewer_->stop();
    if (push_) push_->stop();
    if (link_) link_->stop();
    for (auto& [id, t] : titles_) {
        if (t->stream) {
            t->stream->stop();
            t->saved.last_watched = unix_ms_now();
        }
    }
    save_list();
    if (server_) server_->stop();
}

void TitleService::flush_reports(std::chrono::milliseconds limit, std::function<void()> done) {
    if (!telemetry_) {
        done();
        return;
    }
    telemetry_->flush(limit, [this, done = std::move(done)] {
        spdlog::info("telemetry: {} reports sent, {} dropped", telemetry_->stats().sent,
                     telemetry_->stats().dropped);
        done();
    });
}

ServiceTitle* TitleService::find(const std::string& id) {
    auto it = titles_.find(id);
    return it == titles_.end() ? nullptr : it->second.get();
}

void TitleService::start_seeding(ServiceTitle& t) {
    lt::add_torrent_params atp = t.torrent.params;
    atp.save_path = t.dir.string();
    for (const auto& tr : options_.trackers)
        atp.trackers.push_back(tr);
    atp.piece_priorities.assign(static_cast<std::size_t>(t.geometry.piece_count().value()),
                                lt::dont_download);
    t.seed_events = std::make_unique<TitleSeedEvents>(t);
    t.seed_events->listener = [this, id = t.saved.id](const LtEvent& e) {
        if (push_) push_->on_seed_event(id, e);
    };
    // Every piece had: the choker spreads the upload over the peers (core/choker.hpp, complete_slots).
    session_->control().set_position(t.torrent.params.ti->info_hashes().get_best(),
                                     {PieceIndex(t.geometry.piece_count().value()),
                                      t.geometry.piece_duration(),
                                      t.geometry.piece_count(),
                                      {},
                                      {}});
    t.seed = session_->add(std::move(atp), *t.seed_events).handle;
}

void TitleService::stop_seeding(ServiceTitle& t) {
    if (!t.seed.is_valid()) return;
    t.uploaded += static_cast<std::uint64_t>(t.seed.status().total_payload_upload);
    session_->remove(t.seed, true);
    t.seed = {};
    t.seed_events.reset();
}

TitleService::Added TitleService::create_title(const std::string& bytes, const std::string& origin,
                                               bool pushed) {
    Added out;
    TitleTorrent torrent;
    try {
        torrent = parse_title_torrent(std::vector<char>(bytes.begin(), bytes.end()), origin);
    } catch (const std::exception& e) {
        out.refusal = error_reply(422, e.what());
        return out;
    }
    const auto& ti = *torrent.params.ti;
    if (!torrent.bitrate) {
        out.refusal = error_reply(
            422, origin + ": the torrent has no bitrate (no \"toast\" key from the server's ingest)");
        return out;
    }
    std::string error;
    auto g =
        TitleGeometry::make(Bytes(static_cast<std::uint64_t>(ti.total_size())),
                            Bytes(static_cast<std::uint64_t>(ti.piece_length())), *torrent.bitrate, &error);
    if (!g) {
        out.refusal = error_reply(422, origin + ": unusable title: " + error);
        return out;
    }
    auto id = title_id(ti.info_hashes().get_best());
    if (auto* existing = find(id)) {
        out.title = existing;
        out.existed = true;
        return out;
    }
    if (!pushed && options_.disk_quota && g->total_size() > *options_.disk_quota) {
        out.refusal = error_reply(507, "the title (" + format_bytes(g->total_size()) +
                                           ") is larger than the disk quota (" +
                                           format_bytes(*options_.disk_quota) + ")");
        return out;
    }
    auto dir = titles_dir_ / id;
    try {
        std::filesystem::create_directories(dir);
        write_file_atomically(dir / kTitleTorrentFile, bytes);
    } catch (const std::exception& e) {
        out.refusal = error_reply(500, std::string("cannot store the torrent: ") + e.what());
        return out;
    }
    auto now = unix_ms_now();
    auto t = std::make_unique<ServiceTitle>(
        SavedTitle{.id = id, .name = torrent.title, .added = now, .last_watched = 0, .pushed = pushed},
        std::move(torrent), *g, dir);
    try {
        start_seeding(*t);
    } catch (const std::exception& e) {
        std::filesystem::remove_all(dir);
        out.refusal = error_reply(422, e.what());
        return out;
    }
    spdlog::info("added title {} ('{}') from {}{}", id, t->saved.name, origin, pushed ? " (push)" : "");
    out.title = t.get();
    titles_[id] = std::move(t);
    save_list();
    return out;
}

void TitleService::add_title(const std::string& bytes, const std::string& origin,
                             const ControlServer::Reply& reply) {
    auto added = create_title(bytes, origin, false);
    if (!added.title) return reply(added.refusal);
    reply(json_reply(added.existed ? 200 : 201, title_status_json(*added.title)));
}

void TitleService::play(ServiceTitle& t, const ControlServer::Reply& reply) {
    auto tr = transition(t.state, TitleCommand::play);
    if (tr.status != 200) {
        reply(error_reply(tr.status, tr.error));
        return;
    }
    if (tr.changed) {
        ControlResponse refusal;
        if (!make_room(&t, &refusal)) {
            reply(refusal);
            return;
        }
        ClientOptions o;
        o.command = ClientCommand::play;
        o.torrent = t.dir / kTitleTorrentFile;
        o.save_dir = t.dir;
        o.stats_file = t.dir / "stats.jsonl";
        o.servers = options_.servers;
        o.trackers = options_.trackers;
        o.behavior = Behavior::seed;  // a service title plays until stopped, then seeds
        o.picker = options_.picker;
        o.choker = options_.choker;
        // The box's upload cap (the session's) is where the adaptive picker starts: the operator's boxes
        // share one provisioning, so its share of the bitrate is what the box's peers can carry.
        o.upload_limit = options_.upload_limit;
        o.log_level = options_.log_level;
        o.telemetry_interval = options_.telemetry_interval;
        o.http = Endpoint{"127.0.0.1", 0};
        // The box's user comes first: fetches for pre-placement stop before the title starts.
        if (push_) push_->on_play_started();
        stop_seeding(t);
        const auto generation = ++t.generation;
        const auto id = t.saved.id;
        try {
            t.stream = std::make_unique<TitleStream>(
                *session_, o, t.torrent, tuning_,
                [this, id, generation] {
                    asio::post(io_, [this, id, generation] {
                        auto* title = find(id);
                        if (title && title->stream && title->generation == generation) end_stream(*title);
                    });
                },
                std::chrono::steady_clock::now(), access_);
            link_server(t.stream->server_urls());
            if (telemetry_) t.stream->report_to(*telemetry_);
        } catch (const std::exception& e) {
            t.stream.reset();
            t.error = e.what();
            start_seeding(t);
            reply(error_reply(500, std::string("cannot play: ") + e.what()));
            return;
        }
        t.error.clear();
        t.state = TitleState::playing;
        t.saved.last_watched = unix_ms_now();
        t.saved.pushed = false;  // watched: the cache's from now on
        if (link_) link_->report_play(t.saved.id);
        t.stream->start();
        save_list();
        spdlog::info("playing title {} ('{}') at {}", id, t.saved.name, t.stream->player_url());
    }
    json j{{"id", t.saved.id},
           {"state", "playing"},
           {"url", t.stream->player_url()},
           {"resume_ms", t.stream->resume_time().count()}};
    reply(json_reply(200, j));
    publish_status();
}

void TitleService::end_stream(ServiceTitle& t) {
    const auto& result = t.stream->result();
    t.from_peers += result.summary.bytes_from_peers;
    t.from_server += result.summary.bytes_from_server;
    t.uploaded += result.summary.bytes_uploaded;
    t.stalls += result.summary.stalls;
    if (result.exit_code != 0) t.error = result.error;
    auto handle = t.stream->handle();
    t.stream.reset();
    session_->remove(handle, true);
    t.state = TitleState::stopped;
    t.saved.last_watched = unix_ms_now();
    if (!stopped_ && !keeps_watched_titles(options_.cache)) {
        remove_title(t.saved.id);
        publish_status();
        return;
    }
    if (!stopped_) start_seeding(t);
    save_list();
    publish_status();
}

void TitleService::stop_title(ServiceTitle& t) {
    t.stream->stop();
    end_stream(t);
}

void TitleService::remove_title(const std::string& id) {
    auto* t = find(id);
    if (!t) return;
    if (push_) push_->on_title_removed(id);
    if (t->stream) {
        t->stream->stop();
        auto handle = t->stream->handle();
        t->stream.reset();
        session_->remove(handle, true);
    }
    stop_seeding(*t);
    std::error_code ec;
    std::filesystem::remove_all(t->dir, ec);
    if (ec) spdlog::warn("cannot delete {}: {}", t->dir.string(), ec.message());
    spdlog::info("removed title {} ('{}')", id, t->saved.name);
    titles_.erase(id);
    save_list();
}

json TitleService::service_json() {
    json titles = json::array();
    std::uint64_t used = 0;
    for (auto& [id, t] : titles_) {
        titles.push_back(title_status_json(*t));
        if (!t->saved.pushed) used += titles.back()["bytes_on_disk"].get<std::uint64_t>();
    }
    json j;
    j["api_port"] = api_port();
    j["listen_port"] = listen_port();
    j["disk_quota"] = options_.disk_quota ? json(options_.disk_quota->value()) : json(nullptr);
    j["disk_used"] = used;
    j["upload_limit_bps"] = options_.upload_limit ? json(options_.upload_limit->value()) : json(nullptr);
    j["box_id"] = options_.box_id;
    j["cache"] = std::string(to_string(options_.cache));
    j["push"] = push_ ? push_->status_json() : json(nullptr);
    j["titles"] = titles;
    return j;
}

void TitleService::handle(const ControlRequest& request, ControlServer::Reply reply) {
    auto parsed = parse_api_request({.method = request.method,
                                     .target = request.target,
                                     .content_type = request.content_type,
                                     .body = request.body,
                                     .host = request.host,
                                     .origin = request.origin});
    if (!parsed.request) {
        reply(error_reply(parsed.error.status, parsed.error.message, parsed.error.allow));
        return;
    }
    if (stopped_) {
        reply(error_reply(503, "the service is stopping"));
        return;
    }
    const auto& r = *parsed.request;
    switch (r.action) {
        case ApiAction::piece_map:
            reply({.status = 200,
                   .content_type = "text/html; charset=utf-8",
                   .body = piece_map_page(service_json())});
            return;
        case ApiAction::service_status:
            reply(json_reply(200, service_json()));
            return;
        case ApiAction::list_titles: {
            json list = json::array();
            for (auto& [id, t] : titles_)
                list.push_back(title_status_json(*t));
            reply(json_reply(200, json{{"titles", list}}));
            return;
        }
        case ApiAction::events:
            reply({.status = 200,
                   .content_type = "text/event-stream",
                   .body = sse_event("status", service_json().dump()),
                   .event_stream = true});
            return;
        case ApiAction::add_torrent:
            add_title(r.torrent, "the uploaded torrent", reply);
            return;
        case ApiAction::add_url:
            download_torrent(io_, r.url, kMaxTorrentBytes, kTorrentFetchTimeout, access_,
                             [this, reply, url = r.url](TorrentDownloadResult d) {
                                 if (stopped_) return reply(error_reply(503, "the service is stopping"));
                                 if (!d.ok) return reply(error_reply(502, d.error));
                                 add_title(d.body, url, reply);
                             });
            return;
        default:
            break;
    }
    auto* t = find(r.title_id);
    if (!t) {
        reply(error_reply(404, "no title " + r.title_id));
        return;
    }
    switch (r.action) {
        case ApiAction::title_status:
            reply(json_reply(200, title_status_json(*t)));
            return;
        case ApiAction::play:
            play(*t, reply);
            return;
        case ApiAction::stop: {
            auto tr = transition(t->state, TitleCommand::stop);
            if (tr.status != 200) {
                reply(error_reply(tr.status, tr.error));
                return;
            }
            const auto id = t->saved.id;
            stop_title(*t);
            // With --cache none the title is gone once its play stops.
            if (auto* still = find(id)) {
                reply(json_reply(200, title_status_json(*still)));
            } else {
                reply(json_reply(200, json{{"id", id}, {"state", "removed"}}));
            }
            return;
        }
        case ApiAction::remove: {
            auto id = t->saved.id;
            remove_title(id);
            reply(json_reply(200, json{{"id", id}, {"state", "removed"}}));
            publish_status();
            return;
        }
        default:
            reply(error_reply(500, "unhandled request"));
    }
}

}  // namespace toast::client
