// The disk model of the thesis (seed 002 §3.1) and the emulated disk's seek model (seed 001 §2.4).
//
// A read of B contiguous bytes costs t_a + B / r_d. N streams of bitrate r_c each read r_c·t_b per time
// slice t_b, so D disks carry at most N = D·t_b·r_d / (t_a·r_d + r_c·t_b) streams; a read striped over D_s
// disks pays the access time on each, N = D·t_b·r_d / (t_a·D_s·r_d + r_c·t_b).
//
// The seek model splits t_a into a fixed part (rotation, settling) and a seek that grows linearly with the
// distance the head travels, with the fixed part chosen so that reads at independent uniformly random
// positions (what a FIFO queue sees) average exactly t_a: t(x) = t_a - s_full/3 + s_full·x for a distance x
// in strokes (E|U - V| = 1/3). A queue served in position order (C-SCAN) travels less and so reads faster.
#pragma once

#include <chrono>
#include <cstdint>

#include "server/core/disk_scheduler.hpp"
#include "server/core/disk_timing.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

struct DiskArrayModel {
    std::size_t disks = 1;                    // D
    std::chrono::nanoseconds access_time{0};  // t_a
    BitRate transfer_rate{0};                 // r_d
};

// The thesis's N for streams of `bitrate` read `time_slice` at a time, striped over `stripe` disks.
// 0 when the array has no transfer rate or the time slice is not positive.
double model_streams(const DiskArrayModel& array, BitRate bitrate, std::chrono::nanoseconds time_slice,
                     std::size_t stripe = 1);

// Cost of one read of `bytes` on a disk of the model: t_a + bytes / r_d.
std::chrono::nanoseconds read_time(std::chrono::nanoseconds access_time, BitRate transfer_rate, Bytes bytes);

struct SeekModel {
    std::chrono::nanoseconds average_access{0};  // t_a, the mean over random positions
    std::chrono::nanoseconds full_seek{0};       // head travel across the whole stroke; at most 3·t_a
};

// Access time for a head moving from position `from` to `to` (fractions of the stroke in [0, 1]).
std::chrono::nanoseconds access_time(const SeekModel& model, double from, double to);

// The seek model as an emulated disk's timing: the access from the head to the read's position (logical
// addresses over kDiskAddressSpace as the stroke) + bytes / r_d.
class SeekTiming final : public DiskTimingModel {
  public:
    SeekTiming(SeekModel seek, BitRate transfer_rate) : seek_(seek), rate_(transfer_rate) {}
    std::chrono::nanoseconds service_time(std::uint64_t head, std::uint64_t position,
                                          std::uint64_t bytes) const override;

  private:
    SeekModel seek_;
    BitRate rate_;
};

// An emulated disk's own clock: it serves one read at a time, each starting when the disk is free and the
// read has arrived, and lasting its service time. The caller sleeps until the completion time it returns.
// Because the clock is the disk's and not the worker thread's, a worker that wakes late (a busy CPU) makes
// that one read late but does not slow the disk down: the next read starts when the emulated disk was free,
// and the array keeps the throughput the model gives.
class EmulatedClock {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;
    struct Slot {
        TimePoint start;
        TimePoint done;
    };
    // Serves a read that arrived at `arrived` and takes `service` on the disk.
    Slot serve(TimePoint arrived, std::chrono::nanoseconds service);
    TimePoint free_at() const { return free_at_; }

  private:
    TimePoint free_at_{};
};

}  // namespace toast::server
