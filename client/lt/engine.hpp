// The streaming client's one loop: every tick it reads libtorrent's state into the core's snapshot, runs the
// StreamWatcher, the give-up horizon, the bounded-buffer planner, the server fallback planner and the piece
// policy, and applies their plans (priorities and deadlines, ejections and upload_mode, HTTP fetches written
// with add_piece). Once a second it writes a stats line; at the end a summary line. Everything runs on one
// asio io_context on the calling thread; libtorrent runs on its own threads and is reached only through
// torrent_handle calls and the SwarmControl plugin.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "client/core/client_options.hpp"
#include "client/core/stats.hpp"
#include "client/lt/torrent_file.hpp"

namespace toast::client {

struct EngineTuning {
    std::chrono::milliseconds tick{200};
    std::chrono::milliseconds stats_interval{1000};
    std::string interface = "127.0.0.1";
    // How long to wait for the tracker's first answer before assuming there are no peers.
    std::chrono::milliseconds discovery_grace{2000};
    // play: how long a player read waits for missing bytes before the endpoint gives up (503).
    std::chrono::milliseconds player_wait_timeout{60'000};
};

struct EngineResult {
    StatsRecord summary;
    int exit_code = 0;
    std::string error;  // set when exit_code != 0
    // Adapter figures for the report (not part of the stats schema).
    std::uint64_t cancels_sent = 0;
    std::uint64_t dont_haves_sent = 0;
    std::uint64_t reads_refused = 0;
    std::uint64_t pieces_ejected = 0;
    std::uint64_t http_failures = 0;
    std::uint64_t hash_failures = 0;
    std::uint64_t max_buffer_bytes = 0;
};

class Engine {
  public:
    // Throws std::runtime_error with a clear message when the set-up is impossible (no bitrate, bad buffer
    // limit, unusable server URL, stats file not writable, listen port taken).
    Engine(ClientOptions options, TitleTorrent torrent, EngineTuning tuning = {});
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Runs until the behaviour says to leave, stop() is called, or SIGINT/SIGTERM arrives (when
    // `handle_signals`); writes the summary line last in every case.
    EngineResult run(bool handle_signals = true);
    // Thread-safe.
    void stop();

    // play: the local URL a player reads the title from (empty for stream). Valid after construction.
    std::string player_url() const;
    // play: where playback resumes (the saved position; zero for a new title), in media time.
    std::chrono::milliseconds resume_time() const;
    // play: polled every tick; once it returns false (the player exited) the client leaves.
    void watch_player(std::function<bool()> running);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toast::client
