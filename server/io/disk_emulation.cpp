#include "server/io/disk_emulation.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "server/io/chunk_verifier.hpp"

namespace toast::server {

bool wait_added_latency(const DiskFault& fault, Interrupter& interrupter, std::uint64_t epoch) {
    if (fault.added_latency.count() <= 0) return !interrupter.interrupted(epoch);
    return interrupter.sleep_until(Interrupter::Clock::now() + fault.added_latency, epoch);
}

std::uint64_t read_stutter(int fd, const DiskFault& fault, std::uint64_t offset, std::uint64_t length,
                           std::uint64_t file_size) {
    if (fault.stutter_pct <= 0 || file_size == 0) return 0;
    const auto extra =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(length) * fault.stutter_pct / 100.0));
    thread_local std::vector<char> buf(256 * 1024);
    std::uint64_t pos = (offset + length) % file_size;
    std::uint64_t left = extra;
    while (left > 0) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>({left, buf.size(), file_size - pos}));
        if (!pread_all(fd, buf.data(), n, pos)) break;
        left -= n;
        pos = (pos + n) % file_size;
    }
    return extra - left;
}

std::optional<EmulatedClock::Slot> EmulatedDisk::serve(const DiskQueue::Turn& turn, std::uint64_t bytes,
                                                       std::chrono::nanoseconds extra,
                                                       Interrupter& interrupter) {
    EmulatedClock::Slot slot;
    {
        std::lock_guard lock(mutex_);
        slot = clock_.serve(turn.request.arrival,
                            extra + timing_->service_time(turn.head, turn.request.position, bytes));
    }
    if (!interrupter.sleep_until(slot.done, turn.epoch)) return std::nullopt;
    return slot;
}

}  // namespace toast::server
