#include "client/core/peer_admission.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace toast::client {

using std::chrono::nanoseconds;

AdmissionResult drop_undeliverable(PiecePlan& plan, const SwarmSnapshot& snapshot, nanoseconds zone,
                                   nanoseconds delivery) {
    AdmissionResult result;
    if (delivery.count() <= 0 || plan.wanted.empty()) return result;
    // Slack of each wanted piece, in the order peers would have to deliver them.
    std::vector<std::pair<nanoseconds, PieceIndex>> by_slack;
    by_slack.reserve(plan.wanted.size());
    for (auto p : plan.wanted)
        by_slack.emplace_back(nanoseconds(snapshot.time_until_needed(p)) - zone, p);
    std::stable_sort(by_slack.begin(), by_slack.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    PieceSet dropped(snapshot.piece_count);
    std::int64_t load = 0;  // deliveries ahead of and including this piece
    for (const auto& [slack, p] : by_slack) {
        bool started = snapshot.in_flight.contains_index(p) && snapshot.in_flight.has(p);
        // A piece the server refused is asked of peers however late: nobody else will send it.
        if (!started && !snapshot.refused.has(p) && slack < delivery * (load + 1)) {
            dropped.set(p);
            ++result.dropped;
            continue;
        }
        ++load;
    }
    if (result.dropped > 0) drop_from_plan(plan, dropped);
    return result;
}

}  // namespace toast::client
