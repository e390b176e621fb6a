#include "server/core/stream_schedule.hpp"

#include <algorithm>

namespace toast::server {

namespace {

// Chunk 0 = rounds 0 and 1, chunk j = round j + 1.
StreamSchedule from_rounds(const std::vector<std::uint64_t>& rounds, std::chrono::nanoseconds round) {
    StreamSchedule s;
    s.round = round;
    if (rounds.empty()) return s;
    s.chunks.push_back(rounds[0] + (rounds.size() > 1 ? rounds[1] : 0));
    for (std::size_t k = 2; k < rounds.size(); ++k)
        s.chunks.push_back(rounds[k]);
    return s;
}

}  // namespace

std::uint64_t StreamSchedule::total() const {
    std::uint64_t t = 0;
    for (auto c : chunks)
        t += c;
    return t;
}

std::uint64_t StreamSchedule::offset_of(std::size_t chunk) const {
    std::uint64_t t = 0;
    for (std::size_t j = 0; j < chunk && j < chunks.size(); ++j)
        t += chunks[j];
    return t;
}

namespace {

std::vector<std::uint64_t> constant_rounds(std::uint64_t size, BitRate bitrate,
                                           std::chrono::nanoseconds round) {
    const std::uint64_t per_round = std::max<std::uint64_t>(1, bytes_in(bitrate, round).value());
    std::vector<std::uint64_t> rounds;
    for (std::uint64_t left = size; left > 0;) {
        const auto n = std::min(left, per_round);
        rounds.push_back(n);
        left -= n;
    }
    return rounds;
}

std::optional<std::vector<std::uint64_t>> trace_rounds(const DemandTrace& trace, std::uint64_t size,
                                                       std::chrono::nanoseconds round) {
    if (trace.total() != size || trace.round.count() <= 0) return std::nullopt;
    if (trace.round == round) return trace.bytes;
    return resample(trace, round).bytes;
}

}  // namespace

StreamSchedule constant_rate_schedule(std::uint64_t size, BitRate bitrate, std::chrono::nanoseconds round) {
    return from_rounds(constant_rounds(size, bitrate, round), round);
}

std::optional<StreamSchedule> trace_schedule(const DemandTrace& trace, std::uint64_t size,
                                             std::chrono::nanoseconds round) {
    auto rounds = trace_rounds(trace, size, round);
    if (!rounds) return std::nullopt;
    return from_rounds(*rounds, round);
}

std::vector<std::uint64_t> paced_rounds(std::uint64_t size, BitRate bitrate, const DemandTrace* trace,
                                        std::chrono::nanoseconds round) {
    if (trace) {
        if (auto rounds = trace_rounds(*trace, size, round)) return std::move(*rounds);
    }
    return constant_rounds(size, bitrate, round);
}

StreamSchedule title_schedule(std::uint64_t size, BitRate bitrate, const DemandTrace* trace,
                              std::chrono::nanoseconds round) {
    return from_rounds(paced_rounds(size, bitrate, trace, round), round);
}

}  // namespace toast::server
