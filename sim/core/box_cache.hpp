// What a catalogue box keeps of the titles it watched, decided by the service's own cache policy
// (client/core/cache_policy: none, lru, popularity) as `toast-client serve` applies it: when a session
// starts, room is made for its title (whole and pinned) by the policy's evictions past the disk quota; when
// it ends the title stays with what was downloaded of it, except with "none", where the app removes it.
// Titles a box holds by push are not the cache's until they are played (the caller keeps them apart). Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/core/cache_policy.hpp"

namespace toast::sim {

class BoxCache {
  public:
    // What the popularity policy reads of a title, as the service reads it from the server's catalogue
    // (demand, sessions started per hour) and the tracker (copies: the other boxes holding it).
    struct Context {
        std::function<double(int)> demand;
        std::function<std::int64_t(int)> copies;
        double bitrate_bps = 0;
        double duration_s = 0;
        double upload_bps = 0;  // the box's
    };

    BoxCache(client::CachePolicy policy, double quota_bytes, double title_bytes)
        : policy_(policy), quota_(quota_bytes), title_bytes_(title_bytes) {}

    struct Entry {
        int title = 0;
        double bytes = 0;
        double last_watched = 0;  // seconds
    };
    // A title held whole before the evening, watched at `when`.
    void add_warm(int title, double when);
    // A session of `title` starts at `now`: the titles to evict first (the policy's plan), nothing when it
    // fits. The title is the cache's from now on.
    std::vector<int> make_room(int title, double now, const Context& context);
    // The session of `title` ended at `now` holding `bytes` of it: the titles to remove (with "none",
    // itself).
    std::vector<int> session_ended(int title, double bytes, double now);

    bool holds(int title) const;
    double bytes() const;
    const std::vector<Entry>& entries() const { return entries_; }
    client::CachePolicy policy() const { return policy_; }

  private:
    Entry* find(int title);

    client::CachePolicy policy_;
    double quota_;
    double title_bytes_;
    std::vector<Entry> entries_;
};

}  // namespace toast::sim
