// StateSaver: saves TrackerService's state file every state_save_interval, and once more at a stop, and logs
// the outcome: a failure once (and again only when the reason changes), since a full disk fails every save
// until someone frees space; a periodic success at debug level, and at info level when it ends a run of
// failures or is the last save before exit.
//
// The state is encoded on the io thread (the registry is the io thread's) and written on a thread of its own:
// the write ends in two fsyncs, which on a busy disk can take longer than a tracker may keep announces
// waiting. A save whose interval comes while the previous one is still being written is skipped; the next
// one has everything. The last save, at a stop, waits for the one being written and then writes on the
// calling thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "tracker/io/tracker_service.hpp"

namespace toast::tracker {

class StateSaver {
  public:
    // How a snapshot is written: write_state_file, or a test's stand-in. Runs on the writer thread.
    using Writer = std::function<std::optional<std::string>(const std::filesystem::path&, std::string_view)>;

    StateSaver(boost::asio::io_context& io, TrackerService& service, Writer writer = {});
    ~StateSaver();
    StateSaver(const StateSaver&) = delete;
    StateSaver& operator=(const StateSaver&) = delete;

    // Arms the timer for the configured interval, or disarms it without a state_file.
    void start();
    // After a reload: a new state_file or state_save_interval applies to the next save, one new interval
    // from now, rather than after the old interval.
    void on_reload();
    // The last save before exit: the timer stops, the save being written (if any) finishes, and this one is
    // written at once. With one io thread nothing runs between this save and the io_context's stop, so every
    // announce answered is in it.
    void stop();

    bool writing() const { return writing_; }
    std::size_t skipped() const { return skipped_; }  // saves skipped because the previous one was writing

  private:
    void save_in_background();
    std::optional<TrackerService::StateSnapshot> take_snapshot();  // on the io thread
    struct Written {
        std::optional<std::string> error;
        std::chrono::steady_clock::duration took{};
    };
    Written write(const TrackerService::StateSnapshot& snapshot) const;  // on either thread
    void report(const TrackerService::StateOutcome& outcome, bool last);
    std::pair<std::optional<std::filesystem::path>, std::chrono::milliseconds> schedule() const;

    boost::asio::io_context& io_;
    TrackerService& service_;
    Writer writer_;
    boost::asio::steady_timer timer_;
    boost::asio::thread_pool writer_thread_{1};
    std::pair<std::optional<std::filesystem::path>, std::chrono::milliseconds> armed_;
    bool writing_ = false;
    bool stopped_ = false;
    std::size_t skipped_ = 0;
    std::size_t failures_ = 0;
    std::string last_failure_;
};

}  // namespace toast::tracker
