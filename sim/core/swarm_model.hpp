// The BitTorrent swarm of one title below the client core: what libtorrent does that the simulator models at
// piece level. Pure: plain data in, decisions out; the SimGrid adapter moves the bytes.
//
// Modelled (sim/README.md has the full list and what is left out):
//  - Members: every box holding or wanting the title, the operator's seed, each with its pieces (`have`),
//  and,
//    while it watches, what its controller asked for as libtorrent holds it (priorities and deadlines, set
//    through the PlanApplier) and the availability of each piece among its connected peers.
//  - Connections: symmetric, at most `max_connections` per member; each direction a Pipe: the downloader's
//    requests to that uploader, in order, at most one piece in transfer at a time (one TCP stream), whole
//    pieces, as many queued as about request_queue_time (3 s) of the pipe's measured rate. An uploader with
//    nothing else to send takes the second half of what another peer still has to send of a piece (libtorrent
//    gives a downloading piece's free blocks to whichever peer has room), so a piece can come from two peers.
//  - The picker: deadline pieces first, earliest deadline first; then libtorrent's order,
//    (availability + 1) x (8 - priority) x 3 - 2, lowest first, ties in a random order per member (libtorrent
//    shuffles pieces of equal rank). A piece is asked of one peer at a time.
//  - Interest and choking: a downloader is interested in a peer that has a piece it wants; each uploader
//    unchokes by its choker (client/core/choker.hpp: nearest-behind, leader, seed-style, or libtorrent's
//    tit-for-tat and a stock seed's round robin), re-ranked every choker round (a second for Toast's chokers,
//    15 s for libtorrent's), evaluated when a downloader next asks (lazily: between asks nothing changes).
//    An interested peer is unchoked at once when the choker would take it (Toast) or a slot is free
//    (libtorrent).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "client/core/choker.hpp"
#include "client/core/client_options.hpp"
#include "sim/core/piece_bits.hpp"
#include "sim/core/received_bytes.hpp"
#include "sim/core/request_pipeline.hpp"

