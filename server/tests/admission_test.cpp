#include <catch2/catch.hpp>

#include <vector>

#include "server/core/admission.hpp"
#include "server/core/stream_schedule.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;

namespace {

using Reads = std::vector<StreamDemand::Read>;

std::vector<std::vector<std::uint32_t>> all_on(std::uint32_t disk, std::size_t blocks) {
    return std::vector<std::vector<std::uint32_t>>(blocks, std::vector<std::uint32_t>{disk});
}

// A constant-rate title of `blocks` blocks of 1000 bytes, one block per round.
StreamSchedule cbr(std::size_t blocks) {
    return constant_rate_schedule(1000 * blocks, BitRate(8000), 1s);
}

AdmissionLimits one_second_rounds(std::uint32_t latency) {
    AdmissionLimits l;
    l.round = 1s;
    l.disk_share = 1.0;
    l.latency_rounds = latency;
    return l;
}

}  // namespace

TEST_CASE("a constant-rate schedule sends two rounds at once, then one per round", "[server][admission]") {
    auto s = constant_rate_schedule(4500, BitRate(8000), 1s);  // 1000 bytes per round
    CHECK(s.chunks == std::vector<std::uint64_t>{2000, 1000, 1000, 500});
    CHECK(s.total() == 4500);
    CHECK(s.offset_of(2) == 3000);
    CHECK(constant_rate_schedule(700, BitRate(8000), 1s).chunks == std::vector<std::uint64_t>{700});
}

TEST_CASE("a trace schedule follows the trace, resampled to the server's rounds", "[server][admission]") {
    DemandTrace t{1s, {300, 100, 500, 0, 200}};
    auto s = trace_schedule(t, 1100, 1s);
    REQUIRE(s);
    CHECK(s->chunks == std::vector<std::uint64_t>{400, 500, 0, 200});
    auto two = trace_schedule(t, 1100, 2s);  // rounds of 2 s: 400, 500, 200
    REQUIRE(two);
    CHECK(two->chunks == std::vector<std::uint64_t>{900, 200});
    CHECK_FALSE(trace_schedule(t, 1200, 1s));  // the trace is of another file
}

TEST_CASE("a paced stream's rounds come from the title's trace when it fits the title, else from its bitrate",
          "[server][admission]") {
    DemandTrace t{1s, {300, 100, 500, 0, 200}};
    CHECK(paced_rounds(1100, BitRate(8000), &t, 1s) == std::vector<std::uint64_t>{300, 100, 500, 0, 200});
    CHECK(paced_rounds(1100, BitRate(8000), &t, 2s) == std::vector<std::uint64_t>{400, 500, 200});
    // Another file's trace, or none: 1000 bytes a round at 8000 bit/s.
    CHECK(paced_rounds(1200, BitRate(8000), &t, 1s) == std::vector<std::uint64_t>{1000, 200});
    CHECK(paced_rounds(1100, BitRate(8000), nullptr, 1s) == std::vector<std::uint64_t>{1000, 100});
    CHECK(title_schedule(1100, BitRate(8000), &t, 1s).chunks == std::vector<std::uint64_t>{400, 500, 0, 200});
    CHECK(title_schedule(1100, BitRate(8000), nullptr, 1s) ==
          constant_rate_schedule(1100, BitRate(8000), 1s));
}

TEST_CASE("a stream's demand: reads one round ahead of the sends, buffers from read to send",
          "[server][admission]") {
    auto d = stream_demand(cbr(5), 1000, all_on(0, 5), 1 << 20);
    // Chunks: {0,1}, {2}, {3}, {4}. Chunks 0 and 1 are read in round 0, chunk j in round j - 1.
    REQUIRE(d.rounds() == 4);
    CHECK(d.reads[0] == Reads{{0, 1000}, {1, 1000}, {2, 1000}});
    CHECK(d.reads[1] == Reads{{3, 1000}});
    CHECK(d.reads[2] == Reads{{4, 1000}});
    CHECK(d.reads[3].empty());
    CHECK(d.send == std::vector<std::uint64_t>{2000, 1000, 1000, 1000});
    CHECK(d.buffer == std::vector<std::uint64_t>{3000, 2000, 2000, 1000});
}

