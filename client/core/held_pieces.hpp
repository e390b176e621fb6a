// Server fetches that leave blocks to the peers sending them (server_share): the blocks each such piece waits
// for, the server's bytes held meanwhile, and at the next tick what becomes of it: written, or the blocks
// that did not arrive fetched too. libtorrent's add_piece writes every block it has not downloaded yet, so
// the server's bytes of a part cannot go in before the peers' blocks around them are here.
//
// Invariants: a piece is held at most once; its bytes grow only while it is held; blocks_awaited_late() <=
// blocks_awaited(). Pure: times and samples are passed in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "client/core/fallback_planner.hpp"
#include "client/core/piece_types.hpp"
#include "client/core/swarm_sample.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

class HeldPieces {
  public:
    // A fetch started at `now` left `awaited` (block indices, ascending, not empty) to the peers sending
    // them. `nothing_asked`: every block not delivered was awaited, so the server was asked for nothing.
    void hold(PieceIndex p, std::vector<std::int32_t> awaited, SteadyTime now, bool nothing_asked);
    bool holding(PieceIndex p) const { return held_.count(p) != 0; }

    // The server's bytes for a held piece arrived. The piece is then whole (the bytes the server sent for it
    // in all, returned: write it) if they were the awaited blocks fetched too; otherwise they are held.
    std::optional<Bytes> on_server_data(PieceIndex p, Bytes size, SteadyTime now);

    // A request of the held piece is running: the server's first bytes, or the awaited blocks fetched too.
    bool request_running(PieceIndex p) const;
    // The piece is no longer held (it arrived from peers, failed its check, or its fetch was refused).
    struct Dropped {
        Bytes bytes{0};  // what the server had sent of it: wasted
        bool request_running = false;
    };
    std::optional<Dropped> drop(PieceIndex p);

    // At a tick, for the pieces held since an earlier tick whose server bytes are here: released when the
    // blocks they wait for are delivered, else those blocks are fetched (from the first not here to the
    // last). A piece the server was asked nothing of stays held until peers complete it (drop).
    struct Release {
        PieceIndex piece;
        Bytes bytes;
        std::chrono::nanoseconds took;  // the fetch's start to the server's answer: not the wait for peers
    };
    struct Rest {
        PieceIndex piece;
        PiecePart part;
    };
    struct Settled {
        std::vector<Release> release;
        std::vector<Rest> fetch;
    };
    Settled settle(const std::vector<PieceProgress>& progress, const TitleGeometry& geometry, SteadyTime now);

    std::uint64_t blocks_awaited() const { return blocks_awaited_; }
    std::uint64_t blocks_awaited_late() const { return blocks_awaited_late_; }

  private:
    struct Held {
        SteadyTime started;
        std::vector<std::int32_t> awaited;
        Bytes bytes{0};
        std::optional<SteadyTime> arrived{};  // the server's bytes (none were asked for: the start)
        bool fetching_rest = false;           // the awaited blocks that did not arrive are being fetched
    };
    std::map<PieceIndex, Held> held_;
    std::uint64_t blocks_awaited_ = 0;
    std::uint64_t blocks_awaited_late_ = 0;
};

}  // namespace toast::client
