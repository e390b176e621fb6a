// The order in which a disk serves its queued reads.
//
//   fifo   arrival order.
//   cscan  dual-queue C-SCAN (seed 001 §3.3): reads arriving while a sweep is under way wait in a request
//          queue; when the sweep's service queue is empty the two swap, and the new sweep serves its reads
//          in increasing block position, so the head crosses the disk once per sweep and then returns. New
//          reads can never overtake a sweep in progress, which keeps one sweep's time bounded.
//   edf    earliest deadline first; reads without a deadline (best effort) come after every read that has
//          one, in arrival order.
//
// Pure and single-threaded: the disk's worker owns it under its lock. Ties keep arrival order in every mode.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace toast::server {

enum class QueueOrder { fifo, cscan, edf };
std::optional<QueueOrder> parse_queue_order(std::string_view text);
std::string_view to_string(QueueOrder order);

struct QueueKey {
    double position = 0;  // block position on the disk, fraction of the stroke
    std::optional<std::chrono::steady_clock::time_point> deadline;
};

template <class T>
class DiskQueue {
  public:
    explicit DiskQueue(QueueOrder order) : order_(order) {}

    QueueOrder order() const { return order_; }
    bool empty() const { return service_.empty() && pending_.empty(); }
    std::size_t size() const { return service_.size() + pending_.size(); }

    void push(T item, QueueKey key) {
        Entry e{std::move(item), key, seq_++};
        if (order_ == QueueOrder::cscan) {
            pending_.push_back(std::move(e));
        } else if (order_ == QueueOrder::edf) {
            // Sorted insert; the queue of one disk is short (tens of reads), so a vector beats a heap here
            // and keeps ties in arrival order.
            auto at = std::upper_bound(service_.begin(), service_.end(), e,
                                       [](const Entry& a, const Entry& b) { return edf_before(a, b); });
            service_.insert(at, std::move(e));
        } else {
            service_.push_back(std::move(e));
        }
    }

    // Precondition: !empty().
    T pop() {
        if (service_.empty()) {
            // C-SCAN: start the next sweep with everything that arrived during the last one.
            std::swap(service_, pending_);
            std::stable_sort(service_.begin(), service_.end(),
                             [](const Entry& a, const Entry& b) { return a.key.position < b.key.position; });
        }
        T item = std::move(service_.front().item);
        service_.pop_front();
        return item;
    }

    // Visits the queued reads in the order they will be served (for C-SCAN: this sweep, then the next one
    // in position order).
    template <class F>
    void for_each_in_order(F&& f) const {
        for (const auto& e : service_)
            f(e.item, e.key);
        if (pending_.empty()) return;
        std::vector<const Entry*> next;
        for (const auto& e : pending_)
            next.push_back(&e);
        std::stable_sort(next.begin(), next.end(),
                         [](const Entry* a, const Entry* b) { return a->key.position < b->key.position; });
        for (const auto* e : next)
            f(e->item, e->key);
    }

  private:
    struct Entry {
        T item;
        QueueKey key;
        std::uint64_t seq;
    };
    static bool edf_before(const Entry& a, const Entry& b) {
        if (a.key.deadline && b.key.deadline) return *a.key.deadline < *b.key.deadline;
        return a.key.deadline.has_value() && !b.key.deadline.has_value();
    }

    QueueOrder order_;
    std::deque<Entry> service_;  // served from the front
    std::deque<Entry> pending_;  // C-SCAN's request queue
    std::uint64_t seq_ = 0;
};

// A queued read as an EDF disk will serve it: its deadline (none: best effort) and its expected service time.
struct QueuedWork {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    double seconds = 0;
};

// Whether an EDF disk can take one more read with `deadline` and `seconds` of service without it or any
// queued read with a deadline finishing late. `queued` is in service order; `busy_seconds` is what the read
// in service still needs. The new read goes behind every queued read with a deadline no later than its own
// and delays the rest.
bool edf_fits(std::span<const QueuedWork> queued, double busy_seconds,
              std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point deadline,
              double seconds);

}  // namespace toast::server