TEST_CASE("a stream's reads are cut like the server's: windows, then blocks", "[server][admission]") {
    // 2500-byte chunks over 1000-byte blocks, read in windows of at most 1500 bytes.
    StreamSchedule s{1s, {2500, 2500}};
    auto d = stream_demand(s, 1000, all_on(0, 5), 1500);
    CHECK(d.reads[0] == Reads{{0, 1000}, {1, 500}, {1, 500}, {2, 500}, {2, 500}, {3, 1000}, {4, 1000}});
}

TEST_CASE("peak-rate reservation makes every round as large as the largest", "[server][admission]") {
    StreamSchedule s{1s, {300, 100, 400, 0}};  // largest after the first: 400
    auto d = stream_demand(s, 1000, all_on(0, 1), 1 << 20, Reservation::peak);
    CHECK(d.send == std::vector<std::uint64_t>{800, 400, 400, 400});
    CHECK(d.reads[0] == Reads{{0, 400}, {0, 400}, {0, 400}});  // chunk 0 as two peak chunks, then chunk 1
    CHECK(d.reads[1] == Reads{{0, 400}});
    CHECK(d.reads[2] == Reads{{0, 400}});  // a round needing nothing still reserves the peak
    auto trace = stream_demand(s, 1000, all_on(0, 1), 1 << 20);
    CHECK(trace.send == std::vector<std::uint64_t>{300, 100, 400, 0});
    CHECK(trace.reads[2].empty());
}

TEST_CASE("peak-rate reservation charges every round the costliest round's disk accesses",
          "[server][admission]") {
    // 100-byte blocks: chunk 2 touches three blocks, so every chunk is reserved as three reads (chunk 0 as
    // six), on the blocks it really reads, the peak's bytes shared among them.
    StreamSchedule s{1s, {100, 100, 300, 100}};
    auto d = stream_demand(s, 100, all_on(0, 6), 1 << 20, Reservation::peak);
    CHECK(d.send == std::vector<std::uint64_t>{600, 300, 300, 300});
    CHECK(d.reads[0] == Reads{{0, 100},
                              {0, 100},
                              {0, 100},
                              {0, 100},
                              {0, 100},
                              {0, 100},  // chunk 0
                              {1, 100},
                              {1, 100},
                              {1, 100}});  // chunk 1
    CHECK(d.reads[1] == Reads{{2, 100}, {3, 100}, {4, 100}});
    CHECK(d.reads[2] == Reads{{5, 100}, {5, 100}, {5, 100}});
    // By the trace, a round costs only its own reads.
    auto trace = stream_demand(s, 100, all_on(0, 6), 1 << 20);
    CHECK(trace.reads[0] == Reads{{0, 100}, {1, 100}});
    CHECK(trace.reads[2] == Reads{{5, 100}});
}

TEST_CASE("a disk admits streams until a round would overflow, later ones start later",
          "[server][admission]") {
    // Every read costs 0.2 s: a stream needs 0.6 s in its first round (three reads) and 0.2 s after.
    AdmissionLedger ledger(one_second_rounds(5), 1);
    const auto demand = stream_demand(cbr(10), 1000, all_on(0, 10), 1 << 20);
    const std::vector<DiskCost> disk{{true, 0.2, 0.0}};

    auto a = ledger.admit(demand, disk, 0, 0.0);
    REQUIRE(a.admitted);
    CHECK(a.admitted->start_round == 0);
    CHECK(ledger.disk_seconds(0, 0) == Approx(0.6));
    CHECK(ledger.disk_seconds(1, 0) == Approx(0.2));

    auto b = ledger.admit(demand, disk, 0, 0.0);  // round 0: 0.6 + 0.6 > 1
    REQUIRE(b.admitted);
    CHECK(b.admitted->start_round == 1);
    auto c = ledger.admit(demand, disk, 0, 0.0);  // round 2: 0.2 + 0.2 + 0.6 = 1.0 exactly
    REQUIRE(c.admitted);
    CHECK(c.admitted->start_round == 2);
    CHECK(ledger.disk_seconds(2, 0) == Approx(1.0));

    // Rounds 3-7 carry 0.6 s of the three streams: no room for a fourth start until the first one's reads
    // end after round 7; round 8 is past the 5-round window, so it is refused with that round to retry in.
    auto d = ledger.admit(demand, disk, 0, 0.0);
    CHECK_FALSE(d.admitted);
    CHECK(d.refusal == AdmissionLedger::Refusal::disk);
    REQUIRE(d.retry_round);
    CHECK(*d.retry_round == 8);
    CHECK(ledger.active() == 3);
    CHECK(ledger.disk_seconds(5, 0) == Approx(0.6));
}

