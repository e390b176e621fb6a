// What an idle box keeps of the titles it watched (`toast-client serve --cache`), decided purely: which
// stopped titles leave when the disk quota is exceeded.
//   none:       nothing is kept: a title is removed when its play stops.
//   lru:        titles stay and seed; the least recently watched leave first.
//   popularity: titles stay and seed; the ones the swarm needs least per byte leave first. A title's need is
//               what its viewers would still lack at the boxes' upload with the copies the swarm has:
//               max(0, V x bitrate - (V + copies) x u), with V its expected viewers (its demand, sessions
//               started per hour from the operator's catalogue, times its duration), copies the other boxes
//               holding it (as the tracker counts them) and u the box's upload (a quarter of the bitrate when
//               unknown), per byte of the title. Ties (no catalogue, or every title's need met) go by
//               demand / (copies + 1) per byte, then least recently watched first, then by id.
// A playing title, and the title a play makes room for, are never evicted. Titles the box holds by push
// assignment are not the cache's: they count against the push quota (push_fetch_policy.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/service_titles.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

enum class CachePolicy { none, lru, popularity };
std::optional<CachePolicy> parse_cache_policy(std::string_view text);
std::string_view to_string(CachePolicy policy);

struct CacheEntry {
    std::string id;
    Bytes bytes{0};                 // on disk now (a playing title: its whole size)
    Bytes size{0};                  // the title's whole size
    std::int64_t last_watched = 0;  // unix ms; a title never watched: when it was added
    bool pinned = false;
    double demand = 0;        // sessions started per hour; 0 when the catalogue does not say
    std::int64_t copies = 0;  // other boxes holding the title (complete or not); 0 when unknown
    BitRate bitrate{0};
    double duration_s = 0;  // the title's
    BitRate upload{0};      // the box's; 0: unknown
};

// What the title's swarm lacks in bits per second with the copies it has, per byte of the title.
double need_per_byte(const CacheEntry& entry);

// The titles to evict, in order, so that the rest plus `incoming` bytes fit in `quota`. Evicts nothing when
// they fit already; when even evicting every unpinned title is not enough, evicts nothing and says so.
// Pinned titles (playing, or the one the room is made for) never go; ties go by id.
EvictionPlan plan_cache_evictions(std::vector<CacheEntry> titles, Bytes quota, CachePolicy policy,
                                  Bytes incoming = Bytes(0));

// Each title's demand by info-hash from the server's catalogue (GET /catalog: titles[].info_hash, .demand);
// titles without either are left out. nullopt when the text is not a catalogue.
std::optional<std::map<std::string, double>> parse_catalog_demand(std::string_view text);

// Whether a title stays once its play stops.
constexpr bool keeps_watched_titles(CachePolicy policy) {
    return policy != CachePolicy::none;
}

}  // namespace toast::client
