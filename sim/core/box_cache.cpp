#include "sim/core/box_cache.hpp"

#include <algorithm>

namespace toast::sim {

bool BoxCache::holds(int title) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.title == title; });
}

double BoxCache::bytes() const {
    double total = 0;
    for (const auto& e : entries_)
        total += e.bytes;
    return total;
}

std::vector<int> BoxCache::keep(int title, double bytes, double now) {
    std::vector<int> dropped;
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.title == title; });
    if (policy_ == "none" || bytes > quota_) {
        if (it != entries_.end()) entries_.erase(it);
        if (bytes > 0) dropped.push_back(title);
        return dropped;
    }
    if (it == entries_.end()) {
        entries_.push_back({title, bytes, now});
    } else {
        it->bytes = bytes;
        it->last_used = now;
    }
    while (this->bytes() > quota_) {
        // The victim among the others: oldest use (lru) or least popular (highest rank; ties: oldest use).
        auto victim = entries_.end();
        for (auto e = entries_.begin(); e != entries_.end(); ++e) {
            if (policy_ != "popularity" && e->title == title) continue;
            if (victim == entries_.end()) {
                victim = e;
                continue;
            }
            const bool better = policy_ == "popularity"
                                    ? (e->title > victim->title ||
                                       (e->title == victim->title && e->last_used < victim->last_used))
                                    : e->last_used < victim->last_used;
            if (better) victim = e;
        }
        if (victim == entries_.end()) break;
        dropped.push_back(victim->title);
        entries_.erase(victim);
    }
    return dropped;
}

}  // namespace toast::sim
