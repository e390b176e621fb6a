#include "sim/core/request_pipeline.hpp"

#include <algorithm>
#include <cmath>

namespace toast::sim {

void RequestPipeline::on_rate(double bytes_per_second, double seconds, bool unchoked) {
    if (!(seconds > 0)) return;
    const double bytes = std::max(0.0, bytes_per_second) * seconds;
    // peer_connection::second_tick: a second that grew by no more than the slack ends slow start, unless
    // the peer chokes us (no requests could have gone out to ramp up) or nothing came the second before.
    if (slow_start_ && unchoked && last_second_bytes_ > 0 && last_second_bytes_ + kSlowStartSlack >= bytes)
        slow_start_ = false;
    last_second_bytes_ = bytes;
}

int RequestPipeline::depth(double bytes_per_second, std::uint64_t delivered) const {
    double blocks =
        slow_start_
            ? kInitial + static_cast<double>(delivered / kBlock)
            : std::floor(kQueueSeconds * std::max(0.0, bytes_per_second) / static_cast<double>(kBlock));
    return static_cast<int>(std::clamp(blocks, static_cast<double>(kMin), static_cast<double>(kMax)));
}

}  // namespace toast::sim
