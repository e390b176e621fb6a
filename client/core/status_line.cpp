#include "client/core/status_line.hpp"

#include <cstdio>

namespace toast::client {

std::string format_clock(std::chrono::nanoseconds t) {
    auto s = std::chrono::duration_cast<std::chrono::seconds>(t).count();
    if (s < 0) s = 0;
    char buf[32];
    if (s >= 3600) {
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                      static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
    } else {
        std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60),
                      static_cast<long long>(s % 60));
    }
    return buf;
}

std::string format_status_line(const StatusFigures& f) {
    auto secs = [](std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); };
    char buf[64];
    std::string out(to_string(f.state));
    out += " " + format_clock(f.position) + "/" + format_clock(f.duration);
    std::snprintf(buf, sizeof buf, " | buffer %.1fs", secs(f.buffer_ahead));
    out += buf;
    out += " | peers " + std::to_string(f.peers);
    out += " | from peers " + format_bytes(Bytes(f.bytes_from_peers)) + ", server " +
           format_bytes(Bytes(f.bytes_from_server));
    std::snprintf(buf, sizeof buf, " | stalls %u (%.1fs)", f.stalls, secs(f.stall_time));
    out += buf;
    if (f.first_byte) out += " | first byte " + std::to_string(f.first_byte->count()) + "ms";
    return out;
}

std::string refresh_in_place(const std::string& line) {
    return "\r" + line + "\x1b[K";
}

}  // namespace toast::client
