// What a read costs on a disk beyond its real I/O: the injected faults of thesis §4.3 and the emulated
// timing of §3.1.
//   added_latency  a delay before the read
//   stutter_pct    fail-stutter: that % of the piece's length in extra, useless bytes really read after it
//                  (continuing after the piece, wrapping inside the block file)
//   emulation      the read, stutter and added latency included, takes the DiskTimingModel's service time on
//                  the disk's own clock however fast the real disk was: the worker sleeps for the remainder
// Every wait is interruptible (see Interrupter), so a shutdown never sits out a long fault.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "server/core/disk_model.hpp"
#include "server/core/disk_timing.hpp"
#include "server/core/server_config.hpp"
#include "server/io/disk_queue.hpp"

namespace toast::server {

// Waits out `fault.added_latency`; false when interrupted first.
bool wait_added_latency(const DiskFault& fault, Interrupter& interrupter, std::uint64_t epoch);

// Reads the fail-stutter bytes for a piece at [offset, offset + length) of a block file of `file_size` bytes
// open as `fd`; returns how many extra bytes were read.
std::uint64_t read_stutter(int fd, const DiskFault& fault, std::uint64_t offset, std::uint64_t length,
                           std::uint64_t file_size);

// An emulated disk: its timing model and its own clock (EmulatedClock). A read starts on the disk when the
// disk is free and the read has arrived in the queue, and takes the model's service time plus any injected
// latency; the worker sleeps until then. Thread-safe: a disk with several workers still serves one read at a
// time on its clock.
class EmulatedDisk {
  public:
    explicit EmulatedDisk(std::unique_ptr<DiskTimingModel> timing) : timing_(std::move(timing)) {}
    // Waits until `turn`'s read of `bytes` (stutter included), delayed by `extra`, completes on the disk's
    // clock; returns when it started and ended there, or nullopt when interrupted first.
    std::optional<EmulatedClock::Slot> serve(const DiskQueue::Turn& turn, std::uint64_t bytes,
                                             std::chrono::nanoseconds extra, Interrupter& interrupter);

  private:
    std::unique_ptr<DiskTimingModel> timing_;
    std::mutex mutex_;
    EmulatedClock clock_;
};

}  // namespace toast::server
