// One title streamed on a shared StreamSession: its torrent, its StreamController, and the adapters that
// carry the controller's plans out (piece priorities and deadlines, server fetches written with add_piece,
// ejections and upload_mode, re-announces) and its events in (pieces finished or failed, server bytes, the
// tracker's answers, the player's reads). Every tick: sample -> controller -> apply. Once a second a stats
// line; at the end a summary line. Several TitleStreams can share one session and one io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/steady_timer.hpp>
#include <libtorrent/torrent_handle.hpp>

#include "client/core/client_options.hpp"
#include "client/core/client_tuning.hpp"
#include "client/core/qoe_reporter.hpp"
#include "client/core/server_request.hpp"
#include "client/core/stats.hpp"
#include "client/core/stream_controller.hpp"
#include "client/lt/server_access.hpp"
#include "client/lt/stream_session.hpp"
#include "client/lt/torrent_file.hpp"

namespace toast::client {

class LtPieceControl;
class PlanApplier;
class ServerFallback;
class StatsFile;
class SwarmReader;
class TelemetrySender;
class TitlePlayback;

struct TitleResult {
    StatsRecord summary;
    int exit_code = 0;
    std::string error;  // set when exit_code != 0
    // Figures for the report (not part of the stats schema): the controller's counters, and the adapters'.
    StreamCounters counters;
    std::uint64_t cancels_sent = 0;
    std::uint64_t dont_haves_sent = 0;
    std::uint64_t reads_refused = 0;
    std::uint64_t http_failures = 0;
};

class TitleStream final : public TitleEvents {
  public:
    // Adds the torrent to `session` (with the first plan's priorities) and, for play, starts the player
    // endpoint. Throws std::runtime_error with a clear message when the set-up is impossible (no bitrate, bad
    // buffer limit, unusable server URL, stats file not writable, endpoint address taken). `on_finished`
    // runs once, when the title stops (its behaviour is done, stop() was called, or it failed). `launched` is
    // when the client was asked for the title: startup and the stats' times count from it. `access` is how
    // the server fallback reaches the server (its token, TLS).
    TitleStream(StreamSession& session, const ClientOptions& options, TitleTorrent torrent,
                const ClientTuning& tuning, std::function<void()> on_finished,
                SteadyTime launched = std::chrono::steady_clock::now(), ServerAccess access = {});
    ~TitleStream() override;
    TitleStream(const TitleStream&) = delete;
    TitleStream& operator=(const TitleStream&) = delete;

    // Sends the session's QoE reports to `sender` (every options.telemetry_interval and at the end); call
    // before start(). The sender must outlive the title.
    void report_to(TelemetrySender& sender);
    // Starts the ticks (the first one at once).
    void start();
    // Stops now: the summary line is written, fetches and the endpoint close. Idempotent.
    void stop();
    // Stops with an error (exit code 1).
    void fail(const std::string& error);
    bool finished() const { return life_ == Life::finished; }
    const TitleResult& result() const { return result_; }

    // play: the local URL a player reads the title from (empty for stream).
    std::string player_url() const;
    // play: where playback resumes (the saved position; zero for a new title), in media time.
    std::chrono::milliseconds resume_time() const;
    // play: polled every tick; once it returns false (the player exited) the title stops.
    void watch_player(std::function<bool()> running);
    // play: the player is mpv serving its JSON IPC at `socket` (TitlePlayback::follow_mpv).
    void follow_mpv(const std::filesystem::path& socket);

    const StreamController& controller() const { return *controller_; }
    const libtorrent::torrent_handle& handle() const { return handle_; }
    // The server URLs the fallback uses, in order (the torrent's url-list, then --server).
    const std::vector<ServerUrl>& server_urls() const;
    // The pieces that arrived while this title streamed, by source (a piece map shows them).
    const PieceSet& from_peers() const { return from_peers_; }
    const PieceSet& from_server() const { return from_server_; }

    void on_event(const LtEvent& event) override;

  private:
    void schedule_tick(bool first);
    void tick();
    // Where we are, for the position chokers (SwarmControl::set_position).
    SwarmControl::Position choker_position() const;
    void kick();
    void apply(const ControllerPlan& plan, SteadyTime now);
    void on_piece_finished(PieceIndex p, SteadyTime now);
    StatsRecord make_record(const std::string& event, SteadyTime now);
    QoeSample qoe_sample(const StatsRecord& record) const;
    void finish();

    StreamSession& session_;
    ClientOptions options_;
    ClientTuning tuning_;
    TitleTorrent torrent_;
    std::function<void()> on_finished_;
    ByteOffset resume_{0};
    std::unique_ptr<StreamController> controller_;
    std::unique_ptr<ServerFallback> fallback_;
    std::unique_ptr<StatsFile> stats_;
    libtorrent::sha1_hash key_;  // the torrent as the session's plugin and disk wrapper know it
    libtorrent::torrent_handle handle_;
    std::shared_ptr<EjectionRegistry> registry_;
    std::unique_ptr<LtPieceControl> piece_control_;
    std::unique_ptr<PlanApplier> applier_;
    std::unique_ptr<SwarmReader> reader_;
    std::unique_ptr<TitlePlayback> playback_;
    boost::asio::steady_timer tick_timer_;
    SteadyTime started_;
    SteadyTime last_stats_;
    // running -> finishing (the summary is being written: only piece events still count) -> finished.
    enum class Life { running, finishing, finished };
    Life life_ = Life::running;
    bool kick_pending_ = false;
    bool asked_operator_ = false;  // the last ControllerPlan::ask_operator applied
    std::function<bool()> player_running_;
    TitleResult result_;
    PieceSet from_peers_;
    PieceSet from_server_;
    TelemetrySender* telemetry_ = nullptr;
    std::optional<QoeReporter> reporter_;
};

}  // namespace toast::client
