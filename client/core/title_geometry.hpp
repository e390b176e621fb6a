// The shape of one title: how its bytes split into pieces and how bytes map to media time at its bitrate.
// Every other part of the core converts between pieces, bytes and playback time through this one type.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "client/core/piece_types.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

// Invariants (checked by make()): total_size > 0, piece_length > 0, bitrate > 0, and the piece count fits in
// a PieceIndex. Every piece has piece_length bytes except the last, which has last_piece_size() bytes
// (1..piece_length). Media time is constant-bitrate: byte b plays at b * 8 / bitrate seconds.
class TitleGeometry {
  public:
    // nullopt with `error` filled when a value breaks an invariant.
    static std::optional<TitleGeometry> make(Bytes total_size, Bytes piece_length, BitRate bitrate,
                                             std::string* error = nullptr);

    Bytes total_size() const { return total_size_; }
    Bytes piece_length() const { return piece_length_; }
    BitRate bitrate() const { return bitrate_; }
    PieceCount piece_count() const { return piece_count_; }
    PieceIndex last_piece() const { return PieceIndex(piece_count_.value() - 1); }
    Bytes last_piece_size() const;
    bool valid(PieceIndex p) const { return p.value() >= 0 && p.value() < piece_count_.value(); }

    // Size of piece p (piece_length, or last_piece_size for the last one). p must be valid.
    Bytes piece_size(PieceIndex p) const;
    ByteOffset piece_start(PieceIndex p) const;
    // One past the last byte of p.
    ByteOffset piece_end(PieceIndex p) const;
    // The piece holding `offset`; offsets at or beyond the end map to the last piece.
    PieceIndex piece_at(ByteOffset offset) const;
    ByteOffset end() const { return ByteOffset(total_size_.value()); }

    // Media time at which `offset` plays (constant bitrate).
    std::chrono::nanoseconds media_time_at(ByteOffset offset) const;
    // The byte playing at media time `t`, clamped to end().
    ByteOffset offset_at(std::chrono::nanoseconds t) const;
    // Playback duration of a full piece.
    std::chrono::nanoseconds piece_duration() const;
    std::chrono::nanoseconds title_duration() const { return media_time_at(end()); }
    // Whole pieces covered by `d` of media time, rounded up (a window of 1 ns still holds one piece).
    PieceCount pieces_in(std::chrono::nanoseconds d) const;

  private:
    TitleGeometry(Bytes total, Bytes piece_length, BitRate bitrate);

    Bytes total_size_;
    Bytes piece_length_;
    BitRate bitrate_;
    PieceCount piece_count_;
};

}  // namespace toast::client
