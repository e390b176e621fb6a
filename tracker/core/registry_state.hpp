// What the tracker keeps across a restart: every swarm's peers and completed count as plain values, and
// their encoding as a JSON state file. Pure: no files, no clocks; times are ages relative to the moment of
// the export, so a state means the same whichever clock reads it back.
//
// The encoding (version 1), hashes and peer ids as lowercase hex, addresses as text:
//   {"format": "toast-tracker-state", "version": 1, "saved_at_unix_ms": 1764000000000,
//    "swarms": [{"info_hash": "<40 hex>", "completed": 3, "idle_ms": 1200,
//                "seeders": [{"peer_id": "<40 hex>", "ip": "10.0.0.1", "port": 6881, "age_ms": 4000}],
//                "leechers": [{...}, {..., "partial": true}]}]}
// Lists keep their order: leechers are listed in join order, which the neighbour introductions rely on.
// A partial seed (BEP 21) is listed among the leechers, at its place, with "partial": true; absent: false.
// Keys the decoder does not know are ignored, so a later tracker may add fields within version 1.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/core/ids.hpp"
#include "tracker/core/result.hpp"

namespace toast::tracker {

struct PeerState {
    PeerId id;
    PeerEndpoint endpoint;
    std::chrono::milliseconds age{0};  // since its last announce
    bool partial = false;              // a partial seed (BEP 21), listed among the leechers
    bool operator==(const PeerState&) const = default;
};

struct SwarmState {
    InfoHash info_hash;
    std::uint64_t completed = 0;
    std::chrono::milliseconds idle{0};  // since the swarm's last announce
    std::vector<PeerState> seeders{};   // in list order
    std::vector<PeerState> leechers{};  // in join order
    bool operator==(const SwarmState&) const = default;
};

struct RegistryState {
    std::vector<SwarmState> swarms;  // in info-hash order when exported
    bool operator==(const RegistryState&) const = default;
};

struct DecodedState {
    RegistryState state;
    std::int64_t saved_at_unix_ms = 0;
};

// What SwarmRegistry::import_state did with a state.
struct ImportCounts {
    std::size_t swarms = 0;                  // restored (created, or merged into one already held)
    std::size_t peers = 0;                   // restored
    std::size_t swarms_not_whitelisted = 0;  // refused by the whitelist, with their peers
    std::size_t swarms_over_limit = 0;       // beyond max_swarms, with their peers
    std::size_t swarms_expired = 0;          // idle past peer_expiry with no peer left
    std::size_t peers_expired = 0;           // silent past peer_expiry by now
    std::size_t peers_duplicate = 0;         // a (peer id, IP) already restored in that swarm
    std::size_t peers_refused = 0;           // in swarms refused by the whitelist or max_swarms
};

// Ages below this are accepted by decode_state; anything older is long past any peer_expiry (at most a
// week), and the bound keeps every later time computation far from overflow.
inline constexpr std::chrono::milliseconds kMaxStateAge = std::chrono::hours(24 * 365);

std::string encode_state(const RegistryState& state, std::int64_t saved_at_unix_ms);

// Never throws; any input that is not a well-formed version 1 state is refused with what is wrong and
// where, e.g. "swarms[3].leechers[2].port: value 70000 is outside [1, 65535]".
Result<DecodedState, std::string> decode_state(std::string_view text);

}  // namespace toast::tracker
