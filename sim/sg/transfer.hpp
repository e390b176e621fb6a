// A transfer of simulated bytes from a host to the calling actor's host, as a mailbox communication.
//
// SimGrid 3.32 puts every one-sided communication (Comm::sendto_async) on one engine-wide list and removes
// each finished one from that list by a linear search, so the cost of every finished transfer grew with the
// number of transfers in flight in the whole simulation. A mailbox communication between two actors is only
// on the lists of those two actors. The uploading side of a transfer has no actor of its own (an idle box
// seeds passively; the server is no actor), so each transfer gets a courier: a short-lived actor on the
// sending host that puts the bytes into a mailbox of their own, where the receiving actor already waits.
// Internal to sim/sg.
#pragma once

#include <cstdint>
#include <memory>

#include <simgrid/s4u.hpp>

#include "sim/sg/lane_pool.hpp"

namespace toast::sim {

// What the receiver and the courier of one transfer share.
struct TransferLane {
    simgrid::s4u::Mailbox* mailbox = nullptr;
    bool cancelled = false;  // the receiver dropped it before the courier put anything: the courier does not
    bool sending =
        false;  // the courier's put is matched and running: the communication's remaining bytes count
    // The courier's side while it runs. A running transfer is cancelled through it: cancelling the receiver's
    // side of a running mailbox communication leaks memory in SimGrid 3.32 (tens of KB a transfer).
    simgrid::s4u::CommPtr put;
};

struct Transfer {
    simgrid::s4u::CommPtr comm;  // the receiver's side: wait on it, cancel it, read its remaining bytes
    std::shared_ptr<TransferLane> lane;
    // Bytes still to come (all of them until the courier's put runs: SimGrid reports 0 for a receive not yet
    // matched).
    double remaining(std::uint64_t bytes) const {
        return lane->sending ? comm->get_remaining() : static_cast<double>(bytes);
    }
};

// Starts moving `bytes` from `from` to the calling actor's host; the bytes start at the current simulated
// time, as a one-sided communication's would.
Transfer start_transfer(LanePool& lanes, simgrid::s4u::Host* from, std::uint64_t bytes);

// Cancels a transfer and collects it (SimGrid keeps a cancelled communication in its actor's list until
// someone waits on it).
void drop_transfer(Transfer& t);

}  // namespace toast::sim
