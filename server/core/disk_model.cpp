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

EmulatedDisk::TimePoint EmulatedDisk::serve(TimePoint arrived, Bytes bytes, double position,
                                            std::chrono::nanoseconds extra) {
    const TimePoint start = std::max(free_at_, arrived);
    free_at_ = start + extra + access_time(seek_, head_, position) + duration_of(bytes, rate_);
    head_ = position;
    return free_at_;
}

double block_position(std::string_view file) {
    // FNV-1a, then a 64-bit finaliser (splitmix) so similar names land far apart.
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : file) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace toast::server
