#include <catch2/catch.hpp>

#include "client/core/cancel_ledger.hpp"

using namespace std::chrono_literals;
using toast::client::BlockRef;
using toast::client::CancelLedger;
using toast::client::CancelVerdict;

namespace {
const CancelLedger::Time t0{};
const BlockRef a{15, 0, 16384};
const BlockRef b{15, 16384, 16384};
const BlockRef c{20, 0, 16384};
}  // namespace

TEST_CASE("a cancel left unanswered past the timeout convicts the peer and its blocks are requested again",
          "[client][cancel]") {
    CancelLedger ledger(3s);
    CHECK(ledger.may_cancel());
    CHECK_FALSE(ledger.on_cancel_sent(a, t0));
    CHECK_FALSE(ledger.on_cancel_sent(b, t0 + 1s));
    CHECK(ledger.on_tick(t0 + 2999ms).empty());
    CHECK(ledger.verdict() == CancelVerdict::unknown);
    // Only the cancel that is 3 s old is overdue, but one is enough to convict.
    CHECK(ledger.on_tick(t0 + 3s) == std::vector<BlockRef>{a});
    CHECK(ledger.verdict() == CancelVerdict::ignores);
    CHECK_FALSE(ledger.may_cancel());
    CHECK(ledger.on_tick(t0 + 4s) == std::vector<BlockRef>{b});
    CHECK(ledger.pending() == 0);
}

TEST_CASE("after a conviction every cancel is followed by the same request at once", "[client][cancel]") {
    CancelLedger ledger(3s);
    ledger.on_cancel_sent(a, t0);
    REQUIRE(ledger.on_tick(t0 + 3s).size() == 1);
    CHECK(ledger.on_cancel_sent(c, t0 + 10s));
    CHECK(ledger.pending() == 0);
    CHECK(ledger.on_tick(t0 + 20s).empty());
}

TEST_CASE("a REJECT of a cancelled request acquits the peer for good", "[client][cancel]") {
    CancelLedger ledger(3s);
    ledger.on_cancel_sent(a, t0);
    ledger.on_cancel_sent(b, t0);
    ledger.on_reject(a);
    CHECK(ledger.verdict() == CancelVerdict::answers);
    // The other answer may come late; slow is not silent.
    CHECK(ledger.on_tick(t0 + 60s).empty());
    CHECK_FALSE(ledger.on_cancel_sent(c, t0 + 61s));
    CHECK(ledger.on_tick(t0 + 120s).empty());
    CHECK(ledger.may_cancel());
}

TEST_CASE("a block that arrives after its cancel settles it but proves nothing", "[client][cancel]") {
    CancelLedger ledger(3s);
    ledger.on_cancel_sent(a, t0);
    ledger.on_cancel_sent(b, t0);
    // A peer that ignores cancels still sends what it had sent before the cancel reached it.
    ledger.on_block(a);
    CHECK(ledger.verdict() == CancelVerdict::unknown);
    CHECK(ledger.on_tick(t0 + 3s) == std::vector<BlockRef>{b});
    CHECK(ledger.verdict() == CancelVerdict::ignores);
}

TEST_CASE("a REJECT of a request never cancelled proves nothing", "[client][cancel]") {
    CancelLedger ledger(3s);
    ledger.on_reject(a);  // choked, or the peer's queue was full
    CHECK(ledger.verdict() == CancelVerdict::unknown);
    ledger.on_cancel_sent(b, t0);
    CHECK(ledger.on_tick(t0 + 3s) == std::vector<BlockRef>{b});
}

TEST_CASE("a block cancelled twice is owed from the first cancel", "[client][cancel]") {
    CancelLedger ledger(3s);
    ledger.on_cancel_sent(a, t0);
    ledger.on_cancel_sent(a, t0 + 2s);
    CHECK(ledger.on_tick(t0 + 3s) == std::vector<BlockRef>{a});
}
