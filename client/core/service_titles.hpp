// The set-top-box service's decisions about its titles, pure: what a command does to a title's state, which
// titles leave when the disk quota is exceeded, and the saved list the service resumes from after a restart.
//
// A title is `stopped` (in the session, seeding the pieces it has, downloading nothing) or `playing` (a
// StreamController drives it and a player endpoint serves it). Titles watched earlier stay and seed within
// the disk quota; when room is needed, the least recently watched stopped titles are evicted first. A playing
// title is never evicted and holds its whole size (it will download it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toast/common/units.hpp"

namespace toast::client {

enum class TitleState { stopped, playing, removed };
enum class TitleCommand { play, stop, remove };

std::string_view to_string(TitleState s);

struct TitleTransition {
    TitleState next = TitleState::stopped;
    bool changed = false;  // false: the title already was where the command leads (play while playing)
    int status = 200;      // 409 when the command makes no sense in this state
    std::string error;     // set with a 4xx status
};

TitleTransition transition(TitleState from, TitleCommand command);

struct EvictionPlan {
    std::vector<std::string> evict;  // in eviction order (the cache policy's; see cache_policy.hpp)
    Bytes used_after{0};             // the titles that stay, with `incoming`
    bool fits = true;                // used_after <= quota
};

// What the service remembers of a title across restarts; its torrent and resume point are files beside it.
struct SavedTitle {
    std::string id;  // info-hash, 40 hex digits
    std::string name;
    std::int64_t added = 0;         // unix ms
    std::int64_t last_watched = 0;  // unix ms, 0 when never played
    // Held by push assignment and not watched since: counts against the push quota, not the disk quota.
    bool pushed = false;
    bool operator==(const SavedTitle&) const = default;
};

std::string format_saved_titles(const std::vector<SavedTitle>& titles);
// nullopt with `error` naming the entry and the field when the text is not a saved title list.
std::optional<std::vector<SavedTitle>> parse_saved_titles(std::string_view text,
                                                          std::string* error = nullptr);

}  // namespace toast::client
