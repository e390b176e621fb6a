// DiskQueue on its own: the scheduler decides the order, interrupts cut waits short, stop drains and joins.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <vector>

#include "server/io/disk_queue.hpp"

using namespace toast::server;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Earliest deadline first; reads without a deadline after those with one, in arrival order. Records what it
// was shown.
class DeadlineFirst final : public DiskScheduler {
  public:
    void push(const DiskRequest& r) override {
        seen.push_back(r);
        queue_.emplace(std::make_pair(r.deadline.value_or(Clock::time_point::max()), r.id), r.id);
    }
    std::uint64_t pop(Clock::time_point, std::uint64_t head) override {
        heads.push_back(head);
        auto it = queue_.begin();
        const auto id = it->second;
        queue_.erase(it);
        return id;
    }
    std::size_t size() const override { return queue_.size(); }
    std::vector<DiskRequest> seen;
    std::vector<std::uint64_t> heads;

  private:
    std::map<std::pair<Clock::time_point, std::uint64_t>, std::uint64_t> queue_;
};

// Holds the single worker in its first read until released, so that the reads behind it queue up.
struct Gate {
    std::promise<void> entered, release;
    std::shared_future<void> released = release.get_future().share();
};

}  // namespace

TEST_CASE("a disk queue serves in arrival order by default", "[server][store][queue]") {
    Interrupter interrupter;
    DiskQueue queue(std::make_unique<FifoScheduler>(), 1, interrupter, nullptr);
    Gate gate;
    std::mutex mutex;
    std::vector<int> order;
    REQUIRE(queue.push(10, 0, std::nullopt, [&](DiskQueue::Turn&) {
        gate.entered.set_value();
        gate.released.wait();
    }));
    gate.entered.get_future().wait();
    for (int i = 0; i < 5; ++i)
        REQUIRE(queue.push(100, 0, std::nullopt, [&, i](DiskQueue::Turn&) {
            std::lock_guard lock(mutex);
            order.push_back(i);
        }));
    CHECK(queue.outstanding_ops() == 6);
    CHECK(queue.outstanding_bytes() == 510);
    gate.release.set_value();
    queue.stop();
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(queue.outstanding_ops() == 0);
    CHECK(queue.outstanding_bytes() == 0);
}

TEST_CASE("a plugged-in scheduler orders the queue and sees size, position, deadline and head",
          "[server][store][queue]") {
    Interrupter interrupter;
    auto scheduler = std::make_unique<DeadlineFirst>();
    auto* view = scheduler.get();
    DiskQueue queue(std::move(scheduler), 1, interrupter, nullptr);
    Gate gate;
    std::mutex mutex;
    std::vector<int> order;
    REQUIRE(queue.push(1000, 5000, std::nullopt, [&](DiskQueue::Turn&) {
        gate.entered.set_value();
        gate.released.wait();
    }));
    gate.entered.get_future().wait();
    const auto now = Clock::now();
    const std::vector<std::optional<Clock::time_point>> deadlines = {std::nullopt, now + 3s, now + 1s,
                                                                     now + 2s};
    for (int i = 0; i < 4; ++i)
        REQUIRE(
            queue.push(10, 100 * static_cast<std::uint64_t>(i), deadlines[i], [&, i](DiskQueue::Turn& turn) {
                std::lock_guard lock(mutex);
                order.push_back(i);
                CHECK(turn.request.position == 100 * static_cast<std::uint64_t>(i));
            }));
    gate.release.set_value();
    queue.stop();
    CHECK(order == std::vector<int>{2, 3, 1, 0});
    REQUIRE(view->seen.size() == 5);
    CHECK(view->seen[3].deadline == deadlines[2]);
    CHECK(view->seen[3].bytes == 10);
    CHECK(view->seen[3].id > view->seen[2].id);
    // The head is where the previous read ended: 5000 + 1000 after the first, then each 10-byte read.
    REQUIRE(view->heads.size() == 5);
    CHECK(view->heads[1] == 6000);
    CHECK(view->heads[2] == 200 + 10);
}

TEST_CASE("interrupting cuts waits short for reads queued before, not after", "[server][store][queue]") {
    Interrupter interrupter;
    DiskQueue queue(std::make_unique<FifoScheduler>(), 1, interrupter, nullptr);
    std::promise<bool> first, second;
    std::promise<void> waiting;
    const auto t0 = Clock::now();
    queue.push(1, 0, std::nullopt, [&](DiskQueue::Turn& turn) {
        waiting.set_value();
        first.set_value(interrupter.sleep_until(Clock::now() + 40s, turn.epoch));
    });
    waiting.get_future().wait();
    interrupter.interrupt();
    CHECK_FALSE(first.get_future().get());
    CHECK(Clock::now() - t0 < 5s);
    queue.push(1, 0, std::nullopt, [&](DiskQueue::Turn& turn) {
        second.set_value(interrupter.sleep_until(Clock::now() + 20ms, turn.epoch));
    });
    CHECK(second.get_future().get());  // a read queued after the interrupt waits its full time
}

TEST_CASE("a stopped queue refuses new reads but finishes the queued ones", "[server][store][queue]") {
    Interrupter interrupter;
    std::atomic<int> ran{0};
    std::atomic<int> interrupted{0};
    {
        DiskQueue queue(std::make_unique<FifoScheduler>(), 2, interrupter, nullptr);
        for (int i = 0; i < 20; ++i)
            queue.push(1, 0, std::nullopt, [&](DiskQueue::Turn& turn) {
                if (!interrupter.sleep_until(Clock::now() + 30s, turn.epoch)) ++interrupted;
                ++ran;
            });
        queue.stop();
        CHECK_FALSE(queue.push(1, 0, std::nullopt, [&](DiskQueue::Turn&) { ++ran; }));
    }
    CHECK(ran == 20);
    CHECK(interrupted == 20);
}
