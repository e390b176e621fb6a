// What a catalogue box keeps of the titles it watched, within its disk quota: the scenario's cache policy
// ("none": nothing stays after a session; "lru": the least recently watched title goes first; "popularity":
// the least popular title goes first, popularity being the catalogue's rank, which a box learns from its
// tracker's swarm counts). Titles are kept or dropped whole. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace toast::sim {

class BoxCache {
  public:
    BoxCache(std::string policy, double quota_bytes) : policy_(std::move(policy)), quota_(quota_bytes) {}

    struct Entry {
        int title = 0;
        double bytes = 0;
        double last_used = 0;
    };
    // Records `title` holding `bytes` as used at `now`. Returns the titles to drop (possibly `title` itself,
    // when it alone passes the quota or the policy keeps nothing), the rest stays.
    std::vector<int> keep(int title, double bytes, double now);
    bool holds(int title) const;
    double bytes() const;
    const std::vector<Entry>& entries() const { return entries_; }

  private:
    std::string policy_;
    double quota_;
    std::vector<Entry> entries_;
};

}  // namespace toast::sim
