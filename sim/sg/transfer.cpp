#include "sim/sg/transfer.hpp"

namespace toast::sim {

namespace sg4 = simgrid::s4u;

namespace {
// The courier's stack: it only puts and waits (the viewers' is contexts/stack-size, 256 KiB); every transfer
// allocates one.
constexpr unsigned kCourierStack = 128 * 1024;
int payload = 0;           // the courier's message carries no data: only its simulated size counts
void* received = nullptr;  // where receivers' gets write the (unused) payload pointer
}  // namespace

Transfer start_transfer(LanePool& lanes, sg4::Host* from, std::uint64_t bytes) {
    Transfer t;
    t.lane = std::make_shared<TransferLane>();
    t.lane->mailbox = lanes.take();
    t.comm = t.lane->mailbox->get_async<void>(&received);
    sg4::Actor::init("courier", from)->set_stacksize(kCourierStack)->start([&lanes, lane = t.lane, bytes]() {
        if (!lane->cancelled) {
            lane->put = lane->mailbox->put_async(&payload, bytes);
            lane->sending = true;
            try {
                lane->put->wait();
            } catch (const simgrid::Exception&) {
                // the receiver cancelled it
            }
            lane->put = nullptr;
        }
        lanes.give(lane->mailbox);
    });
    return t;
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
