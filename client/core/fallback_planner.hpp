// The server fallback's decisions (thesis §5.1.2): which missing pieces to fetch
// from the VoD server now. It fires before a piece's deadline, not at it: a piece is fetched once its
// deadline is within the give-up horizon plus the time a server fetch takes (an EWMA of observed fetches)
// plus a margin. It never fetches a piece twice at once, retries failures with exponential backoff, and
// bounds the fetches it makes ahead of need. The adapter performs the HTTP requests and reports back.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "client/core/piece_types.hpp"
#include "client/core/stream_watcher.hpp"

namespace toast::client {

struct FallbackConfig {
    std::size_t max_concurrent = 4;  // needed fetches in flight at once (urgent ones are not held back)
    // Fetches ahead of need: pieces beyond the need window that no peer has. At most this many are in flight
    // or fetched and not yet reached by the playhead (a bound on flight alone would let a fast server fill
    // the whole ahead window in a second when a peer connects before its bitfield arrives).
    std::size_t max_ahead = 2;
    std::chrono::nanoseconds ahead_window =
        std::chrono::seconds(30);  // how far past the need window they look
    std::chrono::nanoseconds lead_margin = std::chrono::milliseconds(500);
    // Before the first fetch is measured (the title's first piece, fetched at once). A LAN VoD server sends a
    // piece in tens of milliseconds; a high guess hands the server the pieces right after the first one.
    std::chrono::nanoseconds initial_fetch_estimate = std::chrono::milliseconds(250);
    double ewma_alpha = 0.3;
    std::chrono::nanoseconds backoff_initial = std::chrono::milliseconds(500);
    std::chrono::nanoseconds backoff_max = std::chrono::seconds(10);
};

// What the planner needs to know about playback and storage at one moment.
struct FallbackInput {
    const PieceSet& had;
    PieceIndex playhead;
    std::chrono::nanoseconds piece_duration{0};       // media time of one full piece
    std::chrono::nanoseconds into_playhead_piece{0};  // already played of the playhead piece
    std::chrono::nanoseconds horizon{0};              // GiveUpHorizon::horizon_time()
    std::vector<PieceIndex> urgent = {};              // pieces a player read waits for: fetched first
    const std::vector<int>* availability = nullptr;   // peers per piece; enables fetching ahead of need
    std::optional<PieceIndex> request_end = {};       // bounded buffer: nothing at or beyond this is fetched
    bool suspended = false;  // bounded buffer full: only urgent pieces, the playhead piece and needed pieces
                             // before request_end
    // Pieces peers are sending now, and pieces peers are asked for that a viewer holds (or may hold: peers
    // are still being found). Peers get until the server's last moment for them: such a piece is fetched
    // only once its deadline is within the fetch estimate + margin. Fetched at the need window, it would be
    // a piece peers were about to deliver, and the blocks they had already sent of it (a CANCEL cannot call
    // back what is in their send buffers) would arrive as redundant bytes: upload spent for nothing.
    const PieceSet* peer_sending = nullptr;
    const PieceSet* peer_owned = nullptr;
};

enum class FetchReason {
    urgent,  // a player read is waiting for it
    needed,  // its deadline is inside horizon + fetch estimate + margin
    ahead,   // beyond that window, and no peer has it
};
std::string_view to_string(FetchReason r);

// A byte range inside one piece.
struct PiecePart {
    Bytes offset;  // from the piece's first byte
    Bytes length;
    bool operator==(const PiecePart&) const = default;
};

// What of a piece the server is asked for, given which of its blocks (of `block_size` bytes, the last one
// shorter) peers have already delivered: from the first block they have not delivered to the last one. The
// blocks before and after stay the peers' (libtorrent's add_piece skips the blocks it holds), so a piece the
// server takes from peers at its last moment costs the server only what they had not sent yet, and what they
// sent is not wasted. The whole piece when no block is delivered (or `delivered` is empty); the last block
// when every block is (the piece is being checked: it passes, or fails and is fetched whole).
PiecePart server_part(Bytes piece_size, Bytes block_size, const std::vector<bool>& delivered);

// The blocks of a piece peers deliver whatever we do now: those among the first `committed` requests in
// their peer's queue (`queue_position`, 0 for the block being sent), not delivered yet. An uploader sends
// requests in the order they came and reads the next one into its send buffer while the block before it
// still goes out, and a CANCEL does not call back what is in a send buffer. Fetched from the server too,
// they arrive a moment later as redundant bytes: upload spent for nothing.
std::vector<bool> arriving_blocks(const std::vector<bool>& delivered, const std::vector<int>& queue_position,
                                  int committed);

// What the server is asked for when the blocks `arriving` are left to the peers sending them: server_part
// with those blocks counted as delivered, and the arriving blocks outside that part (inside it they are
// fetched anyway: a request is one byte range). `part` is empty (length 0) when every block not delivered is
// arriving.
struct ServerShare {
    PiecePart part;
    std::vector<std::int32_t> awaited;  // block indices, ascending
};
ServerShare server_share(Bytes piece_size, Bytes block_size, const std::vector<bool>& delivered,
                         const std::vector<bool>& arriving);

struct FallbackFetch {
    PieceIndex piece;
    FetchReason reason = FetchReason::needed;
    // The piece's last fetch failed (possibly its bytes failed the hash check): ask the server to re-read
    // and re-check its copy rather than answer from what it verified before (Cache-Control: no-cache), so a
    // replica that rotted after the server checked it is not served again and again.
    bool revalidate = false;
    // Media time until the playhead needs the piece (0 for urgent ones): the server is told it (the
    // Toast-Deadline header) so it can serve the swarm's safety net earliest deadline first.
    std::chrono::nanoseconds due{0};
    // What of it to fetch (server_part); none: the whole piece.
    std::optional<PiecePart> part{};
    bool operator==(const FallbackFetch&) const = default;
};

// Invariants: a piece is in flight at most once; a piece whose last fetch failed is not fetched again before
// its retry time; at most max_concurrent needed fetches and max_ahead ahead fetches are in flight (urgent
// fetches may exceed max_concurrent: a player is waiting).
class FallbackPlanner {
  public:
    explicit FallbackPlanner(FallbackConfig config = {});

