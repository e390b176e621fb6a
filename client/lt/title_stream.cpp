#include "client/lt/title_stream.hpp"

#include <cstdio>
#include <random>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <libtorrent/address.hpp>
#include <libtorrent/torrent_flags.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/core/choker.hpp"
#include "client/core/status_line.hpp"
#include "client/lt/plan_applier.hpp"
#include "client/lt/server_fallback.hpp"
#include "client/lt/stats_file.hpp"
#include "client/lt/swarm_reader.hpp"
#include "client/lt/telemetry_sender.hpp"
#include "client/lt/title_playback.hpp"

namespace asio = boost::asio;
namespace lt = libtorrent;
using Clock = std::chrono::steady_clock;

namespace toast::client {

namespace {

TitleGeometry make_geometry(const TitleTorrent& t, const std::optional<BitRate>& override_rate) {
    auto rate = override_rate ? override_rate : t.bitrate;
    if (!rate) {
        throw std::runtime_error(
            "the torrent has no bitrate (no \"toast\" key from the server's ingest); "
            "give one with --bitrate");
    }
    std::string error;
    auto g =
        TitleGeometry::make(Bytes(static_cast<std::uint64_t>(t.params.ti->total_size())),
                            Bytes(static_cast<std::uint64_t>(t.params.ti->piece_length())), *rate, &error);
    if (!g) throw std::runtime_error("unusable title: " + error);
    return *g;
}

std::string title_file_name(const TitleTorrent& t) {
    return t.params.ti->files().file_name(lt::file_index_t(0)).to_string();
}

std::vector<ServerUrl> server_urls_of(const TitleTorrent& t, const ClientOptions& o) {
    std::vector<ServerUrl> out;
    for (const auto& text : title_urls(t.url_list, o.servers, title_file_name(t))) {
        auto u = parse_http_url(text);
        if (!u)
            throw std::runtime_error("server URL '" + redact_token(text) +
                                     "' is not an http:// or https:// URL");
        out.push_back(*u);
    }
    return out;
}

std::optional<Bytes> resolve_buffer_limit(const ClientOptions& o, const TitleGeometry& g) {
    if (!o.buffer_limit) return std::nullopt;
    auto limit = o.buffer_limit->resolve(g.total_size());
    if (auto problem = check_buffer_limit(limit, g))
        throw std::runtime_error("--buffer-limit " + o.buffer_limit->to_string() + ": " + *problem);
    return limit;
}

}  // namespace

TitleStream::TitleStream(StreamSession& session, const ClientOptions& options, TitleTorrent torrent,
                         const ClientTuning& tuning, std::function<void()> on_finished, SteadyTime launched,
                         ServerAccess access)
    : session_(session),
      options_(options),
      tuning_(tuning),
      torrent_(std::move(torrent)),
      on_finished_(std::move(on_finished)),
      tick_timer_(session.io()),
      started_(launched),
      last_stats_(started_) {
    const auto geometry = make_geometry(torrent_, options_.bitrate);
    const auto limit = resolve_buffer_limit(options_, geometry);
    const bool play = options_.command == ClientCommand::play;
    if (play) resume_ = load_resume_offset(options_.save_dir, title_file_name(torrent_), geometry);
    auto urls = server_urls_of(torrent_, options_);
    const bool has_server = !urls.empty();
    const bool has_trackers = !torrent_.params.ti->trackers().empty() || !torrent_.params.trackers.empty() ||
                              !options_.trackers.empty();
    auto setup = controller_setup_for(options_, limit, has_server, has_trackers,
                                      watcher_config_for(options_, geometry, tuning_, resume_));
    controller_ = std::make_unique<StreamController>(geometry, setup, tuning_, started_);
    from_peers_ = PieceSet(geometry.piece_count());
    from_server_ = PieceSet(geometry.piece_count());

    std::filesystem::create_directories(options_.save_dir);
    stats_ = std::make_unique<StatsFile>(options_.stats_file);

    lt::add_torrent_params atp = torrent_.params;
    atp.save_path = options_.save_dir.string();
    for (const auto& t : options_.trackers)
        atp.trackers.push_back(t);
    // The first plan goes in with the torrent: otherwise libtorrent picks in its own order until the first
    // tick, and on a fast swarm that can be the whole title.
    auto first = controller_->initial_plan();
    for (auto prio : first.priority)
        atp.piece_priorities.push_back(lt::download_priority_t(prio));
    applier_ = std::make_unique<PlanApplier>(geometry.piece_count(), tuning_.applier);
    applier_->assume_applied(first.priority);
    key_ = torrent_.params.ti->info_hashes().get_best();
    std::vector<lt::tcp::endpoint> operators;
    for (const auto* list : {&torrent_.operator_peers, &options_.operator_peers}) {
        for (const auto& ep : *list)
            operators.emplace_back(lt::make_address(ep.host), ep.port);
    }
    session_.control().set_operator_peers(key_, std::move(operators));
    StreamSession::Added added;
    try {
        added = session_.add(std::move(atp), *this);
    } catch (...) {
        session_.control().forget_torrent(key_);
        throw;
    }
    handle_ = added.handle;
    registry_ = added.registry;
    std::vector<std::string> url_texts;
    for (const auto& u : urls)
        url_texts.push_back(u.text);
    fallback_ = std::make_unique<ServerFallback>(session_.io(), std::move(urls), *controller_, handle_,
                                                 session_.control(), key_, std::move(access));
    // A title on a tier: each piece goes to the nodes holding its block.
    if (torrent_.tier) {
        if (auto routes = TierRoutes::make(*torrent_.tier, torrent_.title, torrent_.block_size,
                                           geometry.piece_length(), geometry.total_size(), url_texts))
            fallback_->set_routes(std::move(*routes));
    }
    piece_control_ = std::make_unique<LtPieceControl>(handle_);
    reader_ = std::make_unique<SwarmReader>(
        handle_, geometry, tuning_.peer_read_interval,
        [&control = session_.control()](const std::function<void()>& work) { control.run_on_network(work); });
    if (play) {
        try {
            playback_ = std::make_unique<TitlePlayback>(
                session_.io(), *controller_, torrent_.params.ti,
                PlaybackSetup{options_.save_dir, options_.http, tuning_.player_wait_timeout}, tuning_,
                [this] { kick(); });
        } catch (...) {
            session_.remove(handle_, true);
            session_.control().forget_torrent(key_);
            throw;
        }
    }
    // Events are handled as they come, not at the next tick: a piece a player (or the startup) waits for
    // counts at once, and the torrent's readiness starts the first plan.
    session_.pump_on_alerts();
}

TitleStream::~TitleStream() {
    life_ = Life::finished;
    tick_timer_.cancel();
    playback_.reset();
    if (fallback_) fallback_->stop();
    fallback_.reset();
    session_.remove(handle_, false);
    session_.control().forget_torrent(key_);
}

void TitleStream::start() {
    const auto& g = controller_->geometry();
    spdlog::info("streaming '{}': {} pieces of {} at {}, {} server URL(s), picker {}, behaviour {}",
                 torrent_.title, g.piece_count().value(), format_bytes(g.piece_length()),
                 format_bitrate(g.bitrate()), fallback_->servers(), to_string(options_.picker),
                 to_string(options_.behavior));
    schedule_tick(true);
}

void TitleStream::report_to(TelemetrySender& sender) {
    telemetry_ = &sender;
    // A session id the operator cannot tie to the box across sessions: random, 64 bits.
    std::random_device device;
    const std::uint64_t id = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
    reporter_.emplace(text, torrent_.title, options_.telemetry_interval, started_);
}

const std::vector<ServerUrl>& TitleStream::server_urls() const {
    return fallback_->urls();
}

QoeSample TitleStream::qoe_sample(const StatsRecord& r) const {
    QoeSample s;
    s.startup_ms = r.startup_ms;
    s.stalls = &controller_->watcher().ended_stalls();
    s.seeks = r.seeks;
    s.played = controller_->watcher().playing_time();
    s.bytes_from_peers = r.bytes_from_peers;
    s.bytes_from_server = r.bytes_from_server;
    s.bytes_uploaded = r.bytes_uploaded;
    return s;
}

std::string TitleStream::player_url() const {
    return playback_ ? playback_->url() : std::string();
}

std::chrono::milliseconds TitleStream::resume_time() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        controller_->geometry().media_time_at(resume_));
}

