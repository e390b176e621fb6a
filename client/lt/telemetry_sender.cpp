#include "client/lt/telemetry_sender.hpp"

#include <spdlog/spdlog.h>

#include "client/lt/http_request.hpp"

namespace toast::client {

TelemetrySender::TelemetrySender(boost::asio::io_context& io, ServerAccess access, ServerUrl endpoint,
                                 std::size_t max_queue, std::chrono::milliseconds timeout)
    : io_(io),
      access_(std::move(access)),
      endpoint_(std::move(endpoint)),
      max_queue_(std::max<std::size_t>(max_queue, 1)),
      timeout_(timeout),
      flush_timer_(io),
      alive_(std::make_shared<bool>(true)) {}

TelemetrySender::~TelemetrySender() {
    *alive_ = false;
}

void TelemetrySender::submit(const QoeReport& report) {
    if (queue_.size() >= max_queue_) {
        queue_.pop_front();
        ++stats_.dropped;
    }
    queue_.push_back(format_qoe_report(report));
    pump();
}

void TelemetrySender::pump() {
    if (in_flight_) return;
    if (queue_.empty()) {
        flushed();
        return;
    }
    in_flight_ = true;
    HttpRequestSpec spec;
    spec.method = "POST";
    spec.url = endpoint_;
    spec.headers.push_back({"Content-Type", "application/json"});
    if (auto auth = access_.authorization(); !auth.empty()) spec.headers.push_back({"Authorization", auth});
    spec.body = std::move(queue_.front());
    queue_.pop_front();
    spec.body_limit = 4096;
    spec.timeout = timeout_;
    http_request(io_, std::move(spec), access_.tls, [this, alive = alive_](HttpAnswer a) {
        if (!*alive) return;
        in_flight_ = false;
        if (a.status == 202) {
            ++stats_.sent;
        } else {
            ++stats_.dropped;
            if (a.status != 0) ++stats_.refused;
            spdlog::debug("telemetry: report dropped: {}",
                          a.status == 0 ? a.error : "the endpoint answered " + std::to_string(a.status));
        }
        pump();
    });
}

void TelemetrySender::flush(std::chrono::milliseconds limit, std::function<void()> done) {
    on_flushed_ = std::move(done);
    if (!in_flight_ && queue_.empty()) {
        flushed();
        return;
    }
    flush_timer_.expires_after(limit);
    flush_timer_.async_wait([this, alive = alive_](boost::system::error_code ec) {
        if (ec || !*alive) return;
        // A report still in flight is counted when its answer comes (if the loop still runs).
        stats_.dropped += queue_.size();
        queue_.clear();
        flushed();
    });
}

void TelemetrySender::flushed() {
    if (!on_flushed_) return;
    flush_timer_.cancel();
    auto done = std::move(on_flushed_);
    on_flushed_ = nullptr;
    done();
}

}  // namespace toast::client
