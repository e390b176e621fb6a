// The access log every Toast HTTP server writes: one line per request in the combined log format (Apache's
// and nginx's "combined", which log analysers read) with two fields appended, the request's time and its
// Range header:
//
//   127.0.0.1 - - [23/Nov/2026:20:10:01 +0000] "GET /titles/movie HTTP/1.1" 206 262144 "-" "libtorrent/2.0.8"
//   0.004 "bytes=0-262143"
//
// peer, identity ("-": Toast has none) and user (the subscriber a signed URL's token names, else "-"), the
// time the request arrived (UTC), the request line (a token query parameter's value shows as REDACTED),
// the status, the body bytes sent, Referer, User-Agent, the seconds from the request to its last byte
// (millisecond resolution, like nginx's $request_time) and Range; a missing header is "-". Request data is
// escaped as nginx does: '"', '\' and every byte outside printable ASCII become \xHH, so a line is always
// one line and its quoted fields always parse.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace toast {

struct AccessLogEntry {
    std::string_view peer;  // the client's address, without the port
    std::chrono::system_clock::time_point received;
    std::string_view request_line;  // "GET /titles/movie HTTP/1.1" as received
    unsigned status = 0;
    std::uint64_t body_bytes = 0;  // body bytes sent (not the head)
    std::string_view referer{};    // empty: absent
    std::string_view user_agent{};
    std::chrono::nanoseconds duration{0};
    std::string_view range{};
    std::string_view user{};  // who the request was authenticated as (a signed URL's subscriber); empty: "-"
};

// One line, ending in '\n'.
std::string format_access_log(const AccessLogEntry& entry);

// `text` with '"', '\' and bytes outside 0x20..0x7e as \xHH; an empty text is "-".
std::string access_log_escape(std::string_view text);

// An access log file shared by a server's threads. Lines are appended with one write(2) each on a file
// opened O_APPEND, so lines from several threads or processes never interleave. reopen() starts a new file
// at the same path: after logrotate has moved the old one away, on SIGHUP.
class AccessLogFile {
  public:
    // Opens `path` for appending, creating it with mode 0640. Throws std::runtime_error naming the path and
    // the reason.
    explicit AccessLogFile(std::filesystem::path path);
    ~AccessLogFile();
    AccessLogFile(const AccessLogFile&) = delete;
    AccessLogFile& operator=(const AccessLogFile&) = delete;

    // Appends `line`. False when the write failed or was short (disk full, ...); the line is lost.
    bool write(std::string_view line);
    // Opens the path again and switches to the new file; on failure keeps writing the old one and returns
    // the reason.
    std::optional<std::string> reopen();
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
    std::mutex mutex_;
    int fd_ = -1;
};

}  // namespace toast
