#include "sim/core/box_cache.hpp"

#include <algorithm>
#include <cmath>

namespace toast::sim {

namespace {

std::int64_t to_ms(double seconds) {
    return static_cast<std::int64_t>(std::llround(seconds * 1000));
}

Bytes to_bytes(double bytes) {
    return Bytes(static_cast<std::uint64_t>(std::max(0.0, bytes)));
}

}  // namespace

BoxCache::Entry* BoxCache::find(int title) {
    auto it =
        std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.title == title; });
    return it == entries_.end() ? nullptr : &*it;
}

bool BoxCache::holds(int title) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.title == title; });
}

double BoxCache::bytes() const {
    double total = 0;
    for (const auto& e : entries_)
        total += e.bytes;
    return total;
}

void BoxCache::add_warm(int title, double when) {
    if (auto* e = find(title)) {
        e->bytes = title_bytes_;
        e->last_watched = when;
        return;
    }
    entries_.push_back({title, title_bytes_, when});
}

std::vector<int> BoxCache::make_room(int title, double now, const Context& context) {
    if (!find(title)) entries_.push_back({title, 0, now});
    std::vector<client::CacheEntry> in;
    for (const auto& e : entries_) {
        const bool pinned = e.title == title;
        client::CacheEntry c{.id = std::to_string(e.title),
                             .bytes = to_bytes(pinned ? title_bytes_ : e.bytes),
                             .size = to_bytes(title_bytes_),
                             .last_watched = to_ms(e.last_watched),
                             .pinned = pinned};
        if (policy_ == client::CachePolicy::popularity) {
            c.demand = context.demand ? context.demand(e.title) : 0.0;
            c.copies = context.copies ? context.copies(e.title) : 0;
            c.bitrate = BitRate(static_cast<std::uint64_t>(context.bitrate_bps));
            c.duration_s = context.duration_s;
            c.upload = BitRate(static_cast<std::uint64_t>(context.upload_bps));
        }
        in.push_back(std::move(c));
    }
    const auto plan = client::plan_cache_evictions(std::move(in), to_bytes(quota_), policy_);
    std::vector<int> evicted;
    for (const auto& id : plan.evict) {
        const int t = std::stoi(id);
        evicted.push_back(t);
        entries_.erase(
            std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.title == t; }));
    }
    return evicted;
}

std::vector<int> BoxCache::session_ended(int title, double bytes, double now) {
    if (!client::keeps_watched_titles(policy_)) {
        std::erase_if(entries_, [&](const Entry& e) { return e.title == title; });
        return {title};
    }
    if (auto* e = find(title)) {
        e->bytes = bytes;
        e->last_watched = now;
    } else {
        entries_.push_back({title, bytes, now});
    }
    return {};
}

}  // namespace toast::sim
