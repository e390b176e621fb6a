// The seed-style choker used while downloading (thesis §5.3, Fig. 5.7): rank interested peers by how fast we
// upload to them, not by how fast they upload to us, keep the fastest `slots` unchoked and rotate one
// optimistic slot through the rest so a newcomer gets a chance to show its rate. Pure: the plugin feeds it
// one snapshot per tick and applies the answer with choke_this_peer / maybe_unchoke_this_peer.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace toast::client {

struct ChokeCandidate {
    std::uint64_t id = 0;          // stable per connection, assigned by the plugin
    std::int64_t upload_rate = 0;  // bytes/s we send to this peer
    bool interested = false;
};

struct SeedChokerState {
    std::uint64_t optimistic_id = 0;  // the peer holding the optimistic slot (0: none)
    int ticks_left = 0;               // ticks until the optimistic slot rotates
};

// Returns the ids to keep unchoked. Ties in rate are broken by id so the result is deterministic.
// `rotate_every` ticks the optimistic slot moves to the next choked interested peer (by id, wrapping).
std::set<std::uint64_t> seed_choker_unchoke_set(const std::vector<ChokeCandidate>& peers, int slots,
                                                int rotate_every, SeedChokerState& state);

}  // namespace toast::client
