// Sends the box's QoE reports to the operator (POST /telemetry, with the box's token), one at a time, from a
// bounded queue: a report that finds the queue full pushes out the oldest, and one the endpoint does not
// take (no answer within the timeout, or any status but 202) is dropped, not retried, so a box that cannot
// reach the endpoint keeps playing, holds at most `max_queue` reports, and counts what it lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "client/lt/server_access.hpp"
#include "toast/common/qoe_report.hpp"

namespace toast::client {

struct TelemetryStats {
    std::uint64_t sent = 0;     // taken by the endpoint (202)
    std::uint64_t dropped = 0;  // pushed out of a full queue, refused, or not delivered
    std::uint64_t refused = 0;  // of dropped: the endpoint answered, but not 202 (403, 429, ...)
};

class TelemetrySender {
  public:
    TelemetrySender(boost::asio::io_context& io, ServerAccess access, ServerUrl endpoint,
                    std::size_t max_queue = 8, std::chrono::milliseconds timeout = std::chrono::seconds(5));
    ~TelemetrySender();
    TelemetrySender(const TelemetrySender&) = delete;
    TelemetrySender& operator=(const TelemetrySender&) = delete;

    void submit(const QoeReport& report);
    // `done` runs once the queue is empty and nothing is in flight, or after `limit`, whichever comes first.
    void flush(std::chrono::milliseconds limit, std::function<void()> done);
    const TelemetryStats& stats() const { return stats_; }
    const ServerUrl& endpoint() const { return endpoint_; }

  private:
    void pump();
    void flushed();

    boost::asio::io_context& io_;
    ServerAccess access_;
    ServerUrl endpoint_;
    std::size_t max_queue_;
    std::chrono::milliseconds timeout_;
    std::deque<std::string> queue_;
    bool in_flight_ = false;
    TelemetryStats stats_;
    std::function<void()> on_flushed_;
    boost::asio::steady_timer flush_timer_;
    std::shared_ptr<bool> alive_;
};

}  // namespace toast::client
