#include "server/core/demand_trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "server/core/demand_trace_units.hpp"

namespace toast::server {

namespace trace_detail {

DemandTrace build_trace(std::vector<Unit>& units, std::uint64_t prefix, std::uint64_t file_size,
                        std::chrono::nanoseconds round) {
    DemandTrace trace;
    trace.round = round;
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (const auto& u : units)
        origin = std::min(origin, u.time_ns);
    std::size_t rounds = 1;
    for (const auto& u : units)
        rounds =
            std::max<std::size_t>(rounds, static_cast<std::size_t>((u.time_ns - origin) / round.count()) + 1);
    std::vector<std::uint64_t> need(rounds, 0);
    need[0] = std::min(prefix, file_size);
    for (const auto& u : units) {
        auto k = static_cast<std::size_t>((u.time_ns - origin) / round.count());
        need[k] = std::max(need[k], std::min(u.end, file_size));
    }
    need.back() = file_size;
    trace.bytes.resize(rounds);
    std::uint64_t before = 0;
    for (std::size_t k = 0; k < rounds; ++k) {
        const auto now = std::max(before, need[k]);
        trace.bytes[k] = now - before;
        before = now;
    }
    return trace;
}

TraceResult failure(std::string message) {
    return TraceResult{std::nullopt, std::move(message)};
}

}  // namespace trace_detail

using trace_detail::failure;
using trace_detail::kTsPacket;
using trace_detail::kTsSync;

std::uint64_t DemandTrace::total() const {
    std::uint64_t t = 0;
    for (auto b : bytes)
        t += b;
    return t;
}

BitRate DemandTrace::average_rate() const {
    if (bytes.empty() || round.count() <= 0) return BitRate(0);
    const long double seconds = static_cast<long double>(round.count()) * bytes.size() / 1e9L;
    return BitRate(static_cast<std::uint64_t>(static_cast<long double>(total()) * 8.0L / seconds + 0.5L));
}

BitRate DemandTrace::peak_rate() const {
    if (bytes.empty() || round.count() <= 0) return BitRate(0);
    const auto peak = *std::max_element(bytes.begin(), bytes.end());
    return BitRate(static_cast<std::uint64_t>(
        static_cast<long double>(peak) * 8.0L * 1e9L / static_cast<long double>(round.count()) + 0.5L));
}

std::uint64_t DemandTrace::needed_by(std::size_t round_index) const {
    std::uint64_t t = 0;
    for (std::size_t k = 0; k < bytes.size() && k <= round_index; ++k)
        t += bytes[k];
    return t;
}

std::string_view to_string(MediaContainer c) {
    switch (c) {
        case MediaContainer::mpeg_ts:
            return "MPEG-TS";
        case MediaContainer::mp4:
            return "MP4";
        default:
            return "unknown";
    }
}

MediaContainer detect_container(std::span<const std::uint8_t> file) {
    if (file.size() >= kTsPacket && file[0] == kTsSync) {
        bool all = true;
        for (std::size_t at = kTsPacket; at < std::min<std::size_t>(file.size(), 3 * kTsPacket);
             at += kTsPacket)
            all = all && file[at] == kTsSync;
        if (all) return MediaContainer::mpeg_ts;
    }
    if (file.size() >= 8) {
        const std::string_view type(reinterpret_cast<const char*>(file.data()) + 4, 4);
        for (std::string_view t : {"ftyp", "moov", "mdat", "free", "skip", "wide"})
            if (type == t) return MediaContainer::mp4;
    }
    return MediaContainer::unknown;
}

TraceResult extract_demand_trace(std::span<const std::uint8_t> file, std::chrono::nanoseconds round) {
    switch (detect_container(file)) {
        case MediaContainer::mpeg_ts:
            return extract_ts_trace(file, round);
        case MediaContainer::mp4:
            return extract_mp4_trace(file, round);
        default:
            return failure("neither an MPEG transport stream nor an MP4 file");
    }
}

DemandTrace resample(const DemandTrace& trace, std::chrono::nanoseconds round) {
    DemandTrace out;
    out.round = round;
    if (trace.bytes.empty() || trace.round.count() <= 0) return out;
    const auto old_round = static_cast<long double>(trace.round.count());
    const auto duration = old_round * static_cast<long double>(trace.bytes.size());
    const auto count =
        static_cast<std::size_t>(std::ceil(duration / static_cast<long double>(round.count())));
    out.bytes.resize(std::max<std::size_t>(1, count));
    std::uint64_t before = 0;
    std::size_t old = 0;
    std::uint64_t cumulative = 0;
    for (std::size_t m = 0; m < out.bytes.size(); ++m) {
        // Old rounds that start before this new round ends: start k * r < (m + 1) * R.
        const long double end = static_cast<long double>(m + 1) * round.count();
        while (old < trace.bytes.size() && static_cast<long double>(old) * old_round < end)
            cumulative += trace.bytes[old++];
        out.bytes[m] = cumulative - before;
        before = cumulative;
    }
    out.bytes.back() += trace.total() - before;
    return out;
}

}  // namespace toast::server
