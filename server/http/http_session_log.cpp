// What a session says about each answer: the access log's line, and a log line for errors.
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "server/http/http_session.hpp"
#include "toast/common/access_log.hpp"
#include "toast/common/http_status.hpp"
#include "toast/common/log.hpp"

namespace toast::server {

void HttpSession::write_access_log(const Job& job) const {
    auto log = shared_.access_log();
    if (!log) return;
    AccessLogEntry e;
    e.peer = peer_address_;
    e.status = job.response.status;
    e.body_bytes = job.body_sent;
    e.user = job.response.subscriber;
    e.duration = Clock::now() - job.received;
    if (job.access) {
        e.received = job.access->received;
        e.request_line = job.access->request_line;
        e.referer = job.access->referer;
        e.user_agent = job.access->user_agent;
        e.range = job.access->range;
    } else {
        // Refused before a request could be parsed (or the connection limit): no request line to show.
        e.received = std::chrono::system_clock::now() -
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(e.duration);
    }
    if (!log->write(format_access_log(e))) {
        spdlog::warn("cannot write the access log {}: {}", log->path().string(), std::strerror(errno));
    }
}

void HttpSession::log_response(const Job& job) const {
    const auto& r = job.response;
    if (r.status < 400) return;
    if (r.status >= 500) {
        spdlog::warn("{} {} -> {} {}: {}", peer_, job.what, r.status, reason_phrase(r.status),
                     log_escape(r.reason, 400));
    } else {
        spdlog::info("{} {} -> {} {}: {}", peer_, job.what, r.status, reason_phrase(r.status),
                     log_escape(r.reason, 400));
    }
}

}  // namespace toast::server
