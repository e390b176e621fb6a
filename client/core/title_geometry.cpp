#include "client/core/title_geometry.hpp"

#include <limits>

namespace toast::client {
namespace {

// Byte <-> time conversions need b * 8e9 without overflow for titles of many gigabytes.
__extension__ using U128 = unsigned __int128;

constexpr std::uint64_t ns_per_s = 1'000'000'000;

}  // namespace

std::optional<TitleGeometry> TitleGeometry::make(Bytes total_size, Bytes piece_length, BitRate bitrate,
                                                 std::string* error) {
    auto fail = [&](const char* what) -> std::optional<TitleGeometry> {
        if (error) *error = what;
        return std::nullopt;
    };
    if (total_size.value() == 0) return fail("title size must be positive");
    if (piece_length.value() == 0) return fail("piece length must be positive");
    if (bitrate.value() == 0) return fail("bitrate must be positive");
    auto pieces = (total_size.value() + piece_length.value() - 1) / piece_length.value();
    if (pieces > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
        return fail("too many pieces for a piece index");
    return TitleGeometry(total_size, piece_length, bitrate);
}

TitleGeometry::TitleGeometry(Bytes total, Bytes piece_length, BitRate bitrate)
    : total_size_(total),
      piece_length_(piece_length),
      bitrate_(bitrate),
      piece_count_(
          static_cast<std::int32_t>((total.value() + piece_length.value() - 1) / piece_length.value())) {}

Bytes TitleGeometry::last_piece_size() const {
    auto rest = total_size_.value() % piece_length_.value();
    return Bytes(rest == 0 ? piece_length_.value() : rest);
}

Bytes TitleGeometry::piece_size(PieceIndex p) const {
    return p == last_piece() ? last_piece_size() : piece_length_;
}

ByteOffset TitleGeometry::piece_start(PieceIndex p) const {
    return ByteOffset(static_cast<std::uint64_t>(p.value()) * piece_length_.value());
}

ByteOffset TitleGeometry::piece_end(PieceIndex p) const {
    return piece_start(p) + piece_size(p);
}

PieceIndex TitleGeometry::piece_at(ByteOffset offset) const {
    if (offset.value() >= total_size_.value()) return last_piece();
    return PieceIndex(static_cast<std::int32_t>(offset.value() / piece_length_.value()));
}

// Rounded up, so that offset_at(media_time_at(b)) == b: the playhead reaches a byte exactly at its time.
std::chrono::nanoseconds TitleGeometry::media_time_at(ByteOffset offset) const {
    U128 num = static_cast<U128>(offset.value()) * 8u * ns_per_s;
    U128 t = (num + bitrate_.value() - 1) / bitrate_.value();
    return std::chrono::nanoseconds(static_cast<std::int64_t>(t));
}

ByteOffset TitleGeometry::offset_at(std::chrono::nanoseconds t) const {
    if (t.count() <= 0) return ByteOffset(0);
    U128 b = static_cast<U128>(t.count()) * bitrate_.value() / (8u * ns_per_s);
    if (b >= total_size_.value()) return end();
    return ByteOffset(static_cast<std::uint64_t>(b));
}

std::chrono::nanoseconds TitleGeometry::piece_duration() const {
    return media_time_at(ByteOffset(piece_length_.value()));
}

PieceCount TitleGeometry::pieces_in(std::chrono::nanoseconds d) const {
    if (d.count() <= 0) return PieceCount(0);
    U128 bytes = static_cast<U128>(d.count()) * bitrate_.value();  // x 1/(8e9) below
    U128 denom = static_cast<U128>(8u * ns_per_s) * piece_length_.value();
    U128 pieces = (bytes + denom - 1) / denom;
    if (pieces > static_cast<U128>(piece_count_.value())) return piece_count_;
    return PieceCount(static_cast<std::int32_t>(pieces));
}

}  // namespace toast::client
