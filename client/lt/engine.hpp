// `toast-client stream|play`: one title on its own session, run on the calling thread until the behaviour
// says to leave, stop() is called, or SIGINT/SIGTERM arrives. Built from the parts a multi-title service
// shares: a StreamSession (the libtorrent session and its alert pump) and a TitleStream (the title's
// controller and adapters), both on one asio io_context.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/core/client_options.hpp"
#include "client/core/client_tuning.hpp"
#include "client/lt/server_access.hpp"
#include "client/lt/session_factory.hpp"
#include "client/lt/title_stream.hpp"
#include "client/lt/torrent_file.hpp"

namespace toast::client {

using EngineResult = TitleResult;

// The session's choker for a --choker option.
ChokerKind choker_kind_of(ChokerOption c);

// The box's token (--token or --token-file) and TLS context (--ca-file, else the system's CAs). Throws
// std::runtime_error naming the file that cannot be read.
ServerAccess server_access_for(const ClientOptions& options);
// Where QoE reports go: --telemetry, else the first server's /telemetry; none with --telemetry off or
// without a server. Throws std::runtime_error for a --telemetry that is not a URL.
std::optional<ServerUrl> telemetry_endpoint(const ClientOptions& options,
                                            const std::vector<ServerUrl>& servers);

class Engine {
  public:
    // Throws std::runtime_error with a clear message when the set-up is impossible (no bitrate, bad buffer
    // limit, unusable server URL, stats file not writable, player endpoint address taken).
    Engine(ClientOptions options, TitleTorrent torrent, ClientTuning tuning = {});
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Runs until the title stops (SIGINT/SIGTERM stop it when `handle_signals`); the summary line is the
    // stats file's last line in every case. A port that cannot be listened on stops it with an error.
    EngineResult run(bool handle_signals = true);
    // Thread-safe.
    void stop();

    // play: the local URL a player reads the title from (empty for stream). Valid after construction.
    std::string player_url() const;
    // play: where playback resumes (the saved position; zero for a new title), in media time.
    std::chrono::milliseconds resume_time() const;
    // play: polled every tick; once it returns false (the player exited) the client leaves.
    void watch_player(std::function<bool()> running);
    // play: the player is mpv serving its JSON IPC at `socket`; its own position drives the playhead.
    void follow_mpv(const std::filesystem::path& socket);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toast::client
