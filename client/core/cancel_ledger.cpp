#include "client/core/cancel_ledger.hpp"

namespace toast::client {

bool CancelLedger::on_cancel_sent(BlockRef b, Time now) {
    if (verdict_ == CancelVerdict::ignores) return true;
    if (verdict_ == CancelVerdict::answers) return false;
    // A second cancel of the same block keeps the first send time: the peer has owed an answer since then.
    pending_.try_emplace(b, now);
    return false;
}

void CancelLedger::on_reject(BlockRef b) {
    if (pending_.erase(b) > 0 && verdict_ == CancelVerdict::unknown) {
        verdict_ = CancelVerdict::answers;
        pending_.clear();
    }
}

std::vector<BlockRef> CancelLedger::on_tick(Time now) {
    std::vector<BlockRef> overdue;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (now - it->second >= answer_timeout_) {
            overdue.push_back(it->first);
            it = pending_.erase(it);
        } else {
            ++it;
        }
    }
    if (!overdue.empty()) verdict_ = CancelVerdict::ignores;
    return overdue;
}

}  // namespace toast::client
