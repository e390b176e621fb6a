// Admission control for paced streams (config `admission`): the per-round reservation ledger of
// core/admission.hpp behind a lock, fed with the round the server's clock is in, each disk's fitted service
// model (DiskControl) and the title's layout. A /stream the ledger cannot fit is answered 503 with a
// Retry-After that says when it would fit; an admitted one holds a Ticket, which gives its reservations back
// when the response ends or its connection closes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "server/core/admission.hpp"
#include "server/core/disk_control.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class StreamAdmission {
  public:
    using Clock = std::chrono::steady_clock;

    // Rounds are config.time_slice long, counted from `epoch`. `max_read` is the largest store read a
    // paced response issues (the transfer window).
    StreamAdmission(const ServerConfig& config, DiskControl& disks, MetricsRegistry& metrics,
                    std::uint64_t max_read, Clock::time_point epoch = Clock::now());

    // Releases the stream's reservations from the current round on when destroyed.
    class Ticket {
      public:
        Ticket(StreamAdmission& owner, std::uint64_t id) : owner_(owner), id_(id) {}
        ~Ticket();
        Ticket(const Ticket&) = delete;
        Ticket& operator=(const Ticket&) = delete;

      private:
        StreamAdmission& owner_;
        std::uint64_t id_;
    };

    struct Decision {
        std::shared_ptr<Ticket> ticket;       // null: refused
        Clock::time_point start;              // admitted: when the stream may start sending
        std::chrono::seconds retry_after{0};  // refused: when to ask again (at least 1 s)
        std::string reason;                   // refused: what was full
    };

    // Decides for a /stream of the whole `title` asked for at `now`.
    Decision admit(const TitleInfo& title, Clock::time_point now);

    // How much room is left for more streams (GET /tier): the share of disk_share still free on the busiest
    // disk over the current round and the next kRoomRounds, and the streams admitted.
    static constexpr int kRoomRounds = 3;
    struct Room {
        double share = 1;
        std::size_t streams = 0;
    };
    Room room(Clock::time_point now);

  private:
    void release(std::uint64_t id);
    std::int64_t round_of(Clock::time_point t) const;

    const std::chrono::nanoseconds round_;
    const bool reserve_peak_;
    const std::uint64_t max_read_;
    const Clock::time_point epoch_;
    DiskControl& disks_;
    const std::size_t disk_count_;
    std::mutex mutex_;
    AdmissionLedger ledger_;  // guarded by mutex_
    Counter& admitted_;
    Counter* refused_[4];  // by AdmissionLedger::Refusal - 1
    Gauge& active_;
};

}  // namespace toast::server
