#include "client/http/player_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace toast::client {

std::vector<std::string> player_command(PlayerKind kind, const std::string& url,
                                        std::chrono::milliseconds start) {
    char seconds_text[32];
    std::snprintf(seconds_text, sizeof seconds_text, "%lld.%lld",
                  static_cast<long long>(start.count() / 1000),
                  static_cast<long long>(start.count() % 1000 / 100));
    const std::string seconds = seconds_text;
    bool resume = start.count() > 0;
    switch (kind) {
        case PlayerKind::mpv: {
            std::vector<std::string> v{"mpv", "--force-window=yes"};
            if (resume) v.push_back("--start=" + seconds);
            v.push_back(url);
            return v;
        }
        case PlayerKind::vlc: {
            std::vector<std::string> v{"vlc", "--play-and-exit"};
            if (resume) v.push_back("--start-time=" + seconds);
            v.push_back(url);
            return v;
        }
        case PlayerKind::ffplay: {
            std::vector<std::string> v{"ffplay", "-autoexit", "-loglevel", "warning"};
            if (resume) v.insert(v.end(), {"-ss", seconds});
            v.push_back(url);
            return v;
        }
        case PlayerKind::none:
            return {};
    }
    return {};
}

std::optional<std::filesystem::path> find_in_path(const std::string& name, const std::string& path_variable) {
    if (name.find('/') != std::string::npos) {
        if (::access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
        return std::nullopt;
    }
    std::size_t start = 0;
    while (start <= path_variable.size()) {
        auto end = path_variable.find(':', start);
        if (end == std::string::npos) end = path_variable.size();
        // An empty PATH entry means the current directory.
        std::filesystem::path dir = end > start
                                        ? std::filesystem::path(path_variable.substr(start, end - start))
                                        : std::filesystem::path(".");
        auto candidate = dir / name;
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = end + 1;
    }
    return std::nullopt;
}

PlayerProcess::PlayerProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_file) {
    if (argv.empty()) throw std::runtime_error("no player command");
    const char* path = std::getenv("PATH");
    auto exe = find_in_path(argv[0], path ? path : "");
    if (!exe)
        throw std::runtime_error("player '" + argv[0] +
                                 "' not found in PATH; install it or use --player none");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, exe->c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start player '" + argv[0] + "': " + std::strerror(rc));
    pid_ = pid;
}

PlayerProcess::~PlayerProcess() {
    stop();
}

bool PlayerProcess::running() {
    if (status_ || pid_ <= 0) return false;
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == 0) return true;
    if (r == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    } else {
        status_ = -1;  // not our child any more (reaped elsewhere)
    }
    return false;
}

void PlayerProcess::stop(std::chrono::milliseconds grace) {
    if (!running()) return;
    ::kill(pid_, SIGTERM);
    auto until = std::chrono::steady_clock::now() + grace;
    while (running() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (running()) {
        ::kill(pid_, SIGKILL);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        status_ = 128 + SIGKILL;
    }
}

}  // namespace toast::client
