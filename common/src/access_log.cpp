#include "toast/common/access_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace toast {

namespace {

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int open_append(const std::filesystem::path& path) {
    return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

std::string open_error(const std::filesystem::path& path) {
    return "cannot open access log " + path.string() + ": " + std::strerror(errno);
}

}  // namespace

std::string access_log_escape(std::string_view text) {
    if (text.empty()) return "-";
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}

std::string format_access_log(const AccessLogEntry& e) {
    const auto secs = std::chrono::floor<std::chrono::seconds>(e.received);
    const std::time_t t = std::chrono::system_clock::to_time_t(secs);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char when[40];
    std::snprintf(when, sizeof when, "[%02d/%s/%04d:%02d:%02d:%02d +0000]", tm.tm_mday, kMonths[tm.tm_mon],
                  tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(e.duration).count();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%lld.%03lld", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000));

    std::string line;
    line.reserve(160 + e.request_line.size() + e.user_agent.size());
    line += access_log_escape(e.peer);
    line += " - ";
    line += access_log_escape(e.user);
    line += ' ';
    line += when;
    line += " \"";
    line += access_log_escape(e.request_line);
    line += "\" ";
    line += std::to_string(e.status);
    line += ' ';
    line += std::to_string(e.body_bytes);
    line += " \"";
    line += access_log_escape(e.referer);
    line += "\" \"";
    line += access_log_escape(e.user_agent);
    line += "\" ";
    line += seconds;
    line += " \"";
    line += access_log_escape(e.range);
    line += "\"\n";
    return line;
}

AccessLogFile::AccessLogFile(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = open_append(path_);
    if (fd_ < 0) throw std::runtime_error(open_error(path_));
}

AccessLogFile::~AccessLogFile() {
    if (fd_ >= 0) ::close(fd_);
}

bool AccessLogFile::write(std::string_view line) {
    std::lock_guard lock(mutex_);
    ssize_t n;
    do {
        n = ::write(fd_, line.data(), line.size());
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(line.size());
}

std::optional<std::string> AccessLogFile::reopen() {
    const int fd = open_append(path_);
    if (fd < 0) return open_error(path_);
    std::lock_guard lock(mutex_);
    ::close(fd_);
    fd_ = fd;
    return std::nullopt;
}

}  // namespace toast
