// A bitfield over a title's pieces, in 64-bit words, for the questions the swarm model asks many times a
// simulated second: does this peer have a piece that one wants (interest), which pieces does it have that one
// wants and has not asked for (the picker's candidates), where is the first missing piece (a viewer's place
// in the title). client::PieceSet answers the controller; this answers the model, faster.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "client/core/piece_types.hpp"

namespace toast::sim {

class PieceBits {
  public:
    PieceBits() = default;
    explicit PieceBits(int n) : words_(static_cast<std::size_t>((n + 63) / 64), 0), n_(n) {}

    int size() const { return n_; }
    bool test(int p) const {
        return p >= 0 && p < n_ && (words_[static_cast<std::size_t>(p >> 6)] >> (p & 63) & 1u) != 0;
    }
    // True when the bit changed.
    bool set(int p) {
        if (p < 0 || p >= n_ || test(p)) return false;
        words_[static_cast<std::size_t>(p >> 6)] |= std::uint64_t{1} << (p & 63);
        ++count_;
        return true;
    }
    bool clear(int p) {
        if (!test(p)) return false;
        words_[static_cast<std::size_t>(p >> 6)] &= ~(std::uint64_t{1} << (p & 63));
        --count_;
        return true;
    }
    void set_all() {
        for (int p = 0; p < n_; ++p)
            set(p);
    }
    int count() const { return count_; }
    bool all() const { return count_ == n_; }
    bool none() const { return count_ == 0; }
    // The lowest piece not set; size() when all are.
    int first_missing() const {
        if (count_ == n_) return n_;  // a seed's: asked at every choker round, no walk over its words
        for (std::size_t w = 0; w < words_.size(); ++w) {
            if (~words_[w] != 0) {
                int p = static_cast<int>(w * 64) + std::countr_zero(~words_[w]);
                return p < n_ ? p : n_;
            }
        }
        return n_;
    }
    // Some piece set here and in `a` and not in `b` (b may be empty: then only this and a).
    bool any_and_not(const PieceBits& a, const PieceBits& b) const {
        for (std::size_t w = 0; w < words_.size(); ++w) {
            std::uint64_t x = words_[w] & a.words_[w];
            if (!b.words_.empty()) x &= ~b.words_[w];
            if (x != 0) return true;
        }
        return false;
    }
    // Calls f(p) for each piece set here and in `a` and not in `b`, ascending.
    template <class F>
    void for_each_and_not(const PieceBits& a, const PieceBits& b, F&& f) const {
        for (std::size_t w = 0; w < words_.size(); ++w) {
            std::uint64_t x = words_[w] & a.words_[w] & ~b.words_[w];
            while (x != 0) {
                f(static_cast<int>(w * 64) + std::countr_zero(x));
                x &= x - 1;
            }
        }
    }
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t w = 0; w < words_.size(); ++w) {
            std::uint64_t x = words_[w];
            while (x != 0) {
                f(static_cast<int>(w * 64) + std::countr_zero(x));
                x &= x - 1;
            }
        }
    }
    client::PieceSet to_piece_set() const {
        client::PieceSet s{client::PieceCount(n_)};
        for_each([&](int p) { s.set(client::PieceIndex(p)); });
        return s;
    }
    bool operator==(const PieceBits& o) const { return n_ == o.n_ && words_ == o.words_; }

  private:
    std::vector<std::uint64_t> words_;
    int n_ = 0;
    int count_ = 0;
};

}  // namespace toast::sim