TEST_CASE("by default a disk offers its whole round: streams fill it exactly, the next one is refused",
          "[server][admission]") {
    // The limits as the server's default config makes them (disk_share from AdmissionConfig), one-second
    // rounds, no later start. Each stream reads one 0.25 s block a round (its first round too): four fill a
    // round to the second.
    AdmissionLimits limits;
    limits.round = 1s;
    limits.disk_share = AdmissionConfig{}.disk_share;
    limits.latency_rounds = 0;
    AdmissionLedger ledger(limits, 1);
    StreamDemand demand;
    demand.replicas = all_on(0, 4);
    for (std::uint64_t j = 0; j < 4; ++j) {
        demand.reads.push_back({{j, 1000}});
        demand.send.push_back(1000);
        demand.buffer.push_back(1000);
    }
    const std::vector<DiskCost> disk{{true, 0.05, 0.0002}};  // 0.05 s + 1000 x 0.2 ms
    for (int i = 0; i < 4; ++i)
        CHECK(ledger.admit(demand, disk, 0, 0.0).admitted);
    CHECK(ledger.disk_seconds(0, 0) == Approx(1.0));
    const auto fifth = ledger.admit(demand, disk, 0, 0.0);
    CHECK_FALSE(fifth.admitted);
    CHECK(fifth.refusal == AdmissionLedger::Refusal::disk);
    CHECK(ledger.active() == 4);
}

TEST_CASE("the current round offers only what is left of it", "[server][admission]") {
    AdmissionLedger ledger(one_second_rounds(1), 1);
    const auto demand = stream_demand(cbr(4), 1000, all_on(0, 4), 1 << 20);
    const std::vector<DiskCost> disk{{true, 0.2, 0.0}};
    // Half the round gone: 0.6 s of reads do not fit in the 0.5 s left, so the stream starts next round.
    auto a = ledger.admit(demand, disk, 7, 0.5);
    REQUIRE(a.admitted);
    CHECK(a.admitted->start_round == 8);
}

TEST_CASE("duplicated blocks are read from the replica with less reserved in that round",
          "[server][admission]") {
    AdmissionLedger ledger(one_second_rounds(0), 2);
    const std::vector<DiskCost> disks{{true, 0.1, 0.0}, {true, 0.1, 0.0}};
    auto demand = stream_demand(cbr(4), 1000, std::vector<std::vector<std::uint32_t>>(4, {0, 1}), 1 << 20);
    auto a = ledger.admit(demand, disks, 0, 0.0);
    REQUIRE(a.admitted);
    // Round 0 reads blocks 0, 1, 2: disk 0, then disk 1 (less loaded), then disk 0 (tie: first replica).
    CHECK(a.admitted->disks[0] == std::vector<std::uint32_t>{0, 1, 0});
    CHECK(ledger.disk_seconds(0, 0) == Approx(0.2));
    CHECK(ledger.disk_seconds(0, 1) == Approx(0.1));

    // A replica on an offline disk is never chosen; a block with no online replica makes the stream
    // unplayable whatever the start round.
    const std::vector<DiskCost> one_down{{false, 0.1, 0.0}, {true, 0.1, 0.0}};
    auto b = ledger.admit(demand, one_down, 0, 0.0);
    REQUIRE(b.admitted);
    CHECK(b.admitted->disks[0] == std::vector<std::uint32_t>{1, 1, 1});
    auto only_zero = stream_demand(cbr(4), 1000, all_on(0, 4), 1 << 20);
    auto c = ledger.admit(only_zero, one_down, 0, 0.0);
    CHECK_FALSE(c.admitted);
    CHECK(c.refusal == AdmissionLedger::Refusal::unavailable);
    CHECK_FALSE(c.retry_round);
}

TEST_CASE("network and buffer capacity refuse a stream the disks could carry", "[server][admission]") {
    const std::vector<DiskCost> disk{{true, 0.0, 0.0}};
    const auto demand = stream_demand(cbr(4), 1000, all_on(0, 4), 1 << 20);  // sends 2000, 1000, 1000

    auto net = one_second_rounds(0);
    net.network_bytes_per_round = 3000;
    AdmissionLedger by_network(net, 1);
    CHECK(by_network.admit(demand, disk, 0, 0.0).admitted);
    auto refused = by_network.admit(demand, disk, 0, 0.0);  // round 0: 2000 + 2000 > 3000
    CHECK_FALSE(refused.admitted);
    CHECK(refused.refusal == AdmissionLedger::Refusal::network);
    CHECK(by_network.network_bytes(0) == 2000);

    auto buf = one_second_rounds(0);
    buf.buffer_bytes = 5000;
    AdmissionLedger by_buffer(buf, 1);
    CHECK(by_buffer.admit(demand, disk, 0, 0.0).admitted);  // holds 3000 in round 0
    auto no_room = by_buffer.admit(demand, disk, 0, 0.0);
    CHECK_FALSE(no_room.admitted);
    CHECK(no_room.refusal == AdmissionLedger::Refusal::buffer);
    CHECK(by_buffer.buffer_bytes(0) == 3000);
}

