#include "client/http/player_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

extern char** environ;

namespace toast::client {

std::vector<std::string> player_command(PlayerKind kind, const std::string& url,
                                        std::chrono::milliseconds start,
                                        const std::vector<std::string>& extra,
                                        const std::string& ipc_socket) {
    char seconds_text[32];
    std::snprintf(seconds_text, sizeof seconds_text, "%lld.%lld",
                  static_cast<long long>(start.count() / 1000),
                  static_cast<long long>(start.count() % 1000 / 100));
    const std::string seconds = seconds_text;
    bool resume = start.count() > 0;
    std::vector<std::string> v;
    switch (kind) {
        case PlayerKind::mpv:
            v = {"mpv", "--force-window=yes"};
            if (resume) v.push_back("--start=" + seconds);
            if (!ipc_socket.empty()) v.push_back("--input-ipc-server=" + ipc_socket);
            break;
        case PlayerKind::vlc:
            v = {"vlc", "--play-and-exit"};
            if (resume) v.push_back("--start-time=" + seconds);
            break;
        case PlayerKind::ffplay:
            v = {"ffplay", "-autoexit", "-loglevel", "warning"};
            if (resume) v.insert(v.end(), {"-ss", seconds});
            break;
        case PlayerKind::none:
            return {};
    }
    v.insert(v.end(), extra.begin(), extra.end());
    v.push_back(url);
    return v;
}

std::string player_failure_message(const std::string& player, int status, std::string_view log_text) {
    std::string out = "player '" + player + "' " +
                      (status > 128 ? "was killed by signal " + std::to_string(status - 128)
                                    : "exited with status " + std::to_string(status));
    // The last three non-empty lines, at most 600 bytes: the player's own reason is at the end.
    std::vector<std::string_view> lines;
    std::size_t end = log_text.size();
    while (end > 0 && lines.size() < 3) {
        auto start = log_text.rfind('\n', end - 1);
        auto from = start == std::string_view::npos ? 0 : start + 1;
        auto line = log_text.substr(from, end - from);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.remove_suffix(1);
        if (!line.empty()) lines.insert(lines.begin(), line);
        if (start == std::string_view::npos) break;
        end = start;
    }
    std::string quote;
    for (auto line : lines) {
        if (!quote.empty()) quote += " | ";
        for (unsigned char c : line)
            quote += c >= 0x20 && c != 0x7f ? static_cast<char>(c) : '?';
    }
    if (quote.size() > 600) quote = "..." + quote.substr(quote.size() - 600);
    if (!quote.empty()) out += ": " + quote;
    return out;
}

std::filesystem::path mpv_ipc_socket_path(const std::filesystem::path& save_dir, int pid) {
    std::error_code ec;
    auto in_save_dir = std::filesystem::absolute(save_dir, ec) / "mpv-ipc.sock";
    if (!ec && in_save_dir.string().size() < 100) return in_save_dir;
    return std::filesystem::temp_directory_path() / ("toast-client-" + std::to_string(pid) + "-mpv.sock");
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
    // Everything the child needs is prepared here: between fork and exec only async-signal-safe calls.
    int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0)
        throw std::runtime_error("cannot write the player's log " + log_file.string() + ": " +
                                 std::strerror(errno));
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2];  // the child writes its exec errno here; closed on a successful exec
    if (null_fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
        int e = errno;
        ::close(log_fd);
        if (null_fd >= 0) ::close(null_fd);
        throw std::runtime_error(std::string("cannot start player '") + argv[0] + "': " + std::strerror(e));
    }
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    const std::string exe_path = exe->string();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(127);  // the client died before prctl took effect
        // Its own process group: a Ctrl-C on the terminal reaches the client, which stops the player.
        ::setpgid(0, 0);
        ::dup2(null_fd, STDIN_FILENO);
        ::dup2(log_fd, STDOUT_FILENO);
        ::dup2(log_fd, STDERR_FILENO);
        ::execve(exe_path.c_str(), args.data(), environ);
        int e = errno;
        [[maybe_unused]] auto n = ::write(report[1], &e, sizeof e);
        ::_exit(127);
    }
    int fork_errno = errno;
    ::close(log_fd);
    ::close(null_fd);
    ::close(report[1]);
    if (pid < 0) {
        ::close(report[0]);
        throw std::runtime_error(std::string("cannot start player '") + argv[0] +
                                 "': " + std::strerror(fork_errno));
    }
    pid_ = pid;
    int exec_errno = 0;
    ssize_t n;
    do {
        n = ::read(report[0], &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    ::close(report[0]);
    if (n == static_cast<ssize_t>(sizeof exec_errno)) {
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        throw std::runtime_error(std::string("cannot start player '") + argv[0] +
                                 "': " + std::strerror(exec_errno));
    }
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
