// What a read costs on a disk beyond its real I/O: the injected faults of thesis §4.3 and the emulated
// timing of §3.1.
//   added_latency  a delay before the read
//   stutter_pct    fail-stutter: that % of the piece's length in extra, useless bytes really read after it
//                  (continuing after the piece, wrapping inside the block file)
//   emulation      the read, stutter included, takes the DiskTimingModel's service time however fast the
//                  real disk was: the worker sleeps for the remainder
// Every wait is interruptible (see Interrupter), so a shutdown never sits out a long fault.
#pragma once

#include <chrono>
#include <cstdint>

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

// Sleeps until `timing`'s service time for `bytes` of `turn`'s read has passed since `started` (no-op when
// `timing` is null: a real disk); false when interrupted first.
bool wait_service_time(const DiskTimingModel* timing, const DiskQueue::Turn& turn, std::uint64_t bytes,
                       Interrupter::Clock::time_point started, Interrupter& interrupter);

}  // namespace toast::server
