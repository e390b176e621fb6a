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
        // The spans it overlaps or touches are consecutive: from the first ending at or after `begin` to the
        // last starting at or before `end`. They become one, in place.
        auto first = std::lower_bound(spans_.begin(), spans_.end(), begin,
                                      [](const auto& s, std::uint64_t at) { return s.second < at; });
        auto last = first;
        for (; last != spans_.end() && last->first <= end; ++last) {
            begin = std::min(begin, last->first);
            end = std::max(end, last->second);
        }
        if (first == last) {
            spans_.insert(first, {begin, end});
            return;
        }
        *first = {begin, end};
        spans_.erase(first + 1, last);
    }
    void clear() { spans_.clear(); }
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
