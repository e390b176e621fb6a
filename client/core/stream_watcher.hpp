// StreamWatcher: the viewer's playhead (thesis §5.1.2). It decides where playback is, when it starts, when it
// stalls and when each piece will be needed; the policies, the give-up horizon and the fallback planner read
// those answers. Time is passed in with every event, so tests drive it with a fake clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "client/core/piece_types.hpp"
#include "client/core/title_geometry.hpp"

namespace toast::client {

using SteadyTime = std::chrono::steady_clock::time_point;

enum class PlaybackState {
    starting,  // waiting for the startup buffer (player mode: also for the player's first read)
    playing,
    stalled,   // the playhead reached a piece that is not present
    seeking,   // player mode / seek(): waiting for the target piece; not counted as a stall
    paused,    // pause(), or player mode with no reads for pause_after
    finished,  // the playhead reached the end of the title
};
std::string_view to_string(PlaybackState s);

enum class WatcherMode {
    clock,   // position = start + bitrate x playing time (the thesis's conceptual viewer)
    player,  // a real player's reads drive the position; the clock still advances it between reads. Once
             // the player reports its own position (on_reported_position: mpv's IPC), that is the position
             // and reads only say what the player holds.
};

struct StreamWatcherConfig {
    WatcherMode mode = WatcherMode::clock;
    // Media time that must be present from the start position before playback begins. Zero means the piece
    // holding the start position is enough.
    std::chrono::nanoseconds startup_buffer{0};
    // The same in bytes; playback waits for the larger of the two.
    Bytes startup_bytes{0};
    // Where playback begins (a resumed title starts at its saved position).
    ByteOffset start_offset{0};
    // Player mode: a request starting farther than this from the playhead is a seek. Only the playhead
    // counts: bytes sent earlier tell nothing, since a player that asks again has dropped them (and on
    // loopback socket buffers hold megabytes).
    Bytes seek_threshold{4 * 1024 * 1024};
    // Player mode: no reads for this long, once the playhead has reached the read frontier, means the
    // player paused. A player with a large cache (mpv reads a whole short title at once) stops reading
    // while it plays what it holds: its playhead goes on until the frontier.
    std::chrono::nanoseconds pause_after = std::chrono::seconds(10);
    // Player mode: a read waiting for a piece is urgent (the server fetches it at once) when the piece is
    // needed within this much media time of the playhead. A read far ahead is the player filling its
    // cache: it waits for the swarm, and the fallback takes the piece when its deadline comes near.
    std::chrono::nanoseconds urgent_lead = std::chrono::seconds(2);
    // ... or when it has waited this long, whatever its distance: the player gives up on a read at some
    // point (the endpoint answers 503 after its wait timeout), and that would end its playback.
    std::chrono::nanoseconds read_patience = std::chrono::seconds(30);
    // Player mode with reported positions: how far the clock may carry the playhead past the last report
    // (mpv reports every frame while it plays; a silence means it does not play).
    std::chrono::nanoseconds report_slack = std::chrono::seconds(1);
};

// Pieces peers are sending that a viewer holds, and how near its deadline such a piece is still left to
// them: the server's last moment (its fetch estimate + margin).
struct PeerHeld {
    const PieceSet* pieces = nullptr;
    std::chrono::nanoseconds lead{0};
};

struct StallStats {
    std::uint32_t count = 0;
    std::chrono::nanoseconds total{0};
    std::chrono::nanoseconds longest{0};
};

// What a player read turned out to be.
enum class ReadKind {
    ignored,     // clock mode, or the title already finished
    first,       // the player's first read: sets the position, no seek counted
    sequential,  // near the playhead, or the continuation of a request
    seek,        // far from the frontier: the playhead jumps there
    index,       // inside the index range (an MP4 index at the end): the player finds its way, not plays
};

// Invariants:
//  - playhead() only moves forward except through seek(), a seeking read or a reported position.
//  - In state playing, every piece from the start of the title's current playback run up to the playhead
//    piece was present when the playhead entered it; the clock never carries the playhead past a missing
//    piece (it stalls at the start of that piece instead, at the exact time it would have reached it,
//    however coarse the ticks).
//  - Player mode: the playhead never passes the read frontier (the player cannot show bytes it has not
//    read), or, once the player reports its position, the last report plus report_slack.
//  - Events must come in time order; an event earlier than the last one is treated as happening at the last.
class StreamWatcher {
  public:
    // `had` (pieces already stored, e.g. on resume) must have piece_count bits; any other size means none.
    StreamWatcher(TitleGeometry geometry, StreamWatcherConfig config, SteadyTime start, PieceSet had = {});