void TitleStream::watch_player(std::function<bool()> running) {
    player_running_ = std::move(running);
}

void TitleStream::follow_mpv(const std::filesystem::path& socket) {
    if (playback_) playback_->follow_mpv(socket);
}

void TitleStream::schedule_tick(bool first) {
    tick_timer_.expires_after(first ? std::chrono::milliseconds(0) : tuning_.tick);
    tick_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || life_ == Life::finished) return;
        tick();
        if (life_ != Life::finished) schedule_tick(false);
    });
}

void TitleStream::kick() {
    if (kick_pending_ || life_ == Life::finished) return;
    kick_pending_ = true;
    asio::post(session_.io(), [this] {
        kick_pending_ = false;
        if (life_ != Life::finished) tick();
    });
}

SwarmControl::Position TitleStream::choker_position() const {
    const auto& g = controller_->geometry();
    const auto chain = chain_position(controller_->watcher(), g, options_.upload_limit);
    return {controller_->had().first_missing(), g.piece_duration(), g.piece_count(), chain.playhead,
            chain.min_gap};
}

void TitleStream::tick() {
    auto now = Clock::now();
    session_.pump();
    if (life_ == Life::finished) return;
    if (!controller_->ready()) {
        if (reader_->checking()) return;
        controller_->on_ready(reader_->pieces_on_disk(), now);
        for (auto p : controller_->had().pieces()) {
            applier_->on_piece_had(p);
            if (playback_) playback_->on_piece_had(p);
        }
    }
    auto plan = controller_->tick(reader_->read(now, fallback_->reachable(now),
                                                session_.control().operator_connections(key_),
                                                session_.control().queue_fronts(key_)));
    apply(plan, now);
    if (session_.control().ranks_by_position()) session_.control().set_position(key_, choker_position());

    if (now - last_stats_ >= tuning_.stats_interval) {
        last_stats_ = now;
        const auto& w = controller_->watcher();
        spdlog::debug(
            "playhead piece {} ({}), {} had, {} peers, peer rate {:.0f} B/s, horizon {} pieces, {} wanted, "
            "{} server fetches in flight",
            w.playhead_piece().value(), to_string(w.state()), controller_->had().count().value(),
            controller_->connected_peers(), controller_->horizon().peer_rate(), plan.horizon.value(),
            plan.pieces.wanted.size(), controller_->fallback().in_flight_pieces().size());
        auto record = make_record("stats", now);
        stats_->write(record);
        if (playback_) playback_->on_stats(record);
        if (reporter_) {
            if (auto report = reporter_->on_tick(qoe_sample(record), now)) telemetry_->submit(*report);
        }
    }
    if (player_running_) {
        // play with a player: leave when it exits, whatever the behaviour says.
        if (!player_running_()) {
            spdlog::info("the player exited");
            finish();
        }
        return;
    }
    if (plan.leave) finish();
}

