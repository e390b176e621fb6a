// Which wanted pieces peers can still deliver in time (thesis §5.3: "if a piece in the near future is
// selected and the system has a low upload rate, ... the data will not come fast enough and will need to be
// downloaded from the VoD server anyway"). A piece asked of peers that the server then fetches costs the
// swarm the peers' upload for nothing; with upload below the bitrate, in-order asks for every piece past the
// give-up zone, and most of the peers' bytes would be wasted that way.
//
// Rule: take the wanted pieces by slack (time until the piece enters the server's zone); the k-th of them
// (k from 0) stays wanted only if k + 1 piece deliveries at the measured peer rate fit in its slack. Pieces
// peers have already started are kept (libtorrent finishes them; add_piece writes only missing blocks) and
// count as load. At a peer rate of half the bitrate, in-order ends up asking peers for every other piece
// past the zone, which is what they can carry; the server takes the rest just in time.
#pragma once

#include <chrono>

#include "client/core/piece_policy.hpp"

namespace toast::client {

struct AdmissionResult {
    std::size_t dropped = 0;  // wanted pieces removed from the plan
};

// Removes the undeliverable pieces from `plan` (wanted, priority, deadlines). `zone` is the give-up zone in
// media time from the playhead position; `delivery` the time one piece takes from peers at the measured rate
// (0 or negative: nothing is dropped).
AdmissionResult drop_undeliverable(PiecePlan& plan, const SwarmSnapshot& snapshot,
                                   std::chrono::nanoseconds zone, std::chrono::nanoseconds delivery);

}  // namespace toast::client
