// Which of the server fallback's URLs hold each piece of a title ingested on a tier (the torrent's "toast"
// key names the tier and the block size; toast/common/tier.hpp places each block on its nodes): the fetcher
// asks one of a piece's holders directly (Toast-Direct), the less loaded one, and the other when it fails,
// refuses or misses the deadline. A piece that spans blocks held by different nodes, or whose holders are not
// among the URLs, has no holders here: any server is asked, and relays what it does not hold. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/core/piece_types.hpp"
#include "toast/common/tier.hpp"

namespace toast::client {

class TierRoutes {
  public:
    // `servers` are the title's full URLs the fetcher uses, in order ("http://node:port/titles/NAME"); a
    // node is the server whose URL starts with the node's url and "/". None when no node of the tier is
    // among them (nothing to route), or the sizes are unusable.
    static std::optional<TierRoutes> make(const TierLayout& tier, const std::string& title, Bytes block_size,
                                          Bytes piece_size, Bytes total_size,
                                          const std::vector<std::string>& servers);

    // The servers (indices into `servers`) holding every byte of piece `p`, highest rendezvous weight first;
    // empty when no one server does.
    const std::vector<std::size_t>& holders(PieceIndex p) const;

  private:
    std::vector<std::vector<std::size_t>> by_block_;  // server indices holding each block
    std::uint64_t block_size_ = 0;
    std::uint64_t piece_size_ = 0;
    std::uint64_t total_size_ = 0;
};

}  // namespace toast::client