namespace toast::sim {

using BoxId = int;

enum class ChokerKind { nearest, leader, seed_style, tit_for_tat, stock_seed };

struct MemberSetup {
    ChokerKind choker = ChokerKind::nearest;
    int slots = 1;
    bool operator_peer = false;
    int max_connections = 40;
    std::uint64_t seed = 1;  // the order of equal-ranked pieces
};

// The member a client with these options is: its choker, slots, connections and piece order.
MemberSetup member_setup_for(const client::ClientOptions& o);

// What a downloader asked one uploader for (one direction of a connection).
struct Pipe {
    std::deque<int> queue;           // pieces requested, not started, in request order
    int active = -1;                 // the piece being sent now, or -1
    std::uint64_t from = 0, to = 0;  // bytes [from, to) of the active piece this transfer carries
    bool unchoked = false;           // the uploader lets the downloader download
    bool interested = false;         // the downloader has told the uploader it wants something
    std::uint64_t delivered = 0;     // payload bytes of finished transfers
    double rate = 0;                 // bytes per second, as last measured (set_rate)
    RequestPipeline pipeline;        // the block requests libtorrent keeps outstanding on it
};

// Where one end first saw the other: its first missing piece then, and when. The Toast chokers rank a peer by
// where it is now, estimated from this and the piece-time (client::estimated_first_missing): a peer behind
// us never sends a HAVE for a piece we hold, so what it has told us stays what it had when we met.
struct Sighting {
    int first_missing = 0;
    double at = 0;
};

struct Connection {
    BoxId a = -1, b = -1;
    int a_slot = -1, b_slot = -1;  // the members' places in the swarm, valid while the connection is open
    Sighting a_sees_b, b_sees_a;
    Pipe to_b;  // a uploads to b
    Pipe to_a;  // b uploads to a
    bool open = false;
    Pipe& towards(BoxId down) { return down == b ? to_b : to_a; }
    const Pipe& towards(BoxId down) const { return down == b ? to_b : to_a; }
    BoxId other(BoxId x) const { return x == a ? b : a; }
};

struct Member {
    BoxId box = -1;
    MemberSetup setup;
    PieceBits have;
    bool downloading = false;
    PieceBits wanted;          // applied priority > 0 and not had
    PieceBits requested;       // queued or in transfer from some peer
    std::map<int, int> asked;  // requested pieces: how many pipes have them queued or in transfer
    std::vector<std::uint8_t> priority;
    std::map<int, double> deadline;  // piece -> when it is due (absolute seconds)
    std::vector<int> availability;   // connected peers holding each piece
    // Pieces not had of which peers delivered some bytes (transfers stopped, split, or carried only up to the
    // server's part): libtorrent keeps their blocks, and a later request asks only for what is missing.
    std::map<int, ReceivedBytes> partial;
    bool upload_mode = false;  // downloading suspended (the bounded buffer is full): no requests
    // The client's operator tier wants the operator's peers (ControllerPlan::ask_operator): without it the
    // box is not interested in them, as the client's plugin tells them NOT_INTERESTED.
    bool operator_wanted = true;
    // While it plays at a known upload rate (the client's TitleStream::choker_position): its playhead's media
    // time and client::chain_min_gap, for the nearest-behind choker's spaced_behind_rank. Unset: it ranks by
    // nearest_behind_rank.
    std::optional<std::chrono::nanoseconds> playhead;
    std::optional<std::chrono::nanoseconds> chain_gap;
    std::vector<std::uint32_t> order;
    std::vector<int> conns;
    client::ChokerState choker;
    double next_round = 0;
    std::uint64_t rounds = 0;
    std::uint64_t joined = 0;  // join order
};

// A transfer the adapter starts (bytes [from, to) of `piece` from `up` to the downloader) or cancels.
struct TransferStart {
    int conn = -1;
    BoxId up = -1;
    int piece = -1;
    std::uint64_t from = 0, to = 0;
};
struct TransferCancel {
    int conn = -1;
    int piece = -1;
};
// A transfer in progress the adapter must stop at byte `at` of its piece (another uploader takes the rest).
struct TransferSplit {
    int conn = -1;
    int piece = -1;
    std::uint64_t at = 0;
};
struct PumpResult {
    std::vector<TransferStart> start;
    std::vector<TransferSplit> split;
    std::vector<TransferCancel> cancel;  // connections that closed while sending
    // Other downloaders an uploader's choker round (run lazily during this pump) unchoked: they ask at once
    // in libtorrent (the UNCHOKE message), so the adapter wakes them.
    std::vector<BoxId> unchoked;
};

class SwarmModel {
  public:
    // `piece_seconds`: one full piece's playback time (0: unknown, peers ranked by what they told).
    SwarmModel(int pieces, std::uint64_t piece_length, std::uint64_t total_bytes, double piece_seconds = 0);

    int pieces() const { return pieces_; }
    std::uint64_t piece_size(int p) const;

    // Adds `box` (or returns it if present) with no pieces.
    Member& join(BoxId box, const MemberSetup& setup);
    void leave(BoxId box);
    Member* find(BoxId box);
    const Member* find(BoxId box) const;
    bool connected(BoxId a, BoxId b) const;
    // Opens a connection at `now`; false when it exists, either side is full, or a == b.
    bool connect(BoxId a, BoxId b, double now = 0);
    Connection& connection(int id) { return conns_[static_cast<std::size_t>(id)]; }
    const Connection& connection(int id) const { return conns_[static_cast<std::size_t>(id)]; }
    std::size_t members() const { return slot_.size(); }

    // A watching session begins (its availability is counted from here) or ends (its requests are dropped).
    void start_download(BoxId box);
    void stop_download(BoxId box);

    void on_have(BoxId box, int piece);
    void on_lost(BoxId box, int piece);

    // libtorrent's state of a downloader (the PlanApplier's calls).
    void set_priority(BoxId box, int piece, std::uint8_t prio);
    void set_deadline(BoxId box, int piece, double at);
    void reset_deadline(BoxId box, int piece);

