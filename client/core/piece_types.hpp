// Strong types for the client core: piece indices, piece counts and byte offsets inside a title, plus the
// PieceSet bitfield every planner reads. A piece index can never be passed where a byte offset or a count is
// expected, and a count cannot be added to a count of bytes.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "toast/common/units.hpp"

namespace toast::client {

// A number of pieces (window sizes, horizons). Never negative.
class PieceCount {
  public:
    constexpr PieceCount() = default;
    constexpr explicit PieceCount(std::int32_t value) : value_(value < 0 ? 0 : value) {}
    constexpr std::int32_t value() const { return value_; }
    constexpr auto operator<=>(const PieceCount&) const = default;
    constexpr PieceCount operator+(PieceCount o) const { return PieceCount(value_ + o.value_); }

  private:
    std::int32_t value_ = 0;
};

// The index of a piece in a torrent, 0-based, like libtorrent's piece_index_t (which the adapter converts
// from and to with value()).
class PieceIndex {
  public:
    constexpr PieceIndex() = default;
    constexpr explicit PieceIndex(std::int32_t value) : value_(value) {}
    constexpr std::int32_t value() const { return value_; }
    constexpr auto operator<=>(const PieceIndex&) const = default;
    constexpr PieceIndex operator+(PieceCount n) const { return PieceIndex(value_ + n.value()); }
    // Pieces from `o` up to (not including) this one; zero when `o` is not before this one.
    constexpr PieceCount operator-(PieceIndex o) const { return PieceCount(value_ - o.value_); }
    constexpr PieceIndex& operator++() {
        ++value_;
        return *this;
    }
    constexpr PieceIndex next() const { return PieceIndex(value_ + 1); }

  private:
    std::int32_t value_ = 0;
};

// A position inside the title's bytes, 0 = first byte. Differences of offsets are Bytes.
class ByteOffset {
  public:
    constexpr ByteOffset() = default;
    constexpr explicit ByteOffset(std::uint64_t value) : value_(value) {}
    constexpr std::uint64_t value() const { return value_; }
    constexpr auto operator<=>(const ByteOffset&) const = default;
    constexpr ByteOffset operator+(Bytes b) const { return ByteOffset(value_ + b.value()); }
    // Bytes from `o` to this offset; zero when `o` is not before this one.
    constexpr Bytes operator-(ByteOffset o) const { return Bytes(value_ > o.value_ ? value_ - o.value_ : 0); }

  private:
    std::uint64_t value_ = 0;
};

// One bit per piece of a title. Invariant: indices outside [0, size()) are never set; has() answers false for
// them and set()/clear() ignore them, so a stray index from the network cannot corrupt the set.
class PieceSet {
  public:
    PieceSet() = default;
    explicit PieceSet(PieceCount size) : bits_(static_cast<std::size_t>(size.value()), false) {}

    PieceCount size() const { return PieceCount(static_cast<std::int32_t>(bits_.size())); }
    bool contains_index(PieceIndex p) const {
        return p.value() >= 0 && static_cast<std::size_t>(p.value()) < bits_.size();
    }
    bool has(PieceIndex p) const { return contains_index(p) && bits_[static_cast<std::size_t>(p.value())]; }
    // Returns true when the bit changed.
    bool set(PieceIndex p);
    bool clear(PieceIndex p);
    void set_all();
    PieceCount count() const { return PieceCount(count_); }
    bool all() const { return static_cast<std::size_t>(count_) == bits_.size(); }
    // Set pieces in ascending order.
    std::vector<PieceIndex> pieces() const;
    // The lowest piece not set; size() when every piece is.
    PieceIndex first_missing() const;
    bool operator==(const PieceSet& o) const { return bits_ == o.bits_; }

  private:
    std::vector<bool> bits_;
    std::int32_t count_ = 0;
};

}  // namespace toast::client

template <>
struct std::hash<toast::client::PieceIndex> {
    std::size_t operator()(toast::client::PieceIndex p) const noexcept {
        return std::hash<std::int32_t>{}(p.value());
    }
};
