#include "client/lt/engine.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <libtorrent/alert_types.hpp>
#include <libtorrent/hasher.hpp>
#include <libtorrent/peer_info.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/torrent_flags.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/core/buffer_planner.hpp"
#include "client/core/fallback_planner.hpp"
#include "client/core/fidelity.hpp"
#include "client/core/give_up_horizon.hpp"
#include "client/core/mp4_layout.hpp"
#include "client/core/peer_admission.hpp"
#include "client/core/piece_policy.hpp"
#include "client/core/resume_point.hpp"
#include "client/core/status_line.hpp"
#include "client/core/stream_watcher.hpp"
#include "client/core/title_geometry.hpp"
#include "client/http/player_endpoint.hpp"
#include "client/http/player_request.hpp"
#include "client/lt/ejecting_disk_io.hpp"
#include "client/lt/http_fetcher.hpp"
#include "client/lt/lt_events.hpp"
#include "client/lt/plan_applier.hpp"
#include "client/lt/session_factory.hpp"
#include "client/lt/swarm_control.hpp"

namespace asio = boost::asio;
namespace lt = libtorrent;
using Clock = std::chrono::steady_clock;

namespace toast::client {

namespace {

constexpr int kEmptyAnnounceRetries = 5;  // quick re-announces while the tracker names no peer
constexpr int kSaturatedQueue = 4;        // outstanding block requests to a peer for its rate to count

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

std::vector<ServerUrl> server_urls(const TitleTorrent& t, const ClientOptions& o) {
    std::vector<ServerUrl> out;
    for (const auto& text :
         title_urls(t.url_list, o.servers, t.params.ti->files().file_name(lt::file_index_t(0)).to_string())) {
        auto u = parse_http_url(text);
        if (!u) throw std::runtime_error("server URL '" + text + "' is not an http:// URL");
        out.push_back(*u);
    }
    return out;
}

std::string title_file_name(const TitleTorrent& t) {
    return t.params.ti->files().file_name(lt::file_index_t(0)).to_string();
}

// play: where this title was left, from the save directory; 0 for a new title or an unusable file.
ByteOffset load_resume(const ClientOptions& o, const TitleGeometry& g, const std::string& file_name) {
    if (o.command != ClientCommand::play) return ByteOffset(0);
    auto path = o.save_dir / resume_point_file_name(file_name);
    std::ifstream in(path);
    if (!in) return ByteOffset(0);
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    auto p = parse_resume_point(text.str(), g.total_size(), &error);
    if (!p) {
        spdlog::warn("ignoring the saved position in {}: {}", path.string(), error);
        return ByteOffset(0);
    }
    return p->offset;
}

// Wakes the engine's loop as soon as libtorrent has alerts (a player may be waiting for a piece), instead of
// at the next tick. set_alert_notify calls it on libtorrent's threads; detach() before the loop goes away.
class AlertNotifier {
  public:
    AlertNotifier(asio::io_context& io, std::function<void()> on_alerts)
        : io_(&io), on_alerts_(std::move(on_alerts)) {}
    void notify() {
        std::lock_guard lock(mutex_);
        if (io_) asio::post(*io_, on_alerts_);
    }
    void detach() {
        std::lock_guard lock(mutex_);
        io_ = nullptr;
    }

