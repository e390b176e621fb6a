#include "sim/sg/transfer.hpp"

namespace toast::sim {

namespace sg4 = simgrid::s4u;

namespace {
// The courier's stack in KiB (Actor::set_stacksize takes KiB): a courier only puts, waits and sleeps. Without
// guard pages SimGrid callocs each stack; at the C library's mmap threshold (make_sim_engine: 128 KiB) a
// stack is a mapping of its own, where only the pages the courier touches are resident (calloc zeroes a
// block it reuses from the heap whole).
constexpr unsigned kCourierStackKiB = 128;
int payload = 0;  // the courier's message carries no data: only its simulated size counts
}  // namespace

// A timed wait on a semaphore, its timeout a kernel timer: what Comm::wait_any's timeout is. The semaphore's
// own timeout is a sleep action of the host's CPU model (a variable of its sharing system, created and freed
// at every wait), several times dearer, and orders the actors it wakes at an instant otherwise. The timer is
// set and removed from the actor's side: SimGrid runs one actor at a time, and the engine reads its timers
// between rounds.
void Inbox::wait(double timeout) {
    if (!arrived.empty() || timeout <= 0) return;
    timer_ = simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + timeout, [this] {
        timer_ = nullptr;  // the engine deletes it
        if (waiting) {
            waiting = false;
            bell->release();
        }
    });
    waiting = true;
    bell->acquire();
    waiting = false;
    if (timer_) {
        timer_->remove();
        timer_ = nullptr;
    }
}

std::shared_ptr<TransferLane> Couriers::start(sg4::Host* from, std::uint64_t bytes,
                                              const std::shared_ptr<Inbox>& to, bool doorbell) {
    auto lane = std::make_shared<TransferLane>();
    lane->doorbell = doorbell;
    lane->mailbox = lanes_.take();
    lane->bytes = bytes;
    lane->to = to;
    // The mailbox's permanent receiver: the courier's put starts at once towards the receiver's host.
    lane->mailbox->set_receiver(to->actor);
    if (!idle_.empty()) {
        auto c = std::move(idle_.back());
        idle_.pop_back();
        c->from = from;
        c->job = lane;
        if (c->waiting) {
            c->waiting = false;
            c->bell->release();
        }
        return lane;
    }
    auto c = std::make_shared<Courier>();
    c->bell = sg4::Semaphore::create(0);
    c->from = from;
    c->job = lane;
    ++created_;
    sg4::Actor::init("courier", from)->set_stacksize(kCourierStackKiB)->start([this, c]() {
        // A daemon: killed when the last actor that is not one ends.
        sg4::Actor::self()->daemonize();
        run(c);
    });
    return lane;
}

void Couriers::carry(Courier& c, const std::shared_ptr<TransferLane>& lane) {
    if (lane->cancelled) return;  // dropped before its courier ran: nothing is put
    lane->put = lane->mailbox->put_async(&payload, lane->bytes);
    lane->sending = true;
    // Dropped while the put was being posted (other actors run meanwhile): it stops at once.
    if (lane->cancelled) lane->put->cancel();
    // Waited on through wait_any, which reaches the communication even once cancelled (wait() would throw
    // at once and leave it on this actor's list) and needs no timeout.
    c.waiting_on[0] = lane->put;
    try {
        sg4::Activity::wait_any(c.waiting_on);
    } catch (const simgrid::Exception&) {
        c.waiting_on[0] = nullptr;
        return;  // cancelled
    }
    c.waiting_on[0] = nullptr;
    lane->arrived = true;
    auto& in = *lane->to;
    if (lane->cancelled || in.closed) return;
    in.arrived.push_back(lane);
    if (in.waiting) {
        in.waiting = false;
        in.bell->release();
    }
}

void Couriers::run(const std::shared_ptr<Courier>& c) {
    while (true) {
        if (auto lane = std::move(c->job)) {
            c->job = nullptr;
            // The put leaves from the actor's host; a courier moves while it has no activity.
            if (sg4::this_actor::get_host() != c->from) sg4::this_actor::set_host(c->from);
            carry(*c, lane);
            // The put's finished communication stays in its mailbox's list of received messages (the
            // mailbox has a permanent receiver) until cleared. The lane lets go of it too: a communication
            // holds its sender.
            if (lane->put) {
                lane->mailbox->clear();
                lane->put = nullptr;
            }
            lanes_.give(lane->mailbox);
            idle_.push_back(c);
            continue;
        }
        c->waiting = true;
        c->bell->acquire();
        c->waiting = false;
    }
}

void drop_transfer(TransferLane& lane) {
    lane.cancelled = true;
    // Through the courier's side only while the bytes still run: a put that has just ended (its courier not
    // yet run again to see it) has nothing left to cancel.
    if (lane.put && !lane.arrived && lane.put->get_remaining() > 0) lane.put->cancel();
}

}  // namespace toast::sim
