#include "tracker/io/state_saver.hpp"

#include <spdlog/spdlog.h>

namespace toast::tracker {

StateSaver::StateSaver(boost::asio::io_context& io, TrackerService& service)
    : service_(service), timer_(io) {}

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
        save(false);
        start();
    });
}

void StateSaver::on_reload() {
    if (schedule() != armed_) start();
}

void StateSaver::stop() {
    timer_.cancel();
    save(true);
}

void StateSaver::save(bool last) {
    auto outcome = service_.save_state(std::chrono::steady_clock::now(), std::chrono::system_clock::now());
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