void TitleStream::apply(const ControllerPlan& plan, SteadyTime now) {
    for (auto p : plan.eject) {
        registry_->eject(p);
        session_.control().announce_dont_have(key_, p);
        if (playback_) playback_->on_piece_lost(p);
    }
    if (plan.upload_mode) {
        if (*plan.upload_mode) {
            handle_.set_flags(lt::torrent_flags::upload_mode);
        } else {
            handle_.unset_flags(lt::torrent_flags::upload_mode);
        }
        spdlog::info("buffer {}: {} stored of {}",
                     *plan.upload_mode ? "full, downloading suspended" : "has room again",
                     format_bytes(controller_->stored_bytes()),
                     format_bytes(controller_->buffer_limit().value_or(Bytes(0))));
    }
    for (auto p : plan.release)
        fallback_->release(p);
    for (const auto& f : plan.fetches) {
        spdlog::debug("server fetch of piece {} ({}{}), playhead piece {}", f.piece.value(),
                      to_string(f.reason), f.revalidate ? ", revalidate" : "",
                      controller_->watcher().playhead_piece().value());
        fallback_->start(f, now);
    }
    if (plan.apply_pieces) {
        auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - started_).count();
        applier_->apply(plan.pieces, controller_->had(), now_ms, *piece_control_);
    }
    if (plan.ask_operator != asked_operator_) {
        asked_operator_ = plan.ask_operator;
        spdlog::debug("operator's peers {} ({})", asked_operator_ ? "asked" : "left alone",
                      to_string(controller_->operator_tier().reason()));
        session_.control().set_operator_wanted(key_, asked_operator_);
    }
    if (plan.reannounce) handle_.force_reannounce(0, -1, lt::torrent_handle::ignore_min_interval);
    // A torrent libtorrent completed itself is seeding and has announced it. One whose pieces came through
    // add_piece (or whose missing pieces had priority 0 when the rest arrived) stays "finished": an announce
    // now carries event=completed, since libtorrent sends it with the first announce of a seed.
    if (plan.announce_completed && handle_.status({}).state != lt::torrent_status::seeding) {
        spdlog::info("every piece is here: announcing completed");
        handle_.force_reannounce(0, -1, lt::torrent_handle::ignore_min_interval);
    }
}

void TitleStream::on_piece_finished(PieceIndex p, SteadyTime now) {
    auto a = controller_->on_piece_finished(p, now);
    spdlog::trace("piece {} finished ({})", p.value(), a.from_server ? "server" : "peers");
    if (a.cancel_fetch) fallback_->stop_fetch(p);
    // Every piece_finished is an arrival of this session, even one the first check already counted as on
    // disk (its alert can come after the check read the bitfield).
    if (!from_server_.has(p) && !from_peers_.has(p)) (a.from_server ? from_server_ : from_peers_).set(p);
    if (!a.new_piece) return;
    applier_->on_piece_had(p);
    if (playback_) playback_->on_piece_had(p);
}

