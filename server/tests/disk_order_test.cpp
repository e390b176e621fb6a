#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server/core/disk_model.hpp"
#include "server/core/disk_orders.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using TP = std::chrono::steady_clock::time_point;

namespace {

TP at(std::chrono::milliseconds ms) {
    return TP(ms);
}

DiskRequest req(std::uint64_t id, std::uint64_t position, std::optional<TP> deadline = std::nullopt) {
    return DiskRequest{.id = id, .bytes = 100, .position = position, .arrival = TP{}, .deadline = deadline};
}

std::vector<std::uint64_t> drain(DiskScheduler& q) {
    std::vector<std::uint64_t> out;
    while (q.size() > 0)
        out.push_back(q.pop(TP{}, 0));
    return out;
}

}  // namespace

TEST_CASE("the thesis's disk model gives its stream counts", "[server][diskmodel]") {
    // The RDA paper's array: 8 disks, t_a 17 ms, r_d 525 Mbps, DVD streams (6 Mbps) in 5 s slices.
    DiskArrayModel rda_array{8, 17ms, BitRate(525'000'000)};
    CHECK(model_streams(rda_array, BitRate(6'000'000), 5s) == Approx(539.499).epsilon(1e-4));
    // Thesis §3.2, one SATA-300 disk (16 ms, 446 Mbps): 60 DVD streams, 16.9 HDTV (25 Mbps) streams.
    DiskArrayModel sata300{1, 16ms, BitRate(446'000'000)};
    CHECK(model_streams(sata300, BitRate(6'000'000), 5s) == Approx(60.05).epsilon(1e-3));
    CHECK(model_streams(sata300, BitRate(25'000'000), 5s) == Approx(16.88).epsilon(1e-3));
    // Striping over 4 disks pays the access time 4 times: fewer streams than the same 4 disks unstriped.
    DiskArrayModel four{4, 16ms, BitRate(446'000'000)};
    CHECK(model_streams(four, BitRate(6'000'000), 5s, 4) < model_streams(four, BitRate(6'000'000), 5s));
    CHECK(model_streams(four, BitRate(6'000'000), 5s, 4) ==
          Approx(4 * 5 * 446e6 / (0.016 * 4 * 446e6 + 30e6)));
    CHECK(model_streams(DiskArrayModel{}, BitRate(6'000'000), 5s) == 0);
    CHECK(read_time(17ms, BitRate(525'000'000), Bytes(3'750'000)) ==
          17ms + std::chrono::nanoseconds(57'142'857));
}

TEST_CASE("the seek model averages t_a over random positions and grows with distance",
          "[server][diskmodel]") {
    SeekModel m{12ms, 18ms};  // fixed part 6 ms
    CHECK(access_time(m, 0.3, 0.3) == 6ms);
    CHECK(access_time(m, 0.0, 1.0) == 24ms);
    CHECK(access_time(m, 0.75, 0.25) == 15ms);
    // Mean over a fine grid of independent start and end positions: t_a.
    double sum = 0;
    const int n = 200;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            sum += static_cast<double>(access_time(m, (i + 0.5) / n, (j + 0.5) / n).count());
    CHECK(sum / (n * n) == Approx(12e6).epsilon(1e-3));
    // Without a full-seek time every access costs t_a.
    CHECK(access_time(SeekModel{17ms, 0ms}, 0.0, 1.0) == 17ms);
}

TEST_CASE("disk addresses are fixed per block, contiguous inside it and spread over the disk",
          "[server][diskmodel]") {
    CHECK(disk_address("a@1", 1, 1 << 20, 0) == disk_address("a@1", 1, 1 << 20, 0));
    CHECK(disk_address("a@1", 1, 1 << 20, 4096) == disk_address("a@1", 1, 1 << 20, 0) + 4096);
    CHECK(disk_address("a@1", 1, 1 << 20, 0) != disk_address("a@1", 2, 1 << 20, 0));
    CHECK(disk_address("a@1", 1, 1 << 20, 0) != disk_address("a@2", 1, 1 << 20, 0));
    int buckets[4] = {};
    for (std::uint64_t b = 0; b < 400; ++b) {
        const auto p = disk_address("title@00ff", b, 1 << 20, 0);
        REQUIRE(p + (1 << 20) <= kDiskAddressSpace);
        ++buckets[p / (kDiskAddressSpace / 4)];
    }
    for (int q : buckets)
        CHECK(q > 60);  // 100 expected per quarter
}

TEST_CASE("a FIFO disk queue serves in arrival order", "[server][queue]") {
    auto q = make_scheduler(QueueOrder::fifo);
    q->push(req(1, 900, at(30ms)));
    q->push(req(2, 100, at(10ms)));
    q->push(req(3, 500));
    CHECK(q->size() == 3);
    CHECK(drain(*q) == std::vector<std::uint64_t>{1, 2, 3});
}

