// StateSaver: saves TrackerService's state file every state_save_interval on the io thread, and once more at
// a stop, and logs the outcome: a failure once (and again only when the reason changes), since a full disk
// fails every save until someone frees space; a periodic success at debug level, and at info level when it
// ends a run of failures or is the last save before exit.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tracker/io/tracker_service.hpp"

namespace toast::tracker {

class StateSaver {
  public:
    StateSaver(boost::asio::io_context& io, TrackerService& service);

    // Arms the timer for the configured interval, or disarms it without a state_file.
    void start();
    // After a reload: a new state_file or state_save_interval applies to the next save, one new interval
    // from now, rather than after the old interval.
    void on_reload();
    // The last save before exit: the timer stops, and with one io thread nothing runs between this save and
    // the io_context's stop, so every announce answered is in it.
    void stop();

  private:
    void save(bool last);
    std::pair<std::optional<std::filesystem::path>, std::chrono::milliseconds> schedule() const;

    TrackerService& service_;
    boost::asio::steady_timer timer_;
    std::pair<std::optional<std::filesystem::path>, std::chrono::milliseconds> armed_;
    std::size_t failures_ = 0;
    std::string last_failure_;
};

}  // namespace toast::tracker
