// The bytes of one piece a downloader holds before the piece is whole: disjoint [begin, end) intervals,
// merged as they arrive. Peers send the blocks they were asked for, and a piece's blocks can come from two
// peers at once (libtorrent hands a downloading piece's free blocks to whichever peer has room), so what
// is here is not always a prefix.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace toast::sim {

class ReceivedBytes {
  public:
    void add(std::uint64_t begin, std::uint64_t end) {
        if (end <= begin) return;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
        bool placed = false;
        for (const auto& [a, b] : spans_) {
            if (b < begin || a > end) {
                if (!placed && a > end) {
                    out.emplace_back(begin, end);
                    placed = true;
                }
                out.emplace_back(a, b);
            } else {
                begin = std::min(begin, a);
                end = std::max(end, b);
            }
        }
        if (!placed) out.emplace_back(begin, end);
        std::sort(out.begin(), out.end());
        spans_ = std::move(out);
    }
    // Every byte of [begin, end) is here.
    bool covers(std::uint64_t begin, std::uint64_t end) const {
        if (end <= begin) return true;
        for (const auto& [a, b] : spans_)
            if (a <= begin && b >= end) return true;
        return false;
    }
    bool has(std::uint64_t byte) const { return covers(byte, byte + 1); }
    // The first gap at or after `from` within [0, size): [begin, end), or begin == end == size when none.
    std::pair<std::uint64_t, std::uint64_t> gap_from(std::uint64_t from, std::uint64_t size) const {
        std::uint64_t at = from;
        for (const auto& [a, b] : spans_) {
            if (b <= at) continue;
            if (a > at) return {at, std::min(a, size)};
            at = b;
        }
        return at >= size ? std::pair{size, size} : std::pair{at, size};
    }
    std::uint64_t total() const {
        std::uint64_t t = 0;
        for (const auto& [a, b] : spans_)
            t += b - a;
        return t;
    }
    bool empty() const { return spans_.empty(); }
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& spans() const { return spans_; }

  private:
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans_;
};

}  // namespace toast::sim
