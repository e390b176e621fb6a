#include "client/core/held_pieces.hpp"

#include <algorithm>

namespace toast::client {

void HeldPieces::hold(PieceIndex p, std::vector<std::int32_t> awaited, SteadyTime now, bool nothing_asked) {
    blocks_awaited_ += awaited.size();
    Held h{.started = now, .awaited = std::move(awaited), .bytes = Bytes(0)};
    if (nothing_asked) h.arrived = now;
    held_[p] = std::move(h);
}

std::optional<Bytes> HeldPieces::on_server_data(PieceIndex p, Bytes size, SteadyTime now) {
    auto it = held_.find(p);
    if (it == held_.end()) return size;
    auto& h = it->second;
    h.bytes += size;
    if (!h.fetching_rest) {
        h.arrived = now;
        return std::nullopt;
    }
    auto whole = h.bytes;
    held_.erase(it);
    return whole;
}

bool HeldPieces::request_running(PieceIndex p) const {
    auto it = held_.find(p);
    return it != held_.end() && (!it->second.arrived || it->second.fetching_rest);
}

std::optional<HeldPieces::Dropped> HeldPieces::drop(PieceIndex p) {
    auto it = held_.find(p);
    if (it == held_.end()) return std::nullopt;
    Dropped d{it->second.bytes, request_running(p)};
    held_.erase(it);
    return d;
}

HeldPieces::Settled HeldPieces::settle(const std::vector<PieceProgress>& progress,
                                       const TitleGeometry& geometry, SteadyTime now) {
    Settled out;
    for (auto it = held_.begin(); it != held_.end();) {
        auto& [p, h] = *it;
        // Not a tick later yet, the server's bytes not here yet (held when they come), or the rest is coming.
        if (h.fetching_rest || !h.arrived || h.started >= now) {
            ++it;
            continue;
        }
        auto pp = std::find_if(progress.begin(), progress.end(),
                               [piece = p](const PieceProgress& x) { return x.piece == piece; });
        std::vector<std::int32_t> missing;
        for (auto b : h.awaited) {
            auto i = static_cast<std::size_t>(b);
            if (pp == progress.end() || i >= pp->delivered.size() || !pp->delivered[i]) missing.push_back(b);
        }
        if (missing.empty()) {
            // Nothing asked of the server: peers complete the piece, which is being checked.
            if (h.bytes == Bytes(0)) {
                ++it;
                continue;
            }
            out.release.push_back({p, h.bytes, *h.arrived - h.started});
            it = held_.erase(it);
            continue;
        }
        blocks_awaited_late_ += missing.size();
        const auto block = block_size.value();
        const auto begin = static_cast<std::uint64_t>(missing.front()) * block;
        const auto end = std::min<std::uint64_t>(static_cast<std::uint64_t>(missing.back() + 1) * block,
                                                 geometry.piece_size(p).value());
        out.fetch.push_back({p, PiecePart{Bytes(begin), Bytes(end - begin)}});
        h.fetching_rest = true;
        ++it;
    }
    return out;
}

}  // namespace toast::client
