// The orders a disk may serve its queue in, as DiskScheduler implementations (config `disk_order`):
//
//   fifo   arrival order (FifoScheduler, disk_scheduler.hpp).
//   cscan  dual-queue C-SCAN (seed 001 §3.3): reads arriving while a sweep is under way wait in a request
//          queue; when the sweep's service queue is empty the two swap, and the new sweep serves its reads
//          in increasing disk position, so the head crosses the disk once per sweep and then returns. New
//          reads never overtake a sweep in progress, which keeps one sweep's time bounded.
//   edf    earliest deadline first; reads without a deadline (best effort) come after every read that has
//          one, in arrival order.
//
// Ties keep arrival order in every order. Pure and single-threaded, like every DiskScheduler.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "server/core/disk_scheduler.hpp"
#include "server/core/server_config.hpp"

namespace toast::server {

std::unique_ptr<DiskScheduler> make_scheduler(QueueOrder order);

class CScanScheduler final : public DiskScheduler {
  public:
    void push(const DiskRequest& request) override;
    std::uint64_t pop(std::chrono::steady_clock::time_point now, std::uint64_t head) override;
    std::size_t size() const override { return sweep_.size() + next_.size(); }

  private:
    struct Entry {
        std::uint64_t position;
        std::uint64_t id;
    };
    std::deque<Entry> sweep_;  // the sweep under way, in position order
    std::vector<Entry> next_;  // arrived during it, in arrival order
};

class EdfScheduler final : public DiskScheduler {
  public:
    void push(const DiskRequest& request) override;
    std::uint64_t pop(std::chrono::steady_clock::time_point now, std::uint64_t head) override;
    std::size_t size() const override { return deadline_.size() + best_effort_.size(); }

  private:
    struct Entry {
        std::chrono::steady_clock::time_point deadline;
        std::uint64_t id;
    };
    std::deque<Entry> deadline_;  // sorted by deadline, ties in arrival order
    std::deque<std::uint64_t> best_effort_;
};

}  // namespace toast::server
