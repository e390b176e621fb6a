// CancelLedger: whether one peer answers the CANCELs sent to it, learnt from what it does, and what to do
// about the requests a peer that does not answer them leaves hanging.
//
// With the fast extension (BEP 6) a peer must answer every CANCEL with the block or a REJECT, and libtorrent
// relies on it: a cancelled request stays in its per-peer download queue until one of the two arrives, and
// for a piece we already have it is never timed out. Transmission 3.00 drops cancelled requests without a
// word (fixed in 4.0), so every CANCEL sent to it leaves a request that fills one slot of that peer's queue
// for good; a few of them and the peer is unchoked, interested and delivers nothing.
//
// The ledger records each CANCEL sent on a fast-extension connection and the block or REJECT that answers
// it. A cancel still unanswered after `answer_timeout` convicts the peer: the blocks it left hanging are
// requested again (it then sends them, and the requester stops waiting), no CANCEL of ours goes to it any
// more, and each CANCEL libtorrent still sends it is followed at once by the same request. One REJECT of a
// cancelled request acquits the peer for good (a late answer is then never taken for silence); the block
// itself acquits nothing, since a peer that ignores cancels sends the blocks it had sent before the cancel.
// Pure: times are passed in.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <vector>

namespace toast::client {

// One block request on the wire: REQUEST, CANCEL and REJECT name a block the same way.
struct BlockRef {
    std::int32_t piece = 0;
    std::int32_t start = 0;
    std::int32_t length = 0;
    auto operator<=>(const BlockRef&) const = default;
};

enum class CancelVerdict {
    unknown,  // no cancel answered or timed out yet
    answers,  // answered a cancel with a REJECT
    ignores,  // left a cancel unanswered for answer_timeout
};

class CancelLedger {
  public:
    using Time = std::chrono::steady_clock::time_point;

    explicit CancelLedger(std::chrono::milliseconds answer_timeout = std::chrono::seconds(3))
        : answer_timeout_(answer_timeout) {}

    // May a CANCEL of our own (for a piece the server delivered) be sent to this peer?
    bool may_cancel() const { return verdict_ != CancelVerdict::ignores; }

    // A CANCEL for `b` went out at `now`. True when the peer is known to ignore cancels: the same request
    // must then be sent again at once, or the requester waits for `b` forever.
    bool on_cancel_sent(BlockRef b, Time now);

    // The block `b` arrived.
    void on_block(BlockRef b) { pending_.erase(b); }
    // A REJECT for `b` arrived.
    void on_reject(BlockRef b);

    // The blocks whose cancel went unanswered for answer_timeout by `now`, to request again; a non-empty
    // answer convicts the peer.
    std::vector<BlockRef> on_tick(Time now);

    CancelVerdict verdict() const { return verdict_; }
    std::size_t pending() const { return pending_.size(); }

  private:
    std::chrono::milliseconds answer_timeout_;
    CancelVerdict verdict_ = CancelVerdict::unknown;
    std::map<BlockRef, Time> pending_;  // cancelled, not answered yet: when the cancel went out
};

}  // namespace toast::client
