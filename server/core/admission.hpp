// Admission control for paced streams by per-round reservation (seed 001 §2.4, §3.1; seed 004 §2-3).
//
// Time is cut into rounds of length T (the server's time slice), numbered from an epoch the caller keeps. A
// stream that starts in round s sends chunk j of its schedule in round s + j and reads it from disk one round
// earlier (chunks 0 and 1 both in round s), holding it in server buffers from the read to the send. Its
// demand is therefore known for every round before it starts:
//   disk time   for each read, access + bytes · seconds-per-byte from the disk's fitted service model, on the
//               replica the ledger picks for it (the least reserved one in that round);
//   network     the bytes it sends in the round;
//   buffer      the bytes it holds in the round.
// It is admitted only if, in every round it touches, every disk stays within `disk_share` of T, the network
// within its bytes per round and the buffers within their size; the current round counts only its remaining
// part. Reservations are never moved, so an admitted stream keeps its disk time whatever arrives later: its
// reads are charged to a round that lies entirely between their release and their deadline, and a disk whose
// reads in each round fit in the round finishes every one of them in time when it serves earliest deadline
// first.
//
// Start scheduling (seed 004 §3): a stream may start up to `latency_rounds` rounds after the current one.
//   greedy          the earliest round that fits;
//   minimal_load    the round that fits with the lowest peak disk share over the rounds it touches (ties:
//                   earliest), leaving room where later streams will need it;
//   last_scheduled  greedy from the round the previous stream started in, wrapping around the window.
// A stream that fits nowhere in the window is refused with the earliest later round it would fit in (searched
// `retry_search_rounds` further), so the server can say when to come back.
//
// Pure: the caller supplies the round numbers, the disk costs and the layout; no clock, no lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "server/core/server_config.hpp"
#include "server/core/stream_schedule.hpp"

namespace toast::server {

struct AdmissionLimits {
    std::chrono::nanoseconds round{std::chrono::seconds(5)};
    double disk_share = 1.0;                    // of each round, per disk
    std::uint64_t network_bytes_per_round = 0;  // 0: no limit
    std::uint64_t buffer_bytes = 0;             // 0: no limit
    std::uint32_t latency_rounds = 1;
    StartPolicy policy = StartPolicy::greedy;
    std::uint32_t retry_search_rounds = 120;
};

// A disk as the admission test sees it: whether it serves reads and its fitted service model.
struct DiskCost {
    bool online = true;
    double access_seconds = 0;
    double seconds_per_byte = 0;
    double seconds(std::uint64_t bytes) const {
        return access_seconds + static_cast<double>(bytes) * seconds_per_byte;
    }
};

// What one stream of a title asks of the array, round by round from its start.
struct StreamDemand {
    struct Read {
        std::uint64_t block = 0;
        std::uint64_t bytes = 0;
        bool operator==(const Read&) const = default;
    };
    std::vector<std::vector<std::uint32_t>> replicas;  // disks holding each block of the title
    std::vector<std::vector<Read>> reads;              // reads done in stream round j
    std::vector<std::uint64_t> send;                   // bytes sent in stream round j
    std::vector<std::uint64_t> buffer;                 // bytes held in server buffers in stream round j
    std::size_t rounds() const { return send.size(); }
};

enum class Reservation {
    trace,  // each round as the schedule has it
    peak,   // every round as costly as the schedule's costliest, in bytes and in reads (chunk 0 as two of
            // them): peak-rate admission
};

// The demand of a stream following `schedule` over a title cut into `block_size` blocks held on `replicas`.
// Each chunk is read in windows of at most `max_read` bytes from its start, every window split at block
// boundaries: one read per block touched, as the server issues them. Preconditions: block_size > 0,
// max_read > 0, replicas has a (non-empty) entry for every block of the title.
StreamDemand stream_demand(const StreamSchedule& schedule, std::uint64_t block_size,
                           std::vector<std::vector<std::uint32_t>> replicas, std::uint64_t max_read,
                           Reservation reservation = Reservation::trace);

class AdmissionLedger {
  public:
    AdmissionLedger(AdmissionLimits limits, std::size_t disks);

    enum class Refusal { none, disk, network, buffer, unavailable };

    struct Admission {
        std::uint64_t id = 0;
        std::int64_t start_round = 0;
        std::vector<std::vector<std::uint32_t>> disks;  // disks[j][i]: the disk that serves reads[j][i]
    };
    struct Decision {
        std::optional<Admission> admitted;
        Refusal refusal = Refusal::none;          // why the earliest round of the window did not fit
        std::optional<std::int64_t> retry_round;  // refused: the earliest later round it would start in
    };

    // `now_round` is the current round, `elapsed` the share of it already gone (0..1). `disks` has one entry
    // per disk of the array. Admits and reserves, or leaves the ledger unchanged.
    Decision admit(const StreamDemand& demand, std::span<const DiskCost> disks, std::int64_t now_round,
                   double elapsed);
    // Frees what stream `id` reserved in rounds >= from_round (it ended or its client left). Unknown ids are
    // ignored.
    void release(std::uint64_t id, std::int64_t from_round);
    // Drops the bookkeeping of rounds before `round`; streams entirely before it are forgotten.
    void forget_before(std::int64_t round);

    const AdmissionLimits& limits() const { return limits_; }
    std::size_t active() const { return held_.size(); }
    double disk_seconds(std::int64_t round, std::size_t disk) const;
    std::uint64_t network_bytes(std::int64_t round) const;
    std::uint64_t buffer_bytes(std::int64_t round) const;

  private:
    struct RoundLoad {
        std::vector<double> disk;
        std::uint64_t network = 0;
        std::uint64_t buffer = 0;
    };
    struct Held {
        std::int64_t start = 0;
        std::vector<std::vector<std::pair<std::uint32_t, double>>> disk;  // per stream round: (disk, seconds)
        std::vector<std::uint64_t> send;
        std::vector<std::uint64_t> buffer;
    };
    struct Trial {
        bool fits = false;
        Refusal refusal = Refusal::none;
        double peak = 0;  // highest disk share of any (round, disk) the stream touches, with it added
    };

    Trial evaluate(const StreamDemand& demand, std::span<const DiskCost> disks, std::int64_t start,
                   std::int64_t now_round, double elapsed, Held* out) const;
    const RoundLoad* find(std::int64_t round) const;
    RoundLoad& at(std::int64_t round);

    AdmissionLimits limits_;
    std::size_t disks_;
    std::deque<RoundLoad> rounds_;  // rounds_[k] is round base_ + k
    std::int64_t base_ = 0;
    bool based_ = false;
    std::map<std::uint64_t, Held> held_;
    std::uint64_t next_id_ = 1;
    std::optional<std::int64_t> last_start_;
};

}  // namespace toast::server