    // The downloader's side at `now`: interest, its peers' choker rounds, requests; the transfers to start.
    // `delivered(conn)`: bytes the transfer towards `down` on `conn` has delivered so far (the adapter's
    // measure); without it no transfer is split.
    PumpResult pump(BoxId down, double now, const std::function<std::uint64_t(int)>& delivered = {});
    // What a finished or stopped transfer carried: the piece, who sent it, how many payload bytes, and
    // whether the downloader now holds every byte of the piece (it carried the piece to its end, the bytes
    // before having come earlier).
    struct Carried {
        int piece = -1;
        BoxId up = -1;
        std::uint64_t bytes = 0;
        bool whole = false;
    };
    // The transfer towards `down` on `conn` delivered all its bytes.
    Carried finish_transfer(int conn, BoxId down);
    // The transfer towards `down` on `conn` stopped after `delivered` of its bytes (the server sent the rest,
    // the piece arrived another way, or the uploader left).
    Carried cancel_transfer(int conn, BoxId down, std::uint64_t delivered);
    // The uploader goes on with bytes [from, to) of `piece` to `down` (the rest of a stopped transfer).
    TransferStart resume_transfer(int conn, BoxId down, int piece, std::uint64_t from, std::uint64_t to);
    // Measured payload rate of the pipe towards `down` on `conn`, over the last `seconds`.
    void set_rate(int conn, BoxId down, double bytes_per_second, double seconds);

    // The downloaders `up` just made able to ask for `piece` (it has it now): connected, unchoked by `up`,
    // asking it for nothing right now, wanting the piece and not asking anyone for it. libtorrent's HAVE
    // message makes them request at once; the adapter wakes them.
    std::vector<BoxId> would_request(BoxId up, int piece) const;

    // libtorrent's picker: up to `n` pieces `down` asks `up` for next, most wanted first.
    std::vector<int> pick(const Member& down, const Member& up, int n) const;
    // The uploader's choker round, if one is due at `now`.
    void ensure_round(Member& up, double now);
    // Runs a choker round at `now` (tick: counts towards the optimistic rotation).
    void choke_round(Member& up, bool tick, double now);
    // Where `up` believes the peer at the other end of `conn` is (its first missing piece).
    int estimated_position(const Member& up, int conn, double now) const;
    // The media time the peer on `conn` has reached, as `up` estimates it (client::estimated_position).
    std::chrono::nanoseconds estimated_media_position(const Member& up, int conn, double now) const;
    int told_first_missing(const Member& up, const Connection& cn) const;
    std::chrono::nanoseconds piece_time_ns() const;

    static double round_period(ChokerKind k);

    // The member at the other end of an open connection of `self`, without a lookup by box.
    const Member& peer_of(int conn, BoxId self) const {
        return peer(conns_[static_cast<std::size_t>(conn)], self);
    }

  private:
    int slot_of(BoxId box) const;
    Member& at(BoxId box);
    // The member at the other end of an open connection (no lookup by box: the hot paths ask this a lot).
    Member& peer(const Connection& cn, BoxId self) {
        return members_[static_cast<std::size_t>(self == cn.a ? cn.b_slot : cn.a_slot)];
    }
    const Member& peer(const Connection& cn, BoxId self) const {
        return members_[static_cast<std::size_t>(self == cn.a ? cn.b_slot : cn.a_slot)];
    }
    void detach(int conn, Member& m);
    void close(int conn);
    void on_interested(Member& up, int conn, double now);
    // The ranked interested peers of `up` (and `assume`), in a buffer reused by the next call.
    const std::vector<client::ChokeCandidate>& candidates(const Member& up, std::uint64_t assume,
                                                          double now) const;
    client::ChokerSlots slots_of(const Member& up) const;
    int desired_queue(const Pipe& p) const;
    void ask(Member& d, int piece);
    void unask(Member& d, int piece);
    std::optional<TransferSplit> split_for(Member& d, const Member& u, int conn,
                                           const std::function<std::uint64_t(int)>& delivered) const;

    int pieces_;
    std::uint64_t piece_length_;
    std::uint64_t total_;
    double piece_seconds_;
    std::deque<Member> members_;  // a deque: references stay valid as members join
    std::vector<int> free_members_;
    std::unordered_map<BoxId, int> slot_;
    std::vector<Connection> conns_;
    std::vector<int> free_conns_;
    std::uint64_t joins_ = 0;
    std::vector<BoxId> woken_;  // downloaders unchoked by a choker since the last pump
    std::vector<int> pumped_;   // pump(): the connections it walks
    mutable std::vector<client::ChokeCandidate> candidates_;  // candidates(): refilled at each call
    // pick(): the candidates by libtorrent's rank, refilled at each call.
    struct Ranked {
        std::int64_t key;
        std::uint32_t order;
        int piece;
        bool operator<(const Ranked& o) const { return key != o.key ? key < o.key : order < o.order; }
    };
    mutable std::vector<Ranked> ranked_;
};

}  // namespace toast::sim