void TitleStream::on_event(const LtEvent& e) {
    if (life_ == Life::finished) return;
    auto now = Clock::now();
    switch (e.kind) {
        case LtEventKind::piece_finished:
            on_piece_finished(e.piece, now);
            return;
        case LtEventKind::hash_failed:
            if (controller_->on_hash_failed(e.piece, now))
                spdlog::warn("server piece {} failed the hash check; fetching it again", e.piece.value());
            return;
        default:
            break;
    }
    // While stopping, only the last pieces count (for the summary); nothing else is reacted to.
    if (life_ == Life::finishing) return;
    switch (e.kind) {
        case LtEventKind::torrent_checked:
            kick();
            return;
        case LtEventKind::torrent_error:
            spdlog::error("torrent error: {}", e.message);
            fail("torrent error: " + e.message);
            return;
        case LtEventKind::tracker_error:
            spdlog::warn("tracker: {}", e.message);
            controller_->on_tracker_failed(now);
            return;
        case LtEventKind::tracker_reply:
            controller_->on_tracker_reply(e.peers, now);
            return;
        case LtEventKind::peer_connected:
            spdlog::debug("peer {} connected", e.peer);
            return;
        case LtEventKind::peer_disconnected:
            spdlog::debug("peer {} disconnected: {}", e.peer, e.message);
            return;
        case LtEventKind::file_error:
            spdlog::debug("disk: {}", e.message);
            return;
        default:
            return;
    }
}

StatsRecord TitleStream::make_record(const std::string& event, SteadyTime now) {
    StatsRecord r;
    r.event = event;
    r.t_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - started_).count();
    controller_->fill_record(r, now);
    const auto& st = reader_->status();
    r.bytes_from_peers = static_cast<std::uint64_t>(st.total_payload_download);
    r.bytes_uploaded = static_cast<std::uint64_t>(st.total_payload_upload);
    r.bytes_redundant = static_cast<std::uint64_t>(st.total_redundant_bytes);
    r.bytes_redundant_raced = std::min(session_.control().raced_bytes(key_), r.bytes_redundant);
    r.bytes_from_operator = std::min(session_.control().operator_bytes(key_), r.bytes_from_peers);
    // Malformed server answers are the transport's waste, on top of what the controller counted.
    r.bytes_server_wasted += fallback_->stats().bytes_rejected;
    r.bytes_from_server = r.bytes_server_useful + r.bytes_server_wasted;
    r.server_late_answers = fallback_->stats().late_answers;
    if (playback_) playback_->fill_record(r);
    return r;
}

void TitleStream::fail(const std::string& error) {
    if (life_ == Life::finished) return;
    result_.exit_code = 1;
    result_.error = error;
    finish();
}

void TitleStream::stop() {
    finish();
}

void TitleStream::finish() {
    if (life_ != Life::running) return;
    life_ = Life::finishing;
    auto now = Clock::now();
    // The last piece events before the summary, without reacting to anything else.
    session_.pump();
    controller_->on_stop(now);
    reader_->refresh_status();
    auto summary = make_record("summary", now);
    stats_->write(summary);
    result_.summary = summary;
    if (reporter_) {
        if (auto report = reporter_->on_end(qoe_sample(summary))) telemetry_->submit(*report);
    }
    if (playback_) playback_->stop(summary);
    result_.cancels_sent = session_.control().cancels_sent();
    result_.dont_haves_sent = session_.control().dont_haves_sent();
    result_.reads_refused = registry_->reads_refused();
    result_.counters = controller_->counters();
    result_.http_failures = fallback_->stats().failures;
    const auto& st = reader_->status();
    spdlog::info(
        "summary: {} from peers, {} from server ({} wasted), {} uploaded (and {} of protocol messages), {} "
        "stalls, fidelity {}",
        format_bytes(Bytes(summary.bytes_from_peers)), format_bytes(Bytes(summary.bytes_from_server)),
        format_bytes(Bytes(summary.bytes_server_wasted)), format_bytes(Bytes(summary.bytes_uploaded)),
        format_bytes(Bytes(static_cast<std::uint64_t>(
            std::max<std::int64_t>(st.total_upload - st.total_payload_upload, 0)))),
        summary.stalls, summary.fidelity ? std::to_string(*summary.fidelity) : "n/a");
    life_ = Life::finished;
    tick_timer_.cancel();
    fallback_->stop();
    if (on_finished_) on_finished_();
}

}  // namespace toast::client