TEST_CASE("releasing a stream frees its reservations from that round on", "[server][admission]") {
    AdmissionLedger ledger(one_second_rounds(0), 1);
    const std::vector<DiskCost> disk{{true, 0.2, 0.0}};
    const auto demand = stream_demand(cbr(10), 1000, all_on(0, 10), 1 << 20);
    auto a = ledger.admit(demand, disk, 0, 0.0);
    REQUIRE(a.admitted);
    ledger.release(a.admitted->id, 3);
    CHECK(ledger.disk_seconds(2, 0) == Approx(0.2));  // the past stays as it was
    CHECK(ledger.disk_seconds(3, 0) == Approx(0.0));
    CHECK(ledger.disk_seconds(8, 0) == Approx(0.0));
    CHECK(ledger.active() == 0);
    ledger.release(a.admitted->id, 0);  // twice: ignored
    CHECK(ledger.disk_seconds(2, 0) == Approx(0.2));

    ledger.forget_before(5);
    CHECK(ledger.disk_seconds(2, 0) == 0.0);
}

TEST_CASE("start policies: greedy takes the first round that fits, minimal load the emptiest",
          "[server][admission]") {
    // One disk, reads of 0.1 s per 1000 bytes. A background stream reserves a burst in rounds 0-1.
    const std::vector<DiskCost> disk{{true, 0.0, 0.0001}};
    StreamSchedule burst{1s, {8000, 7000, 3000, 1000, 1000, 1000}};  // 1.5 s in round 0, 0.3 s, then 0.1 s
    StreamSchedule mine{1s, {1000, 1000, 1000}};                     // 0.2 s in round 0, 0.1 s in round 1

    for (auto policy : {StartPolicy::greedy, StartPolicy::minimal_load, StartPolicy::last_scheduled}) {
        auto limits = one_second_rounds(3);
        limits.disk_share = 2.0;  // room for the burst
        limits.policy = policy;
        AdmissionLedger ledger(limits, 1);
        REQUIRE(ledger.admit(stream_demand(burst, 1 << 20, all_on(0, 1), 1 << 20), disk, 0, 0.0).admitted);
        CHECK(ledger.disk_seconds(0, 0) == Approx(1.5));
        auto a = ledger.admit(stream_demand(mine, 1 << 20, all_on(0, 1), 1 << 20), disk, 0, 0.0);
        REQUIRE(a.admitted);
        if (policy == StartPolicy::minimal_load) {
            // Starting in round 0 peaks at 1.7 s of 2, in round 1 at 0.5, in rounds 2 and 3 at 0.3: the first
            // of those.
            CHECK(a.admitted->start_round == 2);
        } else {
            CHECK(a.admitted->start_round == 0);
        }
    }
}

TEST_CASE("last-scheduled tries the window from the previous stream's start round on",
          "[server][admission]") {
    auto limits = one_second_rounds(4);
    limits.policy = StartPolicy::last_scheduled;
    AdmissionLedger ledger(limits, 1);
    const std::vector<DiskCost> disk{{true, 0.3, 0.0}};
    const auto demand = stream_demand(cbr(3), 1000, all_on(0, 3), 1 << 20);  // 0.9 s in round 0, then none
    auto first = ledger.admit(demand, disk, 0, 0.0);
    CHECK(first.admitted->start_round == 0);
    CHECK(ledger.admit(demand, disk, 0, 0.0).admitted->start_round == 1);
    // Round 0 is free again, but the policy starts from round 1 (taken) and goes on to round 2; greedy would
    // have taken round 0.
    ledger.release(first.admitted->id, 0);
    CHECK(ledger.admit(demand, disk, 0, 0.0).admitted->start_round == 2);
    // A later request whose window begins after the last start searches greedily.
    CHECK(ledger.admit(demand, disk, 5, 0.0).admitted->start_round == 5);
}