    // The fetches to start now, most urgent first; they are in flight from this call on.
    std::vector<FallbackFetch> plan(const FallbackInput& input, SteadyTime now);

    void on_fetch_succeeded(PieceIndex p, std::chrono::nanoseconds took);
    // HTTP error, short body or hash failure: retry after a backoff that doubles with each failure.
    void on_fetch_failed(PieceIndex p, SteadyTime now);
    // The piece arrived another way (a peer was faster); no penalty, no estimate update.
    void on_fetch_abandoned(PieceIndex p);

    bool in_flight(PieceIndex p) const { return in_flight_.count(p) != 0; }
    std::vector<PieceIndex> in_flight_pieces() const;
    std::optional<SteadyTime> retry_at(PieceIndex p) const;
    std::chrono::nanoseconds fetch_estimate() const { return estimate_; }
    // Deadlines within this are fetched now.
    std::chrono::nanoseconds need_window(std::chrono::nanoseconds horizon) const;
    // The server's last moment: a fetch started this long before a deadline still arrives in time.
    std::chrono::nanoseconds lead() const;

    std::uint64_t started() const { return started_; }
    std::uint64_t succeeded() const { return succeeded_; }
    std::uint64_t failed() const { return failed_; }
    // Fetches started ahead of need (FetchReason::ahead), reported as pieces_fetched_ahead.
    std::uint64_t fetched_ahead() const { return fetched_ahead_; }

  private:
    struct Failure {
        std::uint32_t attempts = 0;
        SteadyTime retry_at{};
    };
    bool startable(PieceIndex p, const FallbackInput& input, SteadyTime now) const;

    FallbackConfig config_;
    std::map<PieceIndex, FetchReason> in_flight_;
    std::set<PieceIndex> fetched_ahead_pieces_;  // ahead fetches that succeeded, until the playhead passes
    std::map<PieceIndex, Failure> failures_;
    std::chrono::nanoseconds estimate_;
    bool estimated_ = false;
    std::uint64_t started_ = 0, succeeded_ = 0, failed_ = 0, fetched_ahead_ = 0;
};

}  // namespace toast::client
