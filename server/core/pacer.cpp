#include "server/core/pacer.hpp"

#include <algorithm>
#include <stdexcept>

namespace toast::server {

Pacer::Pacer(Bytes slice_bytes, std::chrono::nanoseconds time_slice)
    : slice_bytes_(slice_bytes), time_slice_(time_slice) {
    if (slice_bytes.value() == 0) throw std::invalid_argument("pacer slice must be at least one byte");
    if (time_slice.count() <= 0) throw std::invalid_argument("pacer time slice must be positive");
}

Pacer::Pacer(BitRate bitrate, std::chrono::nanoseconds time_slice)
    : Pacer(Bytes(std::max<std::uint64_t>(1, bytes_in(bitrate, time_slice).value())), time_slice) {}

std::chrono::nanoseconds Pacer::target() const {
    return std::max(std::chrono::nanoseconds(0), time_slice_ - deficit_);
}

Pacer::Clock::time_point Pacer::on_transmitted(Clock::time_point started, Clock::time_point finished) {
    if (initial_) {
        initial_ = false;
        return finished;
    }
    auto elapsed = std::max(std::chrono::nanoseconds(0), finished - started);
    auto goal = target();
    // The slot this slice used is max(elapsed, goal); the schedule advances by t_b per slice, so the stream
    // falls behind by slot - t_b. Finishing within the target leaves it exactly on schedule (deficit reset);
    // overrunning the target but not t_b reduces the deficit; overrunning t_b grows it by the excess.
    auto slot = std::max(elapsed, goal);
    deficit_ = std::max(std::chrono::nanoseconds(0), deficit_ + slot - time_slice_);
    return started + slot;
}

}  // namespace toast::server
