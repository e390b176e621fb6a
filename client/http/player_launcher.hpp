// Launching the viewer for `toast-client play --player mpv|vlc|ffplay`: the command line that opens the local
// URL (at the resume position, with the user's --player-arg), a PATH lookup so a missing player is a clear
// error before anything starts, and the child process, which the client watches to leave when the viewer
// closes, and which dies with the client.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/client_options.hpp"

namespace toast::client {

// argv for `kind` playing `url` from `start` (0: from the beginning), with `extra` (--player-arg) after the
// client's own arguments, so a user's choice wins, and before the URL. `ipc_socket` (mpv only, empty for
// none) is where mpv serves its JSON IPC. Empty for PlayerKind::none.
std::vector<std::string> player_command(PlayerKind kind, const std::string& url,
                                        std::chrono::milliseconds start,
                                        const std::vector<std::string>& extra = {},
                                        const std::string& ipc_socket = {});

// What the client says when the player exited on its own with `status` (non-zero): the player's name, the
// status, and the last lines the player wrote (`log_tail`: its log), which say why (VLC refuses to run as
// root, mpv cannot open the URL). Non-printable bytes are replaced, and the quote is bounded.
std::string player_failure_message(const std::string& player, int status, std::string_view log_text);

// Where mpv serves its JSON IPC for a client saving into `save_dir`: `save_dir`/mpv-ipc.sock, or, when that
// path is too long for a Unix socket (108 bytes), a file in the temporary directory named after `pid`.
std::filesystem::path mpv_ipc_socket_path(const std::filesystem::path& save_dir, int pid);

// The executable `name` in the directories of `path_variable` (the PATH value), or nullopt.
std::optional<std::filesystem::path> find_in_path(const std::string& name, const std::string& path_variable);

// The player as a child process: stdout and stderr go to `log_file` (its own status output would garble the
// client's). The destructor stops it (SIGTERM, then SIGKILL after a grace period); if the client dies without
// running it (SIGKILL, a crash), the kernel sends the player SIGTERM (PR_SET_PDEATHSIG), so no orphaned
// player keeps a window open. Must be constructed on a thread that lives as long as the client (the main
// thread): the kernel ties the signal to the creating thread.
class PlayerProcess {
  public:
    // Throws std::runtime_error naming the player when it is not found in PATH or cannot be executed.
    PlayerProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_file);
    ~PlayerProcess();
    PlayerProcess(const PlayerProcess&) = delete;
    PlayerProcess& operator=(const PlayerProcess&) = delete;

    int pid() const { return pid_; }
    // False once the player has exited (reaped without blocking).
    bool running();
    // Its exit status once it has exited (128 + signal when killed).
    std::optional<int> exit_status() const { return status_; }
    // SIGTERM, then SIGKILL after `grace`.
    void stop(std::chrono::milliseconds grace = std::chrono::seconds(3));

  private:
    int pid_ = -1;
    std::optional<int> status_;
};

}  // namespace toast::client
