#include "client/lt/seed_choker.hpp"

#include <algorithm>

namespace toast::client {

std::set<std::uint64_t> seed_choker_unchoke_set(const std::vector<ChokeCandidate>& peers, int slots,
                                                int rotate_every, SeedChokerState& state) {
    std::vector<ChokeCandidate> interested;
    for (const auto& p : peers) {
        if (p.interested) interested.push_back(p);
    }
    std::sort(interested.begin(), interested.end(), [](const ChokeCandidate& a, const ChokeCandidate& b) {
        if (a.upload_rate != b.upload_rate) return a.upload_rate > b.upload_rate;
        return a.id < b.id;
    });
    std::set<std::uint64_t> unchoke;
    std::size_t regular = static_cast<std::size_t>(std::max(slots, 0));
    for (std::size_t i = 0; i < interested.size() && i < regular; ++i)
        unchoke.insert(interested[i].id);

    // The rest, by id, are the candidates for the optimistic slot.
    std::vector<std::uint64_t> rest;
    for (std::size_t i = regular; i < interested.size(); ++i)
        rest.push_back(interested[i].id);
    std::sort(rest.begin(), rest.end());
    if (rest.empty()) {
        state = {};
        return unchoke;
    }
    bool holder_valid = std::find(rest.begin(), rest.end(), state.optimistic_id) != rest.end();
    if (!holder_valid || state.ticks_left <= 0) {
        // Next id after the current holder, wrapping around.
        auto next = std::upper_bound(rest.begin(), rest.end(), state.optimistic_id);
        state.optimistic_id = next == rest.end() ? rest.front() : *next;
        state.ticks_left = std::max(rotate_every, 1);
    }
    --state.ticks_left;
    unchoke.insert(state.optimistic_id);
    return unchoke;
}

}  // namespace toast::client
