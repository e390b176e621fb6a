#include "sim/sg/transfer.hpp"

#include <algorithm>

namespace toast::sim {

namespace sg4 = simgrid::s4u;

namespace {
// The courier's stack: it only puts, waits and sleeps (the viewers' is contexts/stack-size, 256 KiB).
constexpr unsigned kCourierStack = 64 * 1024;
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
    auto& idle = idle_[from];
    if (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        c->job = lane;
        if (c->waiting) {
            c->waiting = false;
            c->bell->release();
        }
        return lane;
    }
    auto c = std::make_shared<Courier>();
    c->host = from;
    c->bell = sg4::Semaphore::create(0);
    c->job = lane;
    ++alive_;
    ++created_;
    sg4::Actor::init("courier", from)->set_stacksize(kCourierStack)->start([this, c]() {
        sg4::Actor::self()->daemonize();
        // A daemon is killed when the last actor that is not one ends: its idle timer goes with it (a timer
        // left behind would keep the engine's clock running to its date).
        sg4::this_actor::on_exit([c](bool) {
            if (c->timer) {
                c->timer->remove();
                c->timer = nullptr;
            }
        });
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
            carry(*c, lane);
            // The put's finished communication stays in its mailbox's list of received messages (the
            // mailbox has a permanent receiver) until cleared. The lane lets go of it too: a communication
            // holds its sender, and SimGrid frees an ended actor's stack only with the last reference to it.
            if (lane->put) {
                lane->mailbox->clear();
                lane->put = nullptr;
            }
            lanes_.give(lane->mailbox);
            idle_[c->host].push_back(c);
            continue;
        }
        c->waiting = true;
        c->expired = false;
        Courier* self = c.get();
        c->timer = simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + idle_s_, [self] {
            self->timer = nullptr;  // the engine deletes it
            if (self->waiting) {
                self->waiting = false;
                self->expired = true;
                self->bell->release();
            }
        });
        c->bell->acquire();
        c->waiting = false;
        if (c->timer) {
            c->timer->remove();
            c->timer = nullptr;
        }
        if (!c->expired || c->job) continue;
        auto& idle = idle_[c->host];
        idle.erase(std::find(idle.begin(), idle.end(), c));
        break;
    }
    --alive_;
}

void drop_transfer(TransferLane& lane) {
    lane.cancelled = true;
    // Through the courier's side only while the bytes still run: a put that has just ended (its courier not
    // yet run again to see it) has nothing left to cancel.
    if (lane.put && !lane.arrived && lane.put->get_remaining() > 0) lane.put->cancel();
}

}  // namespace toast::sim