    // --- events ---
    void on_piece_had(PieceIndex p, SteadyTime now);
    // The piece left local storage (ejected by the bounded buffer).
    void on_piece_lost(PieceIndex p, SteadyTime now);
    void tick(SteadyTime now);
    // Player mode: the player says it shows `media_time` now (mpv's time-pos). From the first report on, the
    // reports drive the playhead: a jump farther than seek_threshold is a seek, the clock advances the
    // playhead between reports by at most report_slack, and reads no longer move it, seek or pause.
    void on_reported_position(std::chrono::nanoseconds media_time, SteadyTime now);
    // Player mode: the player says its picture stands still (paused, or waiting for data) or moves again.
    void on_reported_pause(bool paused, SteadyTime now);
    // Player mode: the player asked for bytes [offset, offset + length). `continuation`: these bytes follow
    // the previous read of the same request (the next chunk of one HTTP response), so they are sequential
    // whatever happened on other connections in between; the first read of a request is not one.
    ReadKind on_player_read(ByteOffset offset, Bytes length, SteadyTime now, bool continuation = false);
    void pause(SteadyTime now);
    void resume(SteadyTime now);
    // Jump the playhead to `offset` (VCR seek, or a player read far from the frontier).
    void seek(ByteOffset offset, SteadyTime now);
    // Player mode: bytes [begin, end) hold the container's index (an MP4 'moov' after the media data). A
    // player reads them before it plays and again when it seeks; such reads neither move the playhead nor
    // count as seeks. Learned from the title's first bytes, so it is set after construction; empty clears it.
    void set_index_range(ByteOffset begin, ByteOffset end);

    // --- queries (as of the last event) ---
    PlaybackState state() const { return state_; }
    WatcherMode mode() const { return config_.mode; }
    ByteOffset playhead() const;
    PieceIndex playhead_piece() const { return geometry_.piece_at(playhead()); }
    // Media time already played inside the playhead piece.
    std::chrono::nanoseconds into_playhead_piece() const;
    // How long until playback needs the first byte of p, if it played on from now; zero when p is at or
    // behind the playhead piece.
    std::chrono::nanoseconds time_until_needed(PieceIndex p) const;
    SteadyTime deadline(PieceIndex p, SteadyTime now) const { return now + time_until_needed(p); }
    // Media time present contiguously from the playhead (buffer health).
    std::chrono::nanoseconds buffer_ahead() const;
    std::optional<std::chrono::nanoseconds> startup_delay() const { return startup_delay_; }
    // Stalls so far; an ongoing stall counts up to `now`.
    StallStats stalls(SteadyTime now) const;
    // The length of every stall that has ended, in order (the box's QoE reports send them; at most
    // kMaxStallRecords are kept).
    const std::vector<std::chrono::nanoseconds>& ended_stalls() const { return ended_stalls_; }
    static constexpr std::size_t kMaxStallRecords = 100'000;
    std::chrono::nanoseconds playing_time() const { return playing_time_; }
    bool reached_end() const { return state_ == PlaybackState::finished; }
    // Player mode: the player reports its position (the playhead is the player's, not estimated).
    bool position_reported() const { return reported_.has_value(); }
    const PieceSet& had() const { return had_; }
    const TitleGeometry& geometry() const { return geometry_; }

    // Player mode.
    ByteOffset read_frontier() const { return frontier_; }
    Bytes read_ahead() const { return frontier_ - playhead(); }
    std::uint32_t seeks() const { return seeks_; }
    // Time from each seek to the target piece being present.
    const std::vector<std::chrono::nanoseconds>& seek_latencies() const { return seek_latencies_; }
    // Pieces a player read is waiting for, ascending.
    std::vector<PieceIndex> blocked_reads() const;
    // The blocked reads the server must take at once, ascending: those inside the index range (the player
    // reads it before it plays), those waiting for read_patience, and those needed within urgent_lead of the
    // playhead, or within `peers.lead` for a piece peers hold. A player fills its cache far ahead of what it
    // shows (mpv reads a whole short title at once): with a fixed lead every piece of its first seconds would
    // be a server fetch although peers are sending it. While the player waits (starting, stalled, seeking)
    // the playhead stands still, so a read's time until needed counts down from when it blocked.
    std::vector<PieceIndex> urgent_reads(PeerHeld peers = {}) const;

  private:
    void advance_to(SteadyTime now);
    void try_start(SteadyTime now);
    void enter_piece_or_stall(SteadyTime at);
    void begin_stall(SteadyTime at);
    void end_stall(SteadyTime at);
    void jump_to(ByteOffset offset, SteadyTime now);
    std::chrono::nanoseconds cap() const;

    TitleGeometry geometry_;
    StreamWatcherConfig config_;
    PieceSet had_;
    PlaybackState state_ = PlaybackState::starting;
    SteadyTime start_;
    SteadyTime last_;                     // time of the last event processed
    std::chrono::nanoseconds media_pos_;  // the playhead as media time
    std::chrono::nanoseconds playing_time_{0};
    std::optional<std::chrono::nanoseconds> startup_delay_;
    StallStats stalls_;
    std::vector<std::chrono::nanoseconds> ended_stalls_;
    SteadyTime stall_start_{};
    SteadyTime seek_start_{};
    std::vector<std::chrono::nanoseconds> seek_latencies_;
    std::uint32_t seeks_ = 0;
    bool seen_read_ = false;
    ByteOffset frontier_;
    SteadyTime last_read_{};
    struct BlockedRead {
        PieceIndex piece;
        SteadyTime since;
        bool index = false;  // a read of the index range
    };
    std::vector<BlockedRead> blocked_;
    // Player mode: when the playhead reached the read frontier (unset while it is behind it).
    std::optional<SteadyTime> at_frontier_since_;
    // Player mode: the player's last reported position, once it reports one.
    std::optional<std::chrono::nanoseconds> reported_;
    ByteOffset index_begin_{0}, index_end_{0};
};

}  // namespace toast::client