  private:
    std::mutex mutex_;
    asio::io_context* io_;
    std::function<void()> on_alerts_;
};

}  // namespace

// The frontier viewer fetches ahead of need: pieces in the next 8 s of video that no viewer has. Those pieces
// come from the server anyway (only the seed has them, shared by every viewer at a capped rate), and fetched
// early they let the viewers just behind take them from this one instead of from the server.
FallbackConfig fallback_config(const TitleGeometry& g) {
    FallbackConfig c;
    c.ahead_window = std::chrono::seconds(8);
    c.max_ahead = std::max<std::size_t>(2, static_cast<std::size_t>(g.pieces_in(c.ahead_window).value()));
    return c;
}

class Engine::Impl {
  public:
    Impl(ClientOptions options, TitleTorrent torrent, EngineTuning tuning)
        : options_(std::move(options)),
          tuning_(tuning),
          torrent_(std::move(torrent)),
          geometry_(make_geometry(torrent_, options_.bitrate)),
          n_(geometry_.piece_count().value()),
          started_(Clock::now()),
          watcher_(geometry_, watcher_config(), started_),
          horizon_(geometry_),
          fallback_(fallback_config(geometry_)),
          policy_(make_policy(options_.picker, PolicyConfig{options_.seed})),
          applier_(n_),
          had_(geometry_.piece_count()),
          stored_(geometry_.piece_count()),
          tick_timer_(io_),
          signals_(io_) {
        if (options_.buffer_limit) {
            limit_ = options_.buffer_limit->resolve(geometry_.total_size());
            if (auto problem = check_buffer_limit(*limit_, geometry_)) {
                throw std::runtime_error("--buffer-limit " + options_.buffer_limit->to_string() + ": " +
                                         *problem);
            }
        }
        auto urls = server_urls(torrent_, options_);
        FetcherConfig fc;
        fetcher_ = std::make_unique<HttpFetcher>(io_, std::move(urls), fc,
                                                 [this](int piece, std::vector<char> data, std::size_t) {
                                                     on_server_piece(piece, std::move(data));
                                                 });

        std::filesystem::create_directories(options_.save_dir);
        stats_out_.open(options_.stats_file, std::ios::trunc);
        if (!stats_out_)
            throw std::runtime_error("cannot write the stats file " + options_.stats_file.string());

        SessionConfig sc;
        sc.interface = options_.listen_host.empty() ? tuning_.interface : options_.listen_host;
        sc.listen_port = options_.listen_port;
        sc.upload_limit = options_.upload_limit;
        sc.download_limit = options_.download_limit;
        sc.choker = options_.choker == ChokerOption::seed ? ChokerKind::seed : ChokerKind::tit_for_tat;
        sc.enable_dht = options_.enable_dht;
        sc.unchoke_slots = options_.unchoke_slots;
        registry_ = std::make_shared<EjectionRegistry>();
        registry_->bind(torrent_.params.ti->info_hashes().v1);
        control_ = std::make_shared<SwarmControl>(SwarmControl::Config{sc.choker, sc.unchoke_slots, 3});
        auto params = make_session_params(sc);
        params.settings.set_int(lt::settings_pack::stop_tracker_timeout, 1);
        params.disk_io_constructor = make_ejecting_disk_io(registry_);
        session_ = make_session(std::move(params), control_);

        lt::add_torrent_params atp = torrent_.params;
        atp.save_path = options_.save_dir.string();
        for (const auto& t : options_.trackers)
            atp.trackers.push_back(t);
        prepare_add_torrent_params(atp);
        // The first plan goes in with the torrent: otherwise libtorrent picks in its own order until the
        // first tick, and on a fast swarm that can be the whole title.
        auto first = policy_->plan(initial_snapshot());
        for (auto prio : first.priority)
            atp.piece_priorities.push_back(lt::download_priority_t(prio));
        applier_.assume_applied(first.priority);
        fidelity_ = std::make_unique<FidelityMeter>();
        fidelity_->on_plan(first.wanted);
        lt::error_code ec;
        handle_ = session_->add_torrent(std::move(atp), ec);
        if (ec) throw std::runtime_error("libtorrent refused the torrent: " + ec.message());
        piece_control_ = std::make_unique<LtPieceControl>(handle_);
        if (options_.command == ClientCommand::play) start_playback();
    }

    ~Impl() { shutdown(); }

