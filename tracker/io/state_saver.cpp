#include "tracker/io/state_saver.hpp"

#include <memory>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "tracker/io/state_file.hpp"

namespace toast::tracker {

namespace asio = boost::asio;

StateSaver::StateSaver(asio::io_context& io, TrackerService& service, Writer writer)
    : io_(io), service_(service), writer_(std::move(writer)), timer_(io) {
    if (!writer_)
        writer_ = [](const std::filesystem::path& p, std::string_view b) { return write_state_file(p, b); };
}

StateSaver::~StateSaver() {
    // A write still running finishes. Its completion is posted to the io thread and refers to this saver: the
    // io_context must not run again once the saver is gone (main stops it first).
    writer_thread_.join();
}

std::pair<std::optional<std::filesystem::path>, std::chrono::milliseconds> StateSaver::schedule() const {
    return {service_.config().state_file, service_.config().state_save_interval};
}

void StateSaver::start() {
    armed_ = schedule();
    if (!armed_.first) {
        timer_.cancel();
        return;
    }
    timer_.expires_after(armed_.second);
    timer_.async_wait([this](boost::system::error_code ec) {
        if (ec) return;
        save_in_background();
        start();
    });
}

void StateSaver::on_reload() {
    if (schedule() != armed_) start();
}

void StateSaver::save_in_background() {
    if (writing_) {
        ++skipped_;
        spdlog::debug("state: the previous save is still being written; this one is skipped");
        return;
    }
    auto snapshot = take_snapshot();
    if (!snapshot) return;
    writing_ = true;
    auto shared = std::make_shared<TrackerService::StateSnapshot>(std::move(*snapshot));
    asio::post(writer_thread_, [this, shared] {
        asio::post(io_, [this, shared, written = write(*shared)] {
            writing_ = false;
            if (stopped_) return;  // the last save has been written since, and reported
            report(service_.record_save(*shared, written.error, written.took), false);
        });
    });
}

void StateSaver::stop() {
    timer_.cancel();
    stopped_ = true;
    // The save being written finishes first, so that this one is the file that stays.
    writer_thread_.join();
    writing_ = false;
    auto snapshot = take_snapshot();
    if (!snapshot) return;
    const auto written = write(*snapshot);
    report(service_.record_save(*snapshot, written.error, written.took), true);
}

std::optional<TrackerService::StateSnapshot> StateSaver::take_snapshot() {
    return service_.snapshot_state(std::chrono::steady_clock::now(), std::chrono::system_clock::now());
}

StateSaver::Written StateSaver::write(const TrackerService::StateSnapshot& snapshot) const {
    const auto started = std::chrono::steady_clock::now();
    auto error = writer_(snapshot.path, snapshot.bytes);
    return {std::move(error), std::chrono::steady_clock::now() - started};
}

void StateSaver::report(const TrackerService::StateOutcome& outcome, bool last) {
    if (outcome.message.empty()) return;
    if (!outcome.ok) {
        if (failures_++ == 0 || outcome.message != last_failure_) spdlog::error("{}", outcome.message);
        last_failure_ = outcome.message;
        return;
    }
    if (failures_ > 0) {
        spdlog::info("{} (after {} failed saves)", outcome.message, failures_);
    } else if (last) {
        spdlog::info("{}", outcome.message);
    } else {
        spdlog::debug("{}", outcome.message);
    }
    failures_ = 0;
    last_failure_.clear();
}

}  // namespace toast::tracker
