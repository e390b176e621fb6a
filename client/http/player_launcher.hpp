// Launching the viewer for `toast-client play --player mpv|vlc|ffplay` (issue 5): the command line that opens
// the local URL (at the resume position), a PATH lookup so a missing player is a clear error before anything
// starts, and the child process, which the client watches to leave when the viewer closes.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "client/core/client_options.hpp"

namespace toast::client {

// argv for `kind` playing `url` from `start` (0: from the beginning). Empty for PlayerKind::none.
std::vector<std::string> player_command(PlayerKind kind, const std::string& url,
                                        std::chrono::milliseconds start);

// The executable `name` in the directories of `path_variable` (the PATH value), or nullopt.
std::optional<std::filesystem::path> find_in_path(const std::string& name, const std::string& path_variable);

// The player as a child process: stdout and stderr go to `log_file` (its own status output would garble the
// client's). The destructor stops it (SIGTERM, then SIGKILL after a grace period).
class PlayerProcess {
  public:
    // Throws std::runtime_error naming the player when it is not found in PATH or cannot be started.
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
