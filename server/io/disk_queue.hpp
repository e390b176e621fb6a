// One disk's queue of reads and the worker threads that serve it, in the order the disk's DiskScheduler
// chooses. The queue knows a read only by its DiskRequest (size, position, arrival, deadline) and a piece of
// work to run; the block store decides what the work is.
//
// Waits inside a read (emulated disk timing, injected latency) go through an Interrupter: interrupt() cuts
// every wait of the reads queued or running at that moment short, so a shutdown is bounded by the real I/O
// in progress, not by a 40 s latency fault. Reads queued later are not affected.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/core/disk_scheduler.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class Interrupter {
  public:
    using Clock = std::chrono::steady_clock;
    // The current epoch: a read remembers it when queued.
    std::uint64_t epoch() const;
    // Every read that remembered an epoch before now is interrupted.
    void interrupt();
    bool interrupted(std::uint64_t since) const { return epoch() != since; }
    // Sleeps until `until`; false as soon as a read that remembered `since` is interrupted.
    bool sleep_until(Clock::time_point until, std::uint64_t since);

  private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::atomic<std::uint64_t> epoch_{0};
};

class DiskQueue {
  public:
    using Clock = std::chrono::steady_clock;

    // What a worker knows when it starts a read.
    struct Turn {
        DiskRequest request;
        std::uint64_t head = 0;     // where the previous read on this disk ended
        std::uint64_t epoch = 0;    // the Interrupter's epoch when the read was queued
        Clock::time_point started;  // when the worker took it
        bool retired = false;
    };
    using Work = std::function<void(Turn&)>;

    // `depth` (may be null) follows the number of reads queued or in service.
    DiskQueue(std::unique_ptr<DiskScheduler> scheduler, unsigned workers, Interrupter& interrupter,
              Gauge* depth);
    // Stops taking reads, interrupts waits, lets the workers run what is still queued (each read then sees
    // itself interrupted) and joins them. Idempotent; the destructor calls it.
    void stop();
    ~DiskQueue();
    DiskQueue(const DiskQueue&) = delete;
    DiskQueue& operator=(const DiskQueue&) = delete;

    // Queues `work` for a read of `bytes` at `position`; false (and `work` dropped) once the queue is
    // stopping.
    bool push(std::uint64_t bytes, std::uint64_t position, std::optional<Clock::time_point> deadline,
              Work work);
    // The read no longer counts as outstanding (called by the work before it reports completion, so that a
    // read issued from that completion sees this disk's true load; the worker calls it otherwise).
    void retire(Turn& turn);

    std::uint64_t outstanding_bytes() const { return outstanding_bytes_.load(); }
    std::uint64_t outstanding_ops() const { return outstanding_ops_.load(); }

  private:
    struct Entry {
        Turn turn;
        Work work;
    };
    void worker_loop();

    std::unique_ptr<DiskScheduler> scheduler_;
    Interrupter& interrupter_;
    Gauge* depth_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::unordered_map<std::uint64_t, Entry> entries_;  // queued, by DiskRequest id
    std::uint64_t next_id_ = 0;
    std::uint64_t head_ = 0;
    bool stop_ = false;
    std::atomic<std::uint64_t> outstanding_bytes_{0};
    std::atomic<std::uint64_t> outstanding_ops_{0};
    std::vector<std::thread> threads_;
};

}  // namespace toast::server
