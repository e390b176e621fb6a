#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server/core/disk_model.hpp"
#include "server/core/disk_queue.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using TP = std::chrono::steady_clock::time_point;

namespace {

TP at(std::chrono::milliseconds ms) {
    return TP(ms);
}

std::vector<int> drain(DiskQueue<int>& q) {
    std::vector<int> out;
    while (!q.empty())
        out.push_back(q.pop());
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

TEST_CASE("block positions are fixed per file and spread over the disk", "[server][diskmodel]") {
    CHECK(block_position("blocks/a@1/000001.blk") == block_position("blocks/a@1/000001.blk"));
    CHECK(block_position("blocks/a@1/000001.blk") != block_position("blocks/a@1/000002.blk"));
    int buckets[4] = {};
    for (int b = 0; b < 400; ++b) {
        const double p = block_position("blocks/title@00ff/" + std::to_string(b) + ".blk");
        REQUIRE(p >= 0.0);
        REQUIRE(p < 1.0);
        ++buckets[static_cast<int>(p * 4)];
    }
    for (int q : buckets)
        CHECK(q > 60);  // 100 expected per quarter
}

TEST_CASE("a FIFO disk queue serves in arrival order", "[server][queue]") {
    DiskQueue<int> q(QueueOrder::fifo);
    q.push(1, {0.9, at(30ms)});
    q.push(2, {0.1, at(10ms)});
    q.push(3, {0.5, std::nullopt});
    CHECK(q.size() == 3);
    CHECK(drain(q) == std::vector<int>{1, 2, 3});
}

TEST_CASE("dual-queue C-SCAN sweeps by position and holds new arrivals for the next sweep",
          "[server][queue]") {
    DiskQueue<int> q(QueueOrder::cscan);
    q.push(1, {0.9, {}});
    q.push(2, {0.1, {}});
    q.push(3, {0.5, {}});
    CHECK(q.pop() == 2);  // the sweep starts at the lowest position
    // Arrivals during the sweep wait, even one right under the head.
    q.push(4, {0.05, {}});
    q.push(5, {0.6, {}});
    std::vector<int> order;
    q.for_each_in_order([&](int item, const QueueKey&) { order.push_back(item); });
    CHECK(order == std::vector<int>{3, 1, 4, 5});
    CHECK(q.pop() == 3);
    CHECK(q.pop() == 1);
    CHECK(q.pop() == 4);  // next sweep, again from the lowest position
    q.push(6, {0.01, {}});
    CHECK(q.pop() == 5);
    CHECK(q.pop() == 6);
    CHECK(q.empty());
    // Equal positions keep their arrival order.
    q.push(7, {0.3, {}});
    q.push(8, {0.3, {}});
    CHECK(drain(q) == std::vector<int>{7, 8});
}

TEST_CASE("an EDF disk queue serves the earliest deadline first, best effort last", "[server][queue]") {
    DiskQueue<int> q(QueueOrder::edf);
    q.push(1, {0.0, std::nullopt});
    q.push(2, {0.0, at(300ms)});
    q.push(3, {0.0, at(100ms)});
    q.push(4, {0.0, std::nullopt});
    q.push(5, {0.0, at(300ms)});  // ties keep arrival order
    q.push(6, {0.0, at(200ms)});
    CHECK(drain(q) == std::vector<int>{3, 6, 2, 5, 1, 4});
}

TEST_CASE("EDF admission of a deadline read: it and every queued deadline must still be met",
          "[server][queue]") {
    const TP now = at(1000ms);
    // In service for 100 ms more; then reads due at +300 ms (100 ms) and +600 ms (200 ms).
    std::vector<QueuedWork> queued{{at(1300ms), 0.1}, {at(1600ms), 0.2}, {std::nullopt, 1.0}};
    // Due at +250 ms, 100 ms long: goes first, finishes at +200 ms; the others at +300 and +500: fits.
    CHECK(edf_fits(queued, 0.1, now, at(1250ms), 0.1));
    // 150 ms long: it makes the +300 ms read finish at +350 ms.
    CHECK_FALSE(edf_fits(queued, 0.1, now, at(1250ms), 0.15));
    // 200 ms long: it would finish at +300 ms, after its own deadline.
    CHECK_FALSE(edf_fits(queued, 0.1, now, at(1250ms), 0.2));
    // Due at +350 ms: behind the first read (done at +200 ms), it finishes at +300 ms, the last at +500.
    CHECK(edf_fits(queued, 0.1, now, at(1350ms), 0.1));
    // Due at +1 s: after the second read (+400 ms), done at +500 ms; best effort does not count.
    CHECK(edf_fits(queued, 0.1, now, at(2000ms), 0.1));
    // An already-late read does not block a new one that does not make it later.
    std::vector<QueuedWork> late{{at(1050ms), 0.2}};
    CHECK(edf_fits(late, 0.0, now, at(1500ms), 0.1));
    CHECK_FALSE(edf_fits(late, 0.0, now, at(1100ms), 0.05));  // behind it: done at +250 ms, late itself
}

TEST_CASE("an emulated disk keeps its own clock: reads queue behind each other, idle time is not work",
          "[server][diskmodel]") {
    // 10 ms access, 8 Mbit/s: 10 kB take 10 ms to transfer.
    EmulatedDisk disk(SeekModel{10ms, 0ms}, toast::BitRate(8'000'000));
    CHECK(disk.serve(at(0ms), toast::Bytes(10'000), 0.5) == at(20ms));
    // Arrived while the first was in service: starts at 20 ms, whenever the worker got to it.
    CHECK(disk.serve(at(5ms), toast::Bytes(10'000), 0.9) == at(40ms));
    // Arrived after the disk went idle: starts on arrival; an injected delay adds to it.
    CHECK(disk.serve(at(100ms), toast::Bytes(0), 0.1, 3ms) == at(113ms));
    CHECK(disk.free_at() == at(113ms));
}

TEST_CASE("with a seek model the emulated head travels, so position order reads faster",
          "[server][diskmodel]") {
    const SeekModel seek{9ms, 18ms};  // 3 ms fixed + 18 ms per full stroke
    auto total = [&](std::vector<double> positions) {
        EmulatedDisk disk(seek, toast::BitRate(8'000'000));
        TP done{};
        for (double p : positions)
            done = disk.serve(at(0ms), toast::Bytes(0), p);
        return done;
    };
    // From the head at 0: 0.1, 0.5, 0.9 in order cost 3+1.8, 3+7.2, 3+7.2 ms = 25.2 ms.
    CHECK(total({0.1, 0.5, 0.9}) == at(0ms) + std::chrono::microseconds(25'200));
    // Out of order: 0.9, 0.1, 0.5 cost 3+16.2, 3+14.4, 3+7.2 = 46.8 ms.
    CHECK(total({0.9, 0.1, 0.5}) == at(0ms) + std::chrono::microseconds(46'800));
}