TEST_CASE("dual-queue C-SCAN sweeps by position and holds new arrivals for the next sweep",
          "[server][queue]") {
    auto q = make_scheduler(QueueOrder::cscan);
    q->push(req(1, 900));
    q->push(req(2, 100));
    q->push(req(3, 500));
    CHECK(q->pop(TP{}, 0) == 2);  // the sweep starts at the lowest position
    // Arrivals during the sweep wait, even one right under the head.
    q->push(req(4, 50));
    q->push(req(5, 600));
    CHECK(q->size() == 4);
    CHECK(q->pop(TP{}, 0) == 3);
    CHECK(q->pop(TP{}, 0) == 1);
    CHECK(q->pop(TP{}, 0) == 4);  // next sweep, again from the lowest position
    q->push(req(6, 10));
    CHECK(q->pop(TP{}, 0) == 5);
    CHECK(q->pop(TP{}, 0) == 6);
    CHECK(q->size() == 0);
    // Equal positions keep their arrival order.
    q->push(req(7, 300));
    q->push(req(8, 300));
    CHECK(drain(*q) == std::vector<std::uint64_t>{7, 8});
}

TEST_CASE("an EDF disk queue serves the earliest deadline first, best effort last", "[server][queue]") {
    auto q = make_scheduler(QueueOrder::edf);
    q->push(req(1, 0));
    q->push(req(2, 0, at(300ms)));
    q->push(req(3, 0, at(100ms)));
    q->push(req(4, 0));
    q->push(req(5, 0, at(300ms)));  // ties keep arrival order
    q->push(req(6, 0, at(200ms)));
    CHECK(q->pop(TP{}, 0) == 3);
    q->push(req(7, 0, at(150ms)));  // a later arrival with an earlier deadline goes ahead
    CHECK(drain(*q) == std::vector<std::uint64_t>{7, 6, 2, 5, 1, 4});
}

TEST_CASE("disk_order names the orders", "[server][queue]") {
    CHECK(parse_queue_order("cscan") == QueueOrder::cscan);
    CHECK(parse_queue_order("edf") == QueueOrder::edf);
    CHECK(parse_queue_order("fifo") == QueueOrder::fifo);
    CHECK_FALSE(parse_queue_order("scan"));
    CHECK(to_string(QueueOrder::cscan) == "cscan");
}

TEST_CASE("an emulated disk keeps its own clock: reads queue behind each other, idle time is not work",
          "[server][diskmodel]") {
    EmulatedClock disk;
    auto slot = disk.serve(at(0ms), 20ms);
    CHECK(slot.start == at(0ms));
    CHECK(slot.done == at(20ms));
    // Arrived while the first was in service: starts at 20 ms, whenever the worker got to it.
    slot = disk.serve(at(5ms), 20ms);
    CHECK(slot.start == at(20ms));
    CHECK(slot.done == at(40ms));
    // Arrived after the disk went idle: starts on arrival.
    CHECK(disk.serve(at(100ms), 13ms).done == at(113ms));
    CHECK(disk.free_at() == at(113ms));
}

TEST_CASE("with a seek model the emulated head travels, so position order reads faster",
          "[server][diskmodel]") {
    const SeekTiming seek(SeekModel{9ms, 18ms}, toast::BitRate(8'000'000));  // 3 ms fixed + 18 ms per stroke
    const auto pos = [](double f) {
        return static_cast<std::uint64_t>(f * static_cast<double>(kDiskAddressSpace));
    };
    auto total = [&](std::vector<double> positions) {
        std::chrono::nanoseconds sum{0};
        std::uint64_t head = 0;
        for (double p : positions) {
            sum += seek.service_time(head, pos(p), 0);
            head = pos(p);
        }
        return std::chrono::duration<double, std::milli>(sum).count();
    };
    // From the head at 0: 0.1, 0.5, 0.9 in order cost 3+1.8, 3+7.2, 3+7.2 ms = 25.2 ms.
    CHECK(total({0.1, 0.5, 0.9}) == Approx(25.2).epsilon(1e-6));
    // Out of order: 0.9, 0.1, 0.5 cost 3+16.2, 3+14.4, 3+7.2 = 46.8 ms.
    CHECK(total({0.9, 0.1, 0.5}) == Approx(46.8).epsilon(1e-6));
    // 10 kB at 8 Mbit/s: 10 ms of transfer on top of the access.
    CHECK(seek.service_time(pos(0.5), pos(0.5), 10'000) == 3ms + 10ms);
}
