// A transfer of simulated bytes from a host to the calling actor's host, as a mailbox communication.
//
// SimGrid 3.32 puts every one-sided communication (Comm::sendto_async) on one engine-wide list and removes
// each finished one from that list by a linear search, so the cost of every finished transfer grew with the
// number of transfers in flight in the whole simulation. A mailbox communication between two actors is only
// on the lists of those two actors. The uploading side of a transfer has no actor of its own (an idle box
// seeds passively; the server is no actor), so transfers are put by couriers: long-lived actors on the
// sending hosts, each putting the bytes of the transfers handed to it into a mailbox of the transfer's own,
// where the receiving actor already waits. Internal to sim/sg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/sg/lane_pool.hpp"

namespace toast::sim {

// What the receiver and the courier of one transfer share.
struct TransferLane {
    simgrid::s4u::Mailbox* mailbox = nullptr;
    std::uint64_t bytes = 0;
    bool cancelled = false;  // the receiver dropped it before the courier put anything: the courier does not
    bool sending =
        false;  // the courier's put is matched and running: the communication's remaining bytes count
    bool received = false;  // the receiver is done with it (whole or dropped): the courier may collect it
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

// The couriers of a simulation: on each sending host, actors that live across transfers (creating an actor
// per transfer cost about 25 us of CPU each). A courier puts every transfer handed to it at once, then sleeps
// until the next one; it collects its finished puts (SimGrid keeps each on the putting actor's list until
// that actor waits on it) when it next wakes, and ends after `idle_s` simulated seconds with nothing to do
// and nothing in flight (the next transfer from its host starts a new one). A host gets another courier when
// its couriers each have `max_load` transfers in hand (a put's collection searches its courier's list).
class Couriers {
  public:
    explicit Couriers(double idle_s = 60.0, std::size_t max_load = 32)
        : idle_s_(idle_s), max_load_(max_load) {}
    Couriers(const Couriers&) = delete;
    Couriers& operator=(const Couriers&) = delete;

    // Starts moving `bytes` from `from` to the calling actor's host; the bytes start at the current simulated
    // time, as a one-sided communication's would.
    Transfer start(simgrid::s4u::Host* from, std::uint64_t bytes);

    std::size_t mailboxes() const { return lanes_.named(); }
    std::size_t alive() const { return alive_; }
    std::uint64_t created() const { return created_; }

  private:
    struct Courier {
        simgrid::s4u::Host* host = nullptr;
        simgrid::s4u::SemaphorePtr bell;
        bool waiting = false;                             // asleep on the bell: a new transfer rings it
        std::vector<std::shared_ptr<TransferLane>> jobs;  // handed to it, not yet put
        std::vector<std::shared_ptr<TransferLane>> out;   // put, not yet collected
        std::size_t load() const { return jobs.size() + out.size(); }
    };
    Courier& courier_for(simgrid::s4u::Host* from);
    void run(const std::shared_ptr<Courier>& c);
    void put_jobs(Courier& c);
    void collect(Courier& c);

    LanePool lanes_;
    std::unordered_map<simgrid::s4u::Host*, std::vector<std::shared_ptr<Courier>>> by_host_;
    double idle_s_;
    std::size_t max_load_;
    std::size_t alive_ = 0;
    std::uint64_t created_ = 0;
};

// Cancels a transfer and collects it (SimGrid keeps a cancelled communication in its actor's list until
// someone waits on it). The receiver then sets `received`, as for a transfer whose bytes all arrived.
void drop_transfer(Transfer& t);

}  // namespace toast::sim
