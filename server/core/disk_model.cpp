#include "server/core/disk_model.hpp"

#include <algorithm>
#include <cmath>

namespace toast::server {

double model_streams(const DiskArrayModel& array, BitRate bitrate, std::chrono::nanoseconds time_slice,
                     std::size_t stripe) {
    const double r_d = static_cast<double>(array.transfer_rate.value());
    const double t_b = std::chrono::duration<double>(time_slice).count();
    if (r_d <= 0 || t_b <= 0) return 0;
    const double t_a = std::chrono::duration<double>(array.access_time).count();
    const double r_c = static_cast<double>(bitrate.value());
    return static_cast<double>(array.disks) * t_b * r_d /
           (t_a * static_cast<double>(std::max<std::size_t>(1, stripe)) * r_d + r_c * t_b);
}

std::chrono::nanoseconds read_time(std::chrono::nanoseconds access_time, BitRate transfer_rate, Bytes bytes) {
    return access_time + duration_of(bytes, transfer_rate);
}

std::chrono::nanoseconds access_time(const SeekModel& model, double from, double to) {
    const double distance = std::min(1.0, std::abs(std::clamp(to, 0.0, 1.0) - std::clamp(from, 0.0, 1.0)));
    const double fixed = static_cast<double>(model.average_access.count()) -
                         static_cast<double>(model.full_seek.count()) / 3.0;
    const double t = std::max(0.0, fixed) + static_cast<double>(model.full_seek.count()) * distance;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(t)));
}

std::chrono::nanoseconds SeekTiming::service_time(std::uint64_t head, std::uint64_t position,
                                                  std::uint64_t bytes) const {
    constexpr double kStroke = static_cast<double>(kDiskAddressSpace);
    return access_time(seek_, static_cast<double>(head) / kStroke, static_cast<double>(position) / kStroke) +
           duration_of(Bytes(bytes), rate_);
}

EmulatedClock::Slot EmulatedClock::serve(TimePoint arrived, std::chrono::nanoseconds service) {
    const TimePoint start = std::max(free_at_, arrived);
    free_at_ = start + service;
    return {start, free_at_};
}

}  // namespace toast::server
