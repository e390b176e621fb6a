// The bounded local buffer (thesis §5.1.2, `--buffer-limit BYTES|PERCENT`): which stored pieces to eject, and
// when to stop downloading, so that stored bytes never exceed the limit. Pieces behind the playhead (already
// watched) go first, oldest (lowest) first; when nothing can be ejected the client suspends (stops
// requesting, not interested) until playback passes more pieces.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/piece_types.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

// A limit as written on the command line: a size ("512MiB") or a share of the title ("25%").
// Invariant: bytes > 0 for a size, 0 < percent <= 100 for a share.
class BufferLimit {
  public:
    static BufferLimit of_bytes(Bytes b) { return BufferLimit(b, 0); }
    static BufferLimit of_percent(double pct) { return BufferLimit(Bytes(0), pct); }
    // nullopt for anything else, including 0, "0%", "150%", "-5%".
    static std::optional<BufferLimit> parse(std::string_view text);

    bool is_percent() const { return percent_ > 0; }
    double percent() const { return percent_; }
    Bytes bytes() const { return bytes_; }
    // The limit for a title of `total` bytes (a share rounds down).
    Bytes resolve(Bytes total) const;
    std::string to_string() const;
    bool operator==(const BufferLimit&) const = default;

  private:
    BufferLimit(Bytes b, double pct) : bytes_(b), percent_(pct) {}
    Bytes bytes_;
    double percent_ = 0;
};

struct BufferInput {
    const TitleGeometry& geometry;
    const PieceSet& stored;  // pieces in local storage
    PieceIndex playhead;
    Bytes limit;
    Bytes incoming{0};  // bytes of pieces being downloaded or fetched, which will land in storage
};

// Invariants: every ejected piece is stored and behind the playhead, except (after a backward seek) pieces at
// or beyond request_end while the playhead piece itself is missing: those lie outside the buffer window and
// would otherwise deadlock playback. eject is ascending except for that case (farthest first).
struct BufferPlan {
    std::vector<PieceIndex> eject;
    bool suspend = false;    // stop requesting from peers and be not interested
    Bytes stored_after;      // stored bytes once the ejections are done
    Bytes room;              // limit - stored_after - incoming (0 when over)
    PieceIndex request_end;  // pieces at or beyond this must not be requested: they could not all fit
};

// Makes room for one more piece: ejects until stored + incoming + piece_length <= limit, or suspends.
BufferPlan plan_buffer(const BufferInput& input);

// Why `limit` is unusable for `geometry` (it cannot hold two pieces: the one playing and the next), or
// nullopt.
std::optional<std::string> check_buffer_limit(Bytes limit, const TitleGeometry& geometry);

}  // namespace toast::client
