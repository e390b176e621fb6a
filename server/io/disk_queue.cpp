#include "server/io/disk_queue.hpp"

#include <algorithm>

namespace toast::server {

std::uint64_t Interrupter::epoch() const {
    return epoch_.load();
}

void Interrupter::interrupt() {
    {
        std::lock_guard lock(mutex_);
        ++epoch_;
    }
    cv_.notify_all();
}

bool Interrupter::sleep_until(Clock::time_point until, std::uint64_t since) {
    std::unique_lock lock(mutex_);
    return !cv_.wait_until(lock, until, [&] { return epoch_.load() != since; });
}

DiskQueue::DiskQueue(std::unique_ptr<DiskScheduler> scheduler, unsigned workers, Interrupter& interrupter,
                     Gauge* depth)
    : scheduler_(std::move(scheduler)), interrupter_(interrupter), depth_(depth) {
    for (unsigned w = 0; w < std::max(1u, workers); ++w)
        threads_.emplace_back([this] { worker_loop(); });
}

void DiskQueue::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stop_ && threads_.empty()) return;
        stop_ = true;
    }
    interrupter_.interrupt();
    cv_.notify_all();
    for (auto& t : threads_)
        t.join();
    threads_.clear();
}

DiskQueue::~DiskQueue() {
    stop();
}

bool DiskQueue::push(std::uint64_t bytes, std::uint64_t position, std::optional<Clock::time_point> deadline,
                     Work work) {
    {
        std::lock_guard lock(mutex_);
        if (stop_) return false;
        Entry e;
        e.turn.request = DiskRequest{.id = next_id_++,
                                     .bytes = bytes,
                                     .position = position,
                                     .arrival = Clock::now(),
                                     .deadline = deadline};
        e.turn.epoch = interrupter_.epoch();
        e.work = std::move(work);
        scheduler_->push(e.turn.request);
        outstanding_bytes_ += bytes;
        const auto ops = ++outstanding_ops_;
        if (depth_) depth_->set(static_cast<double>(ops));
        entries_.emplace(e.turn.request.id, std::move(e));
    }
    cv_.notify_one();
    return true;
}

void DiskQueue::retire(Turn& turn) {
    if (turn.retired) return;
    turn.retired = true;
    outstanding_bytes_ -= turn.request.bytes;
    const auto ops = --outstanding_ops_;
    if (depth_) depth_->set(static_cast<double>(ops));
}

void DiskQueue::worker_loop() {
    for (;;) {
        Entry entry;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return stop_ || scheduler_->size() > 0; });
            if (scheduler_->size() == 0) return;  // stopping and nothing left
            const auto now = Clock::now();
            auto it = entries_.find(scheduler_->pop(now, head_));
            entry = std::move(it->second);
            entries_.erase(it);
            entry.turn.head = head_;
            entry.turn.started = now;
            head_ = entry.turn.request.position + entry.turn.request.bytes;
        }
        entry.work(entry.turn);
        retire(entry.turn);
    }
}

}  // namespace toast::server
