#include "sim/sg/transfer.hpp"

#include <algorithm>

namespace toast::sim {

namespace sg4 = simgrid::s4u;

namespace {
// The courier's stack: it only puts, waits and sleeps (the viewers' is contexts/stack-size, 256 KiB).
constexpr unsigned kCourierStack = 64 * 1024;
int payload = 0;           // the courier's message carries no data: only its simulated size counts
void* received = nullptr;  // where receivers' gets write the (unused) payload pointer
}  // namespace

Transfer Couriers::start(sg4::Host* from, std::uint64_t bytes) {
    Transfer t;
    t.lane = std::make_shared<TransferLane>();
    t.lane->mailbox = lanes_.take();
    t.lane->bytes = bytes;
    t.comm = t.lane->mailbox->get_async<void>(&received);
    auto& c = courier_for(from);
    c.jobs.push_back(t.lane);
    if (c.waiting) {
        c.waiting = false;
        c.bell->release();
    }
    return t;
}

Couriers::Courier& Couriers::courier_for(sg4::Host* from) {
    auto& here = by_host_[from];
    for (auto& c : here)
        if (c->load() < max_load_) return *c;
    auto c = std::make_shared<Courier>();
    c->host = from;
    c->bell = sg4::Semaphore::create(0);
    here.push_back(c);
    ++alive_;
    ++created_;
    sg4::Actor::init("courier", from)->set_stacksize(kCourierStack)->start([this, c]() {
        sg4::Actor::self()->daemonize();
        run(c);
    });
    return *c;
}

void Couriers::put_jobs(Courier& c) {
    auto jobs = std::move(c.jobs);
    c.jobs.clear();
    for (auto& lane : jobs) {
        if (lane->cancelled) {
            lanes_.give(lane->mailbox);
            continue;
        }
        lane->put = lane->mailbox->put_async(&payload, lane->bytes);
        lane->sending = true;
        c.out.push_back(std::move(lane));
    }
}

void Couriers::collect(Courier& c) {
    // Waiting on a put whose receiver is done returns at once (ended, or cancelled: an exception) and takes
    // it off this actor's list. Other actors may run meanwhile and hand this courier new jobs.
    std::vector<std::shared_ptr<TransferLane>> done;
    auto split =
        std::stable_partition(c.out.begin(), c.out.end(), [](const auto& l) { return !l->received; });
    done.assign(std::make_move_iterator(split), std::make_move_iterator(c.out.end()));
    c.out.erase(split, c.out.end());
    for (auto& lane : done) {
        try {
            lane->put->wait();
        } catch (const simgrid::Exception&) {
            // the receiver cancelled it
        }
        lane->put = nullptr;
        lanes_.give(lane->mailbox);
    }
}

void Couriers::run(const std::shared_ptr<Courier>& c) {
    while (true) {
        put_jobs(*c);
        collect(*c);
        if (!c->jobs.empty()) continue;
        c->waiting = true;
        const bool timed_out = c->bell->acquire_timeout(idle_s_);
        if (!timed_out) continue;  // rung: `waiting` was cleared by the ringer
        c->waiting = false;
        if (!c->jobs.empty()) continue;
        collect(*c);
        if (c->jobs.empty() && c->out.empty()) break;
    }
    auto& here = by_host_[c->host];
    here.erase(std::find(here.begin(), here.end(), c));
    --alive_;
}

void drop_transfer(Transfer& t) {
    t.lane->cancelled = true;
    // Through the courier's side only while the bytes still run: a put that has just ended (its courier not
    // yet run again to see it) has no implementation left to cancel.
    if (t.lane->put && t.comm->get_remaining() > 0)
        t.lane->put->cancel();
    else
        t.comm->cancel();
    try {
        t.comm->wait_for(0);
    } catch (const simgrid::Exception&) {
        // cancelled: expected
    }
}

}  // namespace toast::sim
