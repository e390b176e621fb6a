#include "server/core/disk_queue.hpp"

namespace toast::server {

std::optional<QueueOrder> parse_queue_order(std::string_view text) {
    if (text == "fifo") return QueueOrder::fifo;
    if (text == "cscan") return QueueOrder::cscan;
    if (text == "edf") return QueueOrder::edf;
    return std::nullopt;
}

std::string_view to_string(QueueOrder order) {
    switch (order) {
        case QueueOrder::cscan:
            return "cscan";
        case QueueOrder::edf:
            return "edf";
        default:
            return "fifo";
    }
}

bool edf_fits(std::span<const QueuedWork> queued, double busy_seconds,
              std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point deadline,
              double seconds) {
    using Seconds = std::chrono::duration<double>;
    double t = busy_seconds;  // seconds from now until the read under consideration finishes
    bool placed = false;
    for (const auto& w : queued) {
        if (!placed && (!w.deadline || deadline < *w.deadline)) {
            t += seconds;
            if (now + Seconds(t) > deadline) return false;
            placed = true;
        }
        t += w.seconds;
        // A read the new one would make late; one that is late even without it does not count against it.
        if (placed && w.deadline && now + Seconds(t) > *w.deadline &&
            now + Seconds(t - seconds) <= *w.deadline)
            return false;
    }
    if (!placed) {
        t += seconds;
        if (now + Seconds(t) > deadline) return false;
    }
    return true;
}

}  // namespace toast::server
