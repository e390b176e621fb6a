// The store a node of a tier serves from: its own BlockStore for the blocks it holds, and relayed reads from
// the other holders (TierClient) for the rest, so any node answers any range of any title (a stock BitTorrent
// client uses every node in the url-list as a web seed, and libtorrent gives up a web seed that redirects;
// docs/server-storage.md "A tier of nodes"). A read is split at block boundaries: consecutive held blocks
// go to the local store in one read, every other block to one of its holders, chosen as a box chooses
// (TierView::choose), then the other when the first fails or refuses. A block no holder can serve makes the
// read `unavailable` with that block's bytes, as a local block with no readable replica does. Titles without
// a tier go to the local store unchanged.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "server/core/title_store.hpp"
#include "server/io/tier_client.hpp"

namespace toast::server {

class TierStore final : public TitleStore {
  public:
    // Both must outlive the store.
    TierStore(TitleStore& local, TierClient& client) : local_(local), client_(client) {}

    std::shared_ptr<const TitleInfo> find(std::string_view name) const override { return local_.find(name); }
    std::vector<std::shared_ptr<const TitleInfo>> titles() const override { return local_.titles(); }
    std::optional<std::string> torrent(const TitleInfo& title) const override {
        return local_.torrent(title);
    }
    void read(ReadRequest request, ReadHandler done) override;
    void interrupt_reads() override;

  private:
    struct Op;
    void relay(const std::shared_ptr<Op>& op, std::size_t part);

    TitleStore& local_;
    TierClient& client_;
    // Counts relayed reads: each draws its own tie-break (toast::holder_tie_break of the count and the
    // block), so this node's relays spread over a block's holders as many boxes' choices do.
    std::atomic<std::uint64_t> relays_{0};
};

}  // namespace toast::server
