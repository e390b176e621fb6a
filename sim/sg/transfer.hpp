// A transfer of simulated bytes from a host to a receiving actor's host, as a mailbox communication, and how
// its receiver learns that it ended.
//
// SimGrid 3.32 puts every one-sided communication (Comm::sendto_async) on one engine-wide list and removes
// each finished one from that list by a linear search, so the cost of every finished transfer grew with the
// number of transfers in flight in the whole simulation. A mailbox communication is only on the lists of the
// actors that posted it. The uploading side of a transfer has no actor of its own (an idle box seeds
// passively; the server is no actor), so transfers are put by couriers: long-lived actors that move to the
// sending host, each putting one transfer at a time and waiting on that one communication alone.
//
// The receiver waits on one object, its Inbox, not on its transfers: the courier of a transfer hands it to
// the receiver's inbox when its bytes have arrived and wakes the receiver if it sleeps. A receiving actor
// waiting on all its transfers at once (Comm::wait_any) registers on and unregisters from each of them at
// every wait, and SimGrid removes each finished one from the actor's list of communications by a linear
// search. The receiver posts no receive: the transfer's mailbox names it as its permanent receiver, so the
// courier's put starts at once towards the receiver's host, as a matched rendez-vous would. Internal to
// sim/sg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include "sim/sg/lane_pool.hpp"

namespace toast::sim {

struct TransferLane;

// Where a receiving actor's transfers arrive: the one object it waits on.
struct Inbox {
    explicit Inbox(simgrid::s4u::ActorPtr receiver)
        : actor(std::move(receiver)), bell(simgrid::s4u::Semaphore::create(0)) {}
    simgrid::s4u::ActorPtr actor;  // the receiving actor: its host is where the bytes go
    simgrid::s4u::SemaphorePtr bell;
    bool waiting = false;  // asleep on the bell: an arrival (or the wait's timer) rings it
    bool closed = false;   // the receiver is gone: arrivals are dropped
    std::vector<std::shared_ptr<TransferLane>> arrived;  // in the order they arrived, not yet taken

    // Waits until something arrives or `timeout` seconds pass; returns at once if something is here.
    void wait(double timeout);

  private:
    simgrid::kernel::timer::Timer* timer_ = nullptr;  // the running wait's timeout
};

// What the receiver and the courier of one transfer share.
struct TransferLane {
    simgrid::s4u::Mailbox* mailbox = nullptr;
    std::uint64_t bytes = 0;
    std::shared_ptr<Inbox> to;
    bool doorbell = false;   // a doorbell's ring (World::poke): no bytes, no flow of the receiver's
    bool cancelled = false;  // the receiver dropped it: the courier puts nothing more and delivers nothing
    bool sending = false;    // the courier's put runs: its remaining bytes count
    bool arrived = false;    // all its bytes are here (handed to the inbox)
    // The courier's side. A running transfer is cancelled through it (the only side there is).
    simgrid::s4u::CommPtr put;

    // Bytes still to come (all of them until the courier's put runs).
    double remaining() const {
        if (!sending) return static_cast<double>(bytes);
        return put && !arrived ? put->get_remaining() : 0.0;  // let go of by its courier: ended
    }
};

// The couriers of a simulation: one pool of actors that live as long as the simulation and carry transfers
// from any host (creating an actor per transfer cost about 25 us of CPU each). A courier carries one
// transfer at a time: it moves to the transfer's sending host (Actor::set_host; it has no activity then),
// puts the bytes, waits on that one communication, hands it to the receiver's inbox, and goes back to the
// pool; the pool grows to the most transfers in flight at once. A pool over all hosts needs fewer couriers
// than couriers of each host, and none is created or freed once the pool has grown.
class Couriers {
  public:
    Couriers() = default;
    Couriers(const Couriers&) = delete;
    Couriers& operator=(const Couriers&) = delete;

    // Starts moving `bytes` from `from` to `to`'s actor; the bytes start at the current simulated time, as a
    // one-sided communication's would, and the lane lands in `to->arrived` when they are all there.
    std::shared_ptr<TransferLane> start(simgrid::s4u::Host* from, std::uint64_t bytes,
                                        const std::shared_ptr<Inbox>& to, bool doorbell = false);

    std::size_t mailboxes() const { return lanes_.named(); }
    std::size_t created() const { return created_; }
    std::size_t idle() const { return idle_.size(); }

  private:
    struct Courier {
        simgrid::s4u::SemaphorePtr bell;
        bool waiting = false;                                           // asleep on the bell
        simgrid::s4u::Host* from = nullptr;                             // where its job's bytes leave
        std::shared_ptr<TransferLane> job;                              // handed to it, not yet done
        std::vector<simgrid::s4u::ActivityPtr> waiting_on = {nullptr};  // its put, when it waits
    };
    void run(const std::shared_ptr<Courier>& c);
    void carry(Courier& c, const std::shared_ptr<TransferLane>& lane);

    LanePool lanes_;
    std::vector<std::shared_ptr<Courier>> idle_;  // the last to finish first
    std::size_t created_ = 0;
};

// Drops a transfer: a running one is cancelled through its courier's side, one not yet put is never put. The
// lane never arrives.
void drop_transfer(TransferLane& lane);

}  // namespace toast::sim