    EngineResult run(bool handle_signals) {
        if (handle_signals) {
            signals_.add(SIGINT);
            signals_.add(SIGTERM);
            signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
                if (ec) return;
                spdlog::info("signal {}: stopping", sig);
                finish();
            });
        }
        spdlog::info("streaming '{}': {} pieces of {} at {}, {} server URL(s), picker {}, behaviour {}",
                     torrent_.title, n_, format_bytes(geometry_.piece_length()),
                     format_bitrate(geometry_.bitrate()), fetcher_->urls().size(), to_string(options_.picker),
                     to_string(options_.behavior));
        schedule_tick(true);
        io_.run();
        return result_;
    }

    void stop() {
        asio::post(io_, [this] { finish(); });
    }

    std::string player_url() const { return endpoint_ ? endpoint_->url() : std::string(); }
    std::chrono::milliseconds resume_time() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(geometry_.media_time_at(resume_));
    }
    void watch_player(std::function<bool()> running) { player_running_ = std::move(running); }

  private:
    StreamWatcherConfig watcher_config() const {
        StreamWatcherConfig c;
        c.startup_buffer = options_.startup_buffer;
        if (options_.command == ClientCommand::play) {
            c.mode = WatcherMode::player;
            c.start_offset = load_resume(options_, geometry_, title_file_name(torrent_));
            // A jump of more than about two seconds of media is a seek (at least four pieces, at most 4 MiB).
            auto two_seconds = bytes_in(geometry_.bitrate(), std::chrono::seconds(2));
            auto four_pieces = Bytes(geometry_.piece_length().value() * 4);
            c.seek_threshold = std::min(std::max(two_seconds, four_pieces), Bytes(4 << 20));
        }
        return c;
    }

    // --- play (issue 5) ---

    // The title as the player endpoint sees it. Present means had and still stored (an ejected piece is
    // gone); the bytes come from the file libtorrent writes (a verified piece is in it, in the page cache).
    class Media : public MediaSource {
      public:
        explicit Media(Impl& e) : e_(e), on_disk_(e.geometry_.piece_count()), recheck_(e.io_) {}
        ~Media() override {
            if (fd_ >= 0) ::close(fd_);
        }
        Bytes size() const override { return e_.geometry_.total_size(); }
        std::string content_type() const override { return content_type_for(e_.file_name_); }
        Bytes available(ByteOffset offset, Bytes max) const override {
            const auto& g = e_.geometry_;
            if (offset >= g.end()) return Bytes(0);
            auto end = std::min(offset + max, g.end());
            auto at = offset;
            while (at < end) {
                auto p = g.piece_at(at);
                if (!e_.stored_.has(p) || !on_disk(p)) break;
                at = g.piece_end(p);
            }
            return std::min(at, end) - offset;
        }
        bool read(ByteOffset offset, std::span<char> out, std::string& error) override {
            if (fd_ < 0) fd_ = ::open(e_.media_path_.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd_ < 0) {
                error = "cannot open " + e_.media_path_.string() + ": " + std::strerror(errno);
                return false;
            }
            std::size_t done = 0;
            while (done < out.size()) {
                auto n = ::pread(fd_, out.data() + done, out.size() - done,
                                 static_cast<off_t>(offset.value() + done));
                if (n <= 0) {
                    error = "cannot read " + e_.media_path_.string() + ": " +
                            (n == 0 ? std::string("short file") : std::string(std::strerror(errno)));
                    return false;
                }
                done += static_cast<std::size_t>(n);
            }
            return true;
        }
        // A piece leaves local storage: its bytes must be checked again if it ever comes back.
        void forget(PieceIndex p) { on_disk_.clear(p); }

        // libtorrent reports a piece finished once its hash passed, which can be before its bytes reach the
        // file (hashing and writing run on different threads, the bytes wait in a store buffer). A piece is
        // served only once the file holds bytes with the piece's hash; until then a re-check is scheduled.
        bool on_disk(PieceIndex p) const {
            if (on_disk_.has(p)) return true;
            auto& self = const_cast<Media&>(*this);
            std::vector<char> bytes(e_.geometry_.piece_size(p).value());
            std::string error;
            if (self.read(e_.geometry_.piece_start(p), bytes, error)) {
                lt::hasher h(bytes.data(), static_cast<int>(bytes.size()));
                if (h.final() == e_.torrent_.params.ti->hash_for_piece(lt::piece_index_t(p.value()))) {
                    self.on_disk_.set(p);
                    return true;
                }
            }
            spdlog::debug("piece {} is not in the file yet; checking again shortly", p.value());
            self.schedule_recheck();
            return false;
        }
        ReadKind on_player_read(ByteOffset offset, Bytes length, bool continuation) override {
            auto kind = e_.watcher_.on_player_read(offset, length, Clock::now(), continuation);
            if (kind == ReadKind::seek) {
                spdlog::info("player seek to byte {} (piece {})", offset.value(),
                             e_.geometry_.piece_at(offset).value());
            }
            // A read that waits, or a seek, needs a plan now rather than at the next tick.
            if (kind == ReadKind::seek || available(offset, Bytes(1)).value() == 0) e_.kick();
            return kind;
        }

      private:
        void schedule_recheck() {
            if (recheck_pending_) return;
            recheck_pending_ = true;
            recheck_.expires_after(std::chrono::milliseconds(5));
            recheck_.async_wait([this](const boost::system::error_code& ec) {
                recheck_pending_ = false;
                if (ec || e_.finished_) return;
                if (e_.head_pending_) e_.try_inspect_head();
                e_.endpoint_->on_data_arrived();
            });
        }

        Impl& e_;
        int fd_ = -1;
        PieceSet on_disk_;
        asio::steady_timer recheck_;
        bool recheck_pending_ = false;
    };

    void start_playback() {
        const auto& files = torrent_.params.ti->files();
        if (files.num_files() != 1) {
            throw std::runtime_error("play needs a title of one file; this torrent has " +
                                     std::to_string(files.num_files()));
        }
        file_name_ = title_file_name(torrent_);
        media_path_ = options_.save_dir / files.file_path(lt::file_index_t(0));
        resume_ = watcher_.playhead();
        auto type = content_type_for(file_name_);
        if (type == "video/mp4" || type == "video/quicktime") {
            // Until the head says where the index is, the last piece is the best guess: fetch both first.
            head_pending_ = true;
            tail_urgent_ = {PieceIndex(0), geometry_.last_piece()};
        } else {
            set_tail_probe_range();
        }
        media_ = std::make_unique<Media>(*this);
        PlayerEndpointConfig pc;
        pc.listen = options_.http;
        pc.file_name = file_name_;
        pc.wait_timeout = tuning_.player_wait_timeout;
        endpoint_ = std::make_unique<PlayerEndpoint>(io_, *media_, pc);
        endpoint_->start();
        notifier_ = std::make_shared<AlertNotifier>(io_, [this] {
            if (!finished_) drain_alerts(Clock::now());
        });
        session_->set_alert_notify([n = notifier_] { n->notify(); });
        status_line_ = ::isatty(STDOUT_FILENO) == 1;
        spdlog::info(
            "playing '{}' at {}{}", file_name_, endpoint_->url(),
            resume_.value() > 0 ? " from the saved position, byte " + std::to_string(resume_.value()) : "");
    }

    // Players read the last bytes of an MPEG-TS (or any container without an index) for its duration
    // before they play (ffmpeg: the last 250 kB); those reads are not the viewer's position.
    void set_tail_probe_range() {
        auto tail = std::min<std::uint64_t>(geometry_.total_size().value() / 4, 320 * 1024);
        watcher_.set_index_range(ByteOffset(geometry_.total_size().value() - tail), geometry_.end());
    }

    // The first piece is in the file: an MP4 whose index follows its media data has that tail fetched first.
    void try_inspect_head() {
        if (!head_pending_ || !stored_.has(PieceIndex(0)) || !media_->on_disk(PieceIndex(0))) return;
        head_pending_ = false;
        tail_urgent_.clear();
        std::vector<char> head(std::min<std::uint64_t>(geometry_.piece_size(PieceIndex(0)).value(), 1 << 20));
        std::string error;
        if (!media_->read(ByteOffset(0), head, error)) {
            spdlog::warn("cannot read the title's first bytes to find its MP4 index: {}", error);
            return;
        }
        auto layout = inspect_mp4_head(
            std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(head.data()), head.size()),
            geometry_.total_size());
        if (layout.placement != Mp4IndexPlacement::index_at_end) {
            spdlog::info("MP4 index placement: {}", to_string(layout.placement));
            return;
        }
        watcher_.set_index_range(layout.index_begin, layout.index_end);
        auto first = geometry_.piece_at(layout.index_begin);
        for (auto p = first; p <= geometry_.last_piece(); ++p)
            tail_urgent_.push_back(p);
        spdlog::info("MP4 index at the end (bytes {}-{}): pieces {}-{} fetched first",
                     layout.index_begin.value(), layout.index_end.value() - 1, first.value(),
                     geometry_.last_piece().value());
    }

    // Pieces the server fallback fetches at once: those a player read waits for, and the MP4 index.
    std::vector<PieceIndex> urgent_pieces() const {
        auto out = watcher_.blocked_reads();
        for (auto p : tail_urgent_)
            if (!had_.has(p)) out.push_back(p);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    void kick() {
        if (kick_pending_ || finished_) return;
        kick_pending_ = true;
        asio::post(io_, [this] {
            kick_pending_ = false;
            if (!finished_) tick();
        });
    }

    void save_position() {
        auto path = options_.save_dir / resume_point_file_name(file_name_);
        auto tmp = path;
        tmp += ".tmp";
        {
            std::ofstream out(tmp, std::ios::trunc);
            out << format_resume_point({geometry_.total_size(), watcher_.playhead()});
            if (!out) {
                spdlog::warn("cannot save the playback position to {}", tmp.string());
                return;
            }
        }
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        if (ec) spdlog::warn("cannot save the playback position to {}: {}", path.string(), ec.message());
    }

    void print_status(const StatsRecord& r) {
        StatusFigures f;
        f.state = watcher_.state();
        f.position = geometry_.media_time_at(watcher_.playhead());
        f.duration = geometry_.title_duration();
        f.buffer_ahead = watcher_.buffer_ahead();
        f.bytes_from_peers = r.bytes_from_peers;
        f.bytes_from_server = r.bytes_from_server;
        f.stalls = r.stalls;
        f.stall_time = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(r.stall_seconds));
        f.peers = r.peers;
        if (r.first_byte_ms) f.first_byte = std::chrono::milliseconds(*r.first_byte_ms);
        std::fputs(refresh_in_place(format_status_line(f)).c_str(), stdout);
        std::fflush(stdout);
    }

    // Before any peer is known: playhead at the start, one peer assumed at the title's bitrate.
    SwarmSnapshot initial_snapshot() {
        SwarmSnapshot snap = SwarmSnapshot::empty(geometry_.piece_count());
        horizon_.set_peer_count(1);
        snap.horizon =
            fetcher_->urls().empty() ? PieceCount(0) : horizon_.pieces(std::chrono::nanoseconds(0));
        snap.inorder_window = geometry_.pieces_in(options_.inorder_window);
        snap.want_past_pieces = options_.behavior != Behavior::stream && !limit_;
        snap.piece_duration =
            std::chrono::duration_cast<std::chrono::milliseconds>(geometry_.piece_duration());
        if (limit_) {
            auto plan = plan_buffer({geometry_, stored_, PieceIndex(0), *limit_, Bytes(0)});
            snap.request_end = plan.request_end;
        }
        return snap;
    }

    void schedule_tick(bool first = false) {
        tick_timer_.expires_after(first ? std::chrono::milliseconds(0) : tuning_.tick);
        tick_timer_.async_wait([this](const boost::system::error_code& ec) {
            if (ec || finished_) return;
            tick();
            if (!finished_) schedule_tick();
        });
    }

    void tick() {
        auto now = Clock::now();
        drain_alerts(now);
        if (finished_) return;
        if (!ready_) {
            auto st = handle_.status({});
            if (st.state == lt::torrent_status::checking_files ||
                st.state == lt::torrent_status::checking_resume_data)
                return;
            ready_ = true;
            // Pieces already on disk (a seed, or a resumed download).
            auto full = handle_.status(lt::torrent_handle::query_pieces);
            for (int p = 0; p < n_; ++p) {
                if (full.pieces.get_bit(lt::piece_index_t(p))) mark_had(p, now, false);
            }
        }
        watcher_.tick(now);
        if (reannounce_at_ && now >= *reannounce_at_) {
            reannounce_at_.reset();
            if (bt_peers_ == 0) handle_.force_reannounce(0, -1, lt::torrent_handle::ignore_min_interval);
        }
        auto status = handle_.status({});
        last_status_ = status;

        // Swarm view.
        std::vector<int> availability;
        handle_.piece_availability(availability);
        availability.resize(static_cast<std::size_t>(n_), 0);
        std::vector<lt::partial_piece_info> queue;
        handle_.get_download_queue(queue);
        PieceSet in_flight(geometry_.piece_count());
        Bytes incoming{0};
        // Bytes peers still owe per in-progress piece: the fallback leaves a piece they will finish in time.
        std::vector<std::int64_t> peer_remaining(static_cast<std::size_t>(n_), -1);
        for (const auto& q : queue) {
            auto piece = PieceIndex(static_cast<int>(q.piece_index));
            in_flight.set(piece);
            incoming += geometry_.piece_size(piece);
            if (piece.value() < 0 || piece.value() >= n_ || q.blocks_in_piece <= 0) continue;
            auto size = static_cast<double>(geometry_.piece_size(piece).value());
            double done = static_cast<double>(q.finished + q.writing) / q.blocks_in_piece;
            peer_remaining[static_cast<std::size_t>(piece.value())] =
                static_cast<std::int64_t>(size * (1.0 - std::min(done, 1.0)));
        }
        std::vector<lt::peer_info> peers;
        handle_.get_peer_info(peers);
        int bt_peers = 0;
        bool saturated = false;
        double swarm_rate = 0;
        bool sample_rates = now - last_rate_sample_ >= std::chrono::seconds(1);
        int seeds = 0;
        for (const auto& p : peers) {
            if (p.connection_type != lt::peer_info::standard_bittorrent) continue;
            ++bt_peers;
            if (p.flags & lt::peer_info::seed) ++seeds;
            swarm_rate += p.payload_down_speed;
            // Only a peer with a full request pipeline shows what it can deliver; otherwise the rate is our
            // own demand, and sampling it would let our give-ups starve the estimate.
            if (p.download_queue_length >= kSaturatedQueue) saturated = true;
        }
        if (sample_rates) {
            // The rate a missing piece arrives at is what all our peers deliver together: libtorrent gives a
            // deadline piece's blocks to several peers at once. Taking one rate-limited peer's share (a seed
            // shared by every viewer) made the horizon grow to the whole title.
            if (saturated && swarm_rate > 0) horizon_.on_peer_rate(swarm_rate);
            last_rate_sample_ = now;
        }
        // Peers the tracker named but we are still connecting to count as peers, and until the first tracker
        // answer (at most discovery_grace) one peer is assumed: the policy keeps asking for pieces beyond the
        // horizon. With none at all the horizon is 0 and the server fetches just in time.
        int known = std::max(bt_peers, status.list_peers);
        bool discovering =
            !tracker_answered_ && !handle_.trackers().empty() && now - started_ < tuning_.discovery_grace;
        horizon_.set_peer_count(std::max(known, discovering ? 1 : 0));

        // A server that cannot be reached cannot take the pieces near the playhead: peers may have them.
        bool server_up = false;
        for (std::size_t s = 0; s < fetcher_->servers().size(); ++s) {
            if (fetcher_->servers().consecutive_failures(s) == 0) server_up = true;
        }

        // Bounded buffer.
        std::optional<PieceIndex> request_end;
        bool suspend = false;
        if (limit_) {
            for (const auto& p : pending_server_)
                incoming += geometry_.piece_size(PieceIndex(p.first));
            for (auto p : fallback_.in_flight_pieces())
                incoming += geometry_.piece_size(p);
            auto plan = plan_buffer({geometry_, stored_, watcher_.playhead_piece(), *limit_, incoming});
            for (auto p : plan.eject)
                eject(p.value(), now);
            suspend = plan.suspend;
            request_end = plan.request_end;
            if (suspend != suspended_) {
                if (suspend) {
                    handle_.set_flags(lt::torrent_flags::upload_mode);
                } else {
                    handle_.unset_flags(lt::torrent_flags::upload_mode);
                }
                spdlog::info("buffer {}: {} stored of {}",
                             suspend ? "full, downloading suspended" : "has room again",
                             format_bytes(stored_bytes()), format_bytes(*limit_));
                suspended_ = suspend;
            }
        }

        // Server fallback. "No viewer has it": seeds have every piece, so they are taken out of the count.
        std::vector<int> viewer_availability = availability;
        for (auto& a : viewer_availability)
            a = std::max(0, a - seeds);
        FallbackInput fin{
            had_, watcher_.playhead_piece(), geometry_.piece_duration(), watcher_.into_playhead_piece(),
            horizon_.horizon_time(), urgent_pieces(),
            // "No peer has it" means nothing until peers had time to send their bitfields,
            // nor while no peer is connected: every piece would qualify.
            now - started_ >= tuning_.discovery_grace && bt_peers > 0 ? &viewer_availability : nullptr,
            request_end, suspend, &peer_remaining,
            // What peers delivered in the last second, not the horizon's smoothed estimate.
            swarm_rate};
        // Without any server URL the client is plain BitTorrent: nothing is given up.
        if (!fetcher_->urls().empty()) {
            for (const auto& f : fallback_.plan(fin, now)) {
                if (f.reason == FetchReason::urgent) ++urgent_fetches_;
                start_fetch(f.piece.value());
            }
        }

        // Peer policy.
        SwarmSnapshot snap;
        snap.piece_count = geometry_.piece_count();
        snap.had = had_;
        snap.in_flight = in_flight;
        snap.server_fetching = PieceSet(geometry_.piece_count());
        if (server_up) {
            for (auto p : fallback_.in_flight_pieces())
                snap.server_fetching.set(p);
        }
        snap.availability = availability;
        snap.playhead = watcher_.playhead_piece();
        // Peers are not asked for what the server fallback will fetch before they could finish it: the
        // give-up zone is the fallback's whole need window plus one peer delivery time. A piece requested
        // from peers just outside the bare horizon was fetched by the server too, and the peers' blocks of it
        // wasted about a fifth of the swarm's upload (12 viewers: 41% -> 49% reduction; the extra delivery
        // time cut the remaining overlap by a sixth more).
        const auto give_up_zone =
            fallback_.need_window(horizon_.horizon_time()) + horizon_.peer_delivery_time();
        snap.horizon =
            server_up ? horizon_.pieces_within(give_up_zone, watcher_.into_playhead_piece()) : PieceCount(0);
        snap.inorder_window = geometry_.pieces_in(options_.inorder_window);
        snap.request_end = request_end;
        snap.want_past_pieces = options_.behavior != Behavior::stream && !limit_;
        snap.piece_duration =
            std::chrono::duration_cast<std::chrono::milliseconds>(geometry_.piece_duration());
        snap.into_playhead_piece =
            std::chrono::duration_cast<std::chrono::milliseconds>(watcher_.into_playhead_piece());
        bt_peers_ = bt_peers;
        // The pieces kept in order now: [playhead, playhead + window) for hybrid, the rest for inorder.
        window_.reset();
        if (options_.picker == PickerKind::inorder || options_.picker == PickerKind::hybrid) {
            auto last = options_.picker == PickerKind::inorder
                            ? n_ - 1
                            : std::min(snap.playhead.value() + snap.inorder_window.value(), n_) - 1;
            if (snap.playhead.value() <= last) window_ = std::pair{snap.playhead.value(), last};
        }
        auto plan = policy_->plan(snap);
        // Nothing is asked of peers that they cannot deliver before the server would take it anyway.
        if (server_up && !fetcher_->urls().empty() && bt_peers > 0) {
            admission_dropped_ +=
                drop_undeliverable(plan, snap, give_up_zone, horizon_.peer_delivery_time()).dropped;
        }
        fidelity_->on_plan(plan.wanted);
        if (!suspend) {
            auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - started_).count();
            applier_.apply(plan, had_, now_ms, *piece_control_);
        }

        max_buffer_ = std::max(max_buffer_, stored_bytes().value());
        if (now - last_stats_ >= tuning_.stats_interval) {
            last_stats_ = now;
            spdlog::debug(
                "playhead piece {} ({}), {} had, {} peers ({} known), peer rate {:.0f} B/s, horizon {} "
                "pieces, "
                "{} wanted, {} server fetches in flight",
                watcher_.playhead_piece().value(), to_string(watcher_.state()), had_.count().value(),
                bt_peers, status.list_peers, horizon_.peer_rate(), snap.horizon.value(), plan.wanted.size(),
                fallback_.in_flight_pieces().size());
            auto record = make_record("stats", now);
            write_record(record);
            if (endpoint_) {
                save_position();
                if (status_line_) print_status(record);
            }
        }
        if (player_running_ && !player_running_()) {
            spdlog::info("the player exited");
            finish();
            return;
        }
        if (should_leave()) finish();
    }

    bool should_leave() const {
        if (player_running_) return false;  // play with a player: leave when it exits
        switch (options_.behavior) {
            case Behavior::download:
                return had_.all();
            case Behavior::stream:
                return watcher_.reached_end();
            case Behavior::seed:
                return false;
        }
        return false;
    }

    void drain_alerts(Clock::time_point now) {
        std::vector<lt::alert*> alerts;
        session_->pop_alerts(&alerts);
        events_.clear();
        translate_alerts(alerts, events_);
        for (const auto& e : events_) {
            switch (e.kind) {
                case LtEventKind::piece_finished:
                    on_piece_finished(e.piece, now);
                    break;
                case LtEventKind::hash_failed:
                    on_hash_failed(e.piece, now);
                    break;
                case LtEventKind::torrent_error:
                    spdlog::error("torrent error: {}", e.message);
                    result_.exit_code = 1;
                    result_.error = "torrent error: " + e.message;
                    finish();
                    return;
                case LtEventKind::listen_failed:
                    spdlog::error("cannot listen on port {}: {}", e.port, e.message);
                    result_.exit_code = 1;
                    result_.error = "cannot listen on port " + std::to_string(e.port) + ": " + e.message;
                    finish();
                    return;
                case LtEventKind::tracker_error:
                    spdlog::warn("tracker: {}", e.message);
                    break;
                case LtEventKind::tracker_reply:
                    tracker_answered_ = true;
                    // A swarm member that started just before us (the seed is still checking its files, a
                    // viewer is still announcing) is missing from the answer, and the tracker's interval is
                    // long: until someone is found, ask again soon, a bounded number of times. Meanwhile
                    // every piece would come from the server.
                    if (e.message.rfind("0 ", 0) == 0 && bt_peers_ == 0 &&
                        empty_announces_ < kEmptyAnnounceRetries) {
                        ++empty_announces_;
                        reannounce_at_ = now + std::chrono::seconds(1);
                    }
                    break;
                case LtEventKind::peer_connected:
                    spdlog::debug("peer {} connected", e.peer);
                    break;
                case LtEventKind::peer_disconnected:
                    spdlog::debug("peer {} disconnected: {}", e.peer, e.message);
                    break;
                case LtEventKind::file_error:
                    spdlog::debug("disk: {}", e.message);
                    break;
                default:
                    break;
            }
        }
    }

    void mark_had(int piece, Clock::time_point now, bool count_arrival) {
        if (piece < 0 || piece >= n_ || had_.has(PieceIndex(piece))) return;
        had_.set(PieceIndex(piece));
        stored_.set(PieceIndex(piece));
        watcher_.on_piece_had(PieceIndex(piece), now);
        if (endpoint_) {
            if (head_pending_ && piece == 0) try_inspect_head();
            endpoint_->on_data_arrived();
        }
        applier_.on_piece_had(piece);
        if (count_arrival) fidelity_->on_arrival(PieceIndex(piece));
    }

    void on_piece_finished(int piece, Clock::time_point now) {
        auto size = geometry_.piece_size(PieceIndex(piece)).value();
        auto pending = pending_server_.find(piece);
        if (pending != pending_server_.end()) {
            bytes_server_useful_ += size;
            fallback_.on_fetch_succeeded(PieceIndex(piece), now - pending->second);
            pending_server_.erase(pending);
            mark_had(piece, now, false);
            return;
        }
        // A server fetch of it still running is now wasted work.
        if (fallback_.in_flight(PieceIndex(piece))) {
            fallback_.on_fetch_abandoned(PieceIndex(piece));
            fetcher_->cancel_queued(piece);
        }
        mark_had(piece, now, true);
    }

    void on_hash_failed(int piece, Clock::time_point now) {
        auto pending = pending_server_.find(piece);
        if (pending == pending_server_.end()) return;  // a peer's bad data: libtorrent handles it
        ++hash_failures_;
        bytes_server_wasted_ += geometry_.piece_size(PieceIndex(piece)).value();
        pending_server_.erase(pending);
        spdlog::warn("server piece {} failed the hash check; fetching it again", piece);
        fallback_.on_fetch_failed(PieceIndex(piece), now);
    }

    void start_fetch(int piece) {
        PieceIndex p(piece);
        PieceRequest r{piece, geometry_.piece_start(p).value(),
                       static_cast<std::uint32_t>(geometry_.piece_size(p).value())};
        if (fetcher_->fetch(r)) fetch_started_[piece] = Clock::now();
    }

    void on_server_piece(int piece, std::vector<char> data) {
        if (finished_) return;
        auto now = Clock::now();
        if (had_.has(PieceIndex(piece))) {
            // A peer delivered it while the request was running.
            bytes_server_wasted_ += data.size();
            fetch_started_.erase(piece);
            if (fallback_.in_flight(PieceIndex(piece))) fallback_.on_fetch_abandoned(PieceIndex(piece));
            return;
        }
        auto started = fetch_started_.find(piece);
        pending_server_[piece] = started != fetch_started_.end() ? started->second : now;
        fetch_started_.erase(piece);
        control_->expect_server_piece(piece);
        handle_.add_piece(lt::piece_index_t(piece), std::move(data));
    }

    void eject(int piece, Clock::time_point now) {
        if (!stored_.has(PieceIndex(piece))) return;
        registry_->eject(piece);
        control_->announce_dont_have(piece);
        stored_.clear(PieceIndex(piece));
        if (media_) media_->forget(PieceIndex(piece));
        watcher_.on_piece_lost(PieceIndex(piece), now);
        ++ejected_;
    }

    Bytes stored_bytes() const {
        Bytes total{0};
        for (auto p : stored_.pieces())
            total += geometry_.piece_size(p);
        return total;
    }

    StatsRecord make_record(const std::string& event, Clock::time_point now) {
        StatsRecord r;
        r.event = event;
        r.t_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - started_).count();
        r.bytes_from_peers = static_cast<std::uint64_t>(last_status_.total_payload_download);
        r.bytes_server_useful = bytes_server_useful_;
        r.bytes_server_wasted = bytes_server_wasted_ + fetcher_->stats().bytes_rejected;
        r.bytes_from_server = r.bytes_server_useful + r.bytes_server_wasted;
        r.bytes_uploaded = static_cast<std::uint64_t>(last_status_.total_payload_upload);
        r.bytes_redundant = static_cast<std::uint64_t>(last_status_.total_redundant_bytes);
        fill_playback(r, watcher_, now);
        r.pieces_had = static_cast<std::uint32_t>(had_.count().value());
        r.buffer_bytes = stored_bytes().value();
        r.pieces_fetched_ahead = fallback_.fetched_ahead();
        r.fidelity = fidelity_->fidelity();
        r.completed = r.completed || had_.all();
        r.peers = static_cast<std::uint32_t>(bt_peers_);
        r.urgent_fetches = urgent_fetches_;
        r.inorder_window = window_;
        if (endpoint_) {
            r.player_url = endpoint_->url();
            const auto& es = endpoint_->stats();
            if (es.first_byte) r.first_byte_ms = es.first_byte->count();
            for (auto d : es.seek_latencies)
                r.seek_ms.push_back(d.count());
        }
        return r;
    }

    void write_record(const StatsRecord& r) {
        stats_out_ << to_json_line(r);
        stats_out_.flush();
    }

    void finish() {
        if (finished_) return;
        finished_ = true;
        auto now = Clock::now();
        drain_alerts_quietly(now);
        watcher_.tick(now);
        last_status_ = handle_.status({});
        auto summary = make_record("summary", now);
        write_record(summary);
        result_.summary = summary;
        if (endpoint_) {
            save_position();
            if (status_line_) {
                print_status(summary);
                std::fputs("\n", stdout);
            }
            endpoint_->stop();
        }
        result_.cancels_sent = control_->cancels_sent();
        result_.dont_haves_sent = control_->dont_haves_sent();
        result_.reads_refused = registry_->reads_refused();
        result_.pieces_ejected = ejected_;
        result_.http_failures = fetcher_->stats().failures;
        result_.hash_failures = hash_failures_;
        result_.max_buffer_bytes = max_buffer_;
        spdlog::info(
            "summary: {} from peers, {} from server ({} wasted), {} uploaded, {} stalls, fidelity {}",
            format_bytes(Bytes(summary.bytes_from_peers)), format_bytes(Bytes(summary.bytes_from_server)),
            format_bytes(Bytes(summary.bytes_server_wasted)), format_bytes(Bytes(summary.bytes_uploaded)),
            summary.stalls, summary.fidelity ? std::to_string(*summary.fidelity) : "n/a");
        tick_timer_.cancel();
        boost::system::error_code ignored;
        signals_.cancel(ignored);
        fetcher_->stop();
        io_.stop();
    }

    // The last piece alerts before the summary, without reacting to errors again.
    void drain_alerts_quietly(Clock::time_point now) {
        std::vector<lt::alert*> alerts;
        session_->pop_alerts(&alerts);
        events_.clear();
        translate_alerts(alerts, events_);
        for (const auto& e : events_) {
            if (e.kind == LtEventKind::piece_finished) on_piece_finished(e.piece, now);
            if (e.kind == LtEventKind::hash_failed) on_hash_failed(e.piece, now);
        }
    }

    void shutdown() {
        if (notifier_) notifier_->detach();
        if (!session_) return;
        control_->detach();
        fetcher_.reset();
        auto proxy = session_->abort();
        session_.reset();
    }

    ClientOptions options_;
    EngineTuning tuning_;
    TitleTorrent torrent_;
    TitleGeometry geometry_;
    int n_;
    Clock::time_point started_;
    StreamWatcher watcher_;
    GiveUpHorizon horizon_;
    FallbackPlanner fallback_;
    std::uint64_t admission_dropped_ = 0;  // wanted pieces not asked of peers: they could not arrive in time
    std::unique_ptr<PiecePolicy> policy_;
    std::unique_ptr<FidelityMeter> fidelity_;
    PlanApplier applier_;
    PieceSet had_;     // ever had (libtorrent's view)
    PieceSet stored_;  // had and not ejected
    std::optional<Bytes> limit_;
    bool suspended_ = false;
    bool ready_ = false;
    bool finished_ = false;
    bool tracker_answered_ = false;
    int empty_announces_ = 0;
    std::optional<Clock::time_point> reannounce_at_;

    asio::io_context io_;
    asio::steady_timer tick_timer_;
    asio::signal_set signals_;
    std::unique_ptr<HttpFetcher> fetcher_;
    std::ofstream stats_out_;

    std::shared_ptr<EjectionRegistry> registry_;
    std::shared_ptr<SwarmControl> control_;
    std::unique_ptr<lt::session> session_;
    lt::torrent_handle handle_;
    std::unique_ptr<LtPieceControl> piece_control_;
    lt::torrent_status last_status_;
    std::vector<LtEvent> events_;

    std::map<int, Clock::time_point> fetch_started_;   // HTTP request queued or running
    std::map<int, Clock::time_point> pending_server_;  // add_piece called, hash check pending (fetch start)
    std::uint64_t bytes_server_useful_ = 0;
    std::uint64_t bytes_server_wasted_ = 0;
    std::uint64_t hash_failures_ = 0;
    std::uint64_t ejected_ = 0;
    std::uint64_t max_buffer_ = 0;
    Clock::time_point last_stats_ = Clock::now();
    Clock::time_point last_rate_sample_{};
    EngineResult result_;

    // play
    std::string file_name_;
    std::filesystem::path media_path_;
    ByteOffset resume_{0};
    bool head_pending_ = false;            // an MP4 whose first piece has not been inspected yet
    std::vector<PieceIndex> tail_urgent_;  // fetched at once: the head and the MP4 index at the end
    std::uint64_t urgent_fetches_ = 0;
    int bt_peers_ = 0;
    std::optional<std::pair<std::int32_t, std::int32_t>> window_;
    bool kick_pending_ = false;
    bool status_line_ = false;
    std::function<bool()> player_running_;
    std::shared_ptr<AlertNotifier> notifier_;
    std::unique_ptr<Media> media_;  // before endpoint_: the endpoint reads it
    std::unique_ptr<PlayerEndpoint> endpoint_;
};

Engine::Engine(ClientOptions options, TitleTorrent torrent, EngineTuning tuning)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(torrent), tuning)) {}
Engine::~Engine() = default;
EngineResult Engine::run(bool handle_signals) {
    return impl_->run(handle_signals);
}
void Engine::stop() {
    impl_->stop();
}
std::string Engine::player_url() const {
    return impl_->player_url();
}
std::chrono::milliseconds Engine::resume_time() const {
    return impl_->resume_time();
}
void Engine::watch_player(std::function<bool()> running) {
    impl_->watch_player(std::move(running));
}

}  // namespace toast::client
