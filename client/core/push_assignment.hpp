// A box's push assignment as the operator's server sends it (GET /push/assignment,
// docs/server-catalogue.md), read and checked purely. Nothing in it is trusted: every field is checked for
// type and range, unknown fields are refused, a title's name may not look like a path, its torrent must be
// the server's /torrents/NAME.torrent, its ranges must lie inside the title and its bytes add up; the box's
// own id and push quota bound it; and once the box has the title's torrent, the info-hash, name, piece size,
// piece count and bytes must be the torrent's. A refused assignment changes nothing on the box. The box never
// uses a name or URL from it as a local path: titles live under their info-hash.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/piece_types.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

struct PieceRange {
    PieceIndex first;
    PieceIndex last;  // inclusive
    bool operator==(const PieceRange&) const = default;
};

struct AssignedTitle {
    std::string name;
    std::string info_hash;  // 40 lower-case hex digits: the box's title id
    std::string torrent;    // "/torrents/NAME.torrent", relative to the server's URL
    Bytes piece_size{0};
    std::int32_t pieces = 0;         // the title's piece count
    std::vector<PieceRange> ranges;  // ascending, disjoint
    Bytes bytes{0};
    bool holds(PieceIndex p) const;
};

struct PushAssignment {
    std::string box;
    std::string plan;  // identifies the content: same plan, same titles and ranges
    std::uint64_t generation = 0;
    std::int64_t window_start_ms = 0;  // unix ms, [start, end)
    std::int64_t window_end_ms = 0;
    BitRate rate{0};
    Bytes quota{0};
    BitRate upload{0};
    std::chrono::seconds refresh{0};
    std::vector<AssignedTitle> titles;
    Bytes bytes() const;
    const AssignedTitle* find(std::string_view info_hash) const;
};

// nullopt with `error` saying which field is wrong.
std::optional<PushAssignment> parse_push_assignment(std::string_view text, std::string* error);

// Empty when `a` is this box's and fits its push quota; else what is wrong.
std::string check_assignment(const PushAssignment& a, std::string_view box_id, Bytes push_quota);

// What the box read in a title's torrent.
struct TorrentFacts {
    std::string name;  // the title's name in its torrent
    std::string info_hash;
    Bytes size{0};
    Bytes piece_size{0};
    std::int32_t pieces = 0;
};
// Empty when the assigned title is the torrent's title; else what is wrong.
std::string check_title(const AssignedTitle& t, const TorrentFacts& torrent);

// Bytes of `ranges` in a title of `size` bytes and pieces of `piece_size`.
Bytes range_bytes(const std::vector<PieceRange>& ranges, Bytes size, Bytes piece_size);
// Whether every piece in `inner` is in `outer`.
bool ranges_cover(const std::vector<PieceRange>& outer, const std::vector<PieceRange>& inner);

}  // namespace toast::client
