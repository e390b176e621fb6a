#include "server/core/disk_orders.hpp"

#include <algorithm>

namespace toast::server {

std::unique_ptr<DiskScheduler> make_scheduler(QueueOrder order) {
    switch (order) {
        case QueueOrder::cscan:
            return std::make_unique<CScanScheduler>();
        case QueueOrder::edf:
            return std::make_unique<EdfScheduler>();
        case QueueOrder::fifo:
            break;
    }
    return std::make_unique<FifoScheduler>();
}

void CScanScheduler::push(const DiskRequest& request) {
    next_.push_back({request.position, request.id});
}

std::uint64_t CScanScheduler::pop(std::chrono::steady_clock::time_point, std::uint64_t) {
    if (sweep_.empty()) {
        // Start the next sweep with everything that arrived during the last one.
        std::stable_sort(next_.begin(), next_.end(),
                         [](const Entry& a, const Entry& b) { return a.position < b.position; });
        sweep_.assign(next_.begin(), next_.end());
        next_.clear();
    }
    const auto id = sweep_.front().id;
    sweep_.pop_front();
    return id;
}

void EdfScheduler::push(const DiskRequest& request) {
    if (!request.deadline) {
        best_effort_.push_back(request.id);
        return;
    }
    // A disk's queue is short (tens of reads): a sorted deque keeps ties in arrival order without a heap.
    const Entry e{*request.deadline, request.id};
    const auto at = std::upper_bound(deadline_.begin(), deadline_.end(), e,
                                     [](const Entry& a, const Entry& b) { return a.deadline < b.deadline; });
    deadline_.insert(at, e);
}

std::uint64_t EdfScheduler::pop(std::chrono::steady_clock::time_point, std::uint64_t) {
    if (!deadline_.empty()) {
        const auto id = deadline_.front().id;
        deadline_.pop_front();
        return id;
    }
    const auto id = best_effort_.front();
    best_effort_.pop_front();
    return id;
}

}  // namespace toast::server
