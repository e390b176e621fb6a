#include "client/core/tier_routes.hpp"

namespace toast::client {

std::optional<TierRoutes> TierRoutes::make(const TierLayout& tier, const std::string& title, Bytes block_size,
                                           Bytes piece_size, Bytes total_size,
                                           const std::vector<std::string>& servers) {
    if (block_size.value() == 0 || piece_size.value() == 0 || total_size.value() == 0) return std::nullopt;
    std::vector<std::optional<std::size_t>> server_of(tier.nodes.size());
    bool any = false;
    for (std::size_t n = 0; n < tier.nodes.size(); ++n) {
        const auto prefix = tier.nodes[n].url + "/";
        for (std::size_t s = 0; s < servers.size(); ++s) {
            if (servers[s].compare(0, prefix.size(), prefix) == 0) {
                server_of[n] = s;
                any = true;
                break;
            }
        }
    }
    if (!any) return std::nullopt;
    TierRoutes r;
    r.block_size_ = block_size.value();
    r.piece_size_ = piece_size.value();
    r.total_size_ = total_size.value();
    const auto blocks = (r.total_size_ + r.block_size_ - 1) / r.block_size_;
    r.by_block_.resize(blocks);
    for (std::uint64_t b = 0; b < blocks; ++b)
        for (auto node : tier.holders(title, b))
            if (auto s = server_of[node.value()]) r.by_block_[b].push_back(*s);
    return r;
}

const std::vector<std::size_t>& TierRoutes::holders(PieceIndex p) const {
    static const std::vector<std::size_t> none;
    if (p.value() < 0) return none;
    const auto first = static_cast<std::uint64_t>(p.value()) * piece_size_;
    if (first >= total_size_) return none;
    const auto last = std::min(first + piece_size_, total_size_) - 1;
    const auto block = first / block_size_;
    if (last / block_size_ != block) return none;
    return by_block_[block];
}

}  // namespace toast::client
