#include <catch2/catch.hpp>

#include "client/core/stream_watcher.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

// 10 pieces of 1000 bytes except the last (500), at 8000 bit/s: one piece is one second of media.
TitleGeometry geometry() {
    return *TitleGeometry::make(Bytes(9500), Bytes(1000), BitRate(8000));
}

const SteadyTime t0{std::chrono::seconds(1000)};

PieceSet pieces(std::initializer_list<int> list) {
    PieceSet s(PieceCount(10));
    for (int p : list)
        s.set(PieceIndex(p));
    return s;
}

PieceSet all_pieces() {
    PieceSet s(PieceCount(10));
    s.set_all();
    return s;
}

}  // namespace

TEST_CASE("geometry converts between pieces, bytes and media time", "[client][geometry]") {
    auto g = geometry();
    CHECK(g.piece_count() == PieceCount(10));
    CHECK(g.last_piece_size() == Bytes(500));
    CHECK(g.piece_size(PieceIndex(9)) == Bytes(500));
    CHECK(g.piece_size(PieceIndex(3)) == Bytes(1000));
    CHECK(g.piece_start(PieceIndex(3)) == ByteOffset(3000));
    CHECK(g.piece_end(PieceIndex(9)) == ByteOffset(9500));
    CHECK(g.piece_at(ByteOffset(2999)) == PieceIndex(2));
    CHECK(g.piece_at(ByteOffset(3000)) == PieceIndex(3));
    CHECK(g.piece_at(ByteOffset(99999)) == PieceIndex(9));
    CHECK(g.media_time_at(ByteOffset(1500)) == 1500ms);
    CHECK(g.offset_at(2500ms) == ByteOffset(2500));
    CHECK(g.offset_at(1h) == ByteOffset(9500));
    CHECK(g.piece_duration() == 1s);
    CHECK(g.title_duration() == 9500ms);
    CHECK(g.pieces_in(2500ms) == PieceCount(3));
    CHECK(g.pieces_in(0s) == PieceCount(0));
    CHECK(g.pieces_in(1h) == PieceCount(10));
}

TEST_CASE("geometry rejects zero sizes and rates with a reason", "[client][geometry]") {
    std::string error;
    CHECK_FALSE(TitleGeometry::make(Bytes(0), Bytes(1000), BitRate(8000), &error));
    CHECK(error == "title size must be positive");
    CHECK_FALSE(TitleGeometry::make(Bytes(10), Bytes(0), BitRate(8000), &error));
    CHECK(error == "piece length must be positive");
    CHECK_FALSE(TitleGeometry::make(Bytes(10), Bytes(1), BitRate(0), &error));
    CHECK(error == "bitrate must be positive");
    CHECK_FALSE(TitleGeometry::make(Bytes(1ull << 40), Bytes(1), BitRate(1), &error));
    CHECK(error == "too many pieces for a piece index");
}

TEST_CASE("geometry converts large titles without overflow", "[client][geometry]") {
    // 40 GiB at 6 Mbps: b * 8e9 overflows 64 bits.
    auto g = *TitleGeometry::make(Bytes(40ull << 30), Bytes(4 << 20), BitRate(6'000'000));
    auto end = g.media_time_at(g.end());
    CHECK(end > std::chrono::hours(15));
    CHECK(g.offset_at(end) == g.end());
    auto mid = ByteOffset(20ull << 30);
    CHECK(g.offset_at(g.media_time_at(mid)) == mid);
}

TEST_CASE("playback starts when the first piece arrives and the delay is recorded", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0);
    CHECK(w.state() == PlaybackState::starting);
    w.tick(t0 + 2s);
    CHECK(w.state() == PlaybackState::starting);
    CHECK(w.playhead() == ByteOffset(0));
    w.on_piece_had(PieceIndex(1), t0 + 2500ms);
    CHECK(w.state() == PlaybackState::starting);
    w.on_piece_had(PieceIndex(0), t0 + 3s);
    CHECK(w.state() == PlaybackState::playing);
    REQUIRE(w.startup_delay());
    CHECK(*w.startup_delay() == 3s);
    // Position = bitrate x playing time, which excludes the startup.
    w.tick(t0 + 4500ms);
    CHECK(w.playhead() == ByteOffset(1500));
    CHECK(w.playing_time() == 1500ms);
}

TEST_CASE("a startup buffer holds playback until that much media is present", "[client][watcher]") {
    StreamWatcherConfig c;
    c.startup_buffer = 2500ms;  // bytes [0, 2500): pieces 0, 1, 2
    StreamWatcher w(geometry(), c, t0);
    w.on_piece_had(PieceIndex(0), t0 + 1s);
    w.on_piece_had(PieceIndex(1), t0 + 2s);
    CHECK(w.state() == PlaybackState::starting);
    w.on_piece_had(PieceIndex(2), t0 + 3s);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(*w.startup_delay() == 3s);
}

TEST_CASE("a startup buffer in bytes waits for the larger of bytes and time", "[client][watcher]") {
    StreamWatcherConfig c;
    c.startup_buffer = 500ms;       // 500 bytes: piece 0
    c.startup_bytes = Bytes(1001);  // bytes [0, 1001): pieces 0 and 1
    StreamWatcher w(geometry(), c, t0, pieces({0}));
    CHECK(w.state() == PlaybackState::starting);
    w.on_piece_had(PieceIndex(1), t0 + 700ms);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(*w.startup_delay() == 700ms);
}

TEST_CASE("the playhead stalls exactly when it reaches a missing piece, however coarse the ticks",
          "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, pieces({0, 1}));
    CHECK(w.state() == PlaybackState::playing);
    CHECK(*w.startup_delay() == 0s);
    // One tick long after piece 2 was due (at t0 + 2 s): the stall began at t0 + 2 s, not at the tick.
    w.tick(t0 + 5s);
    CHECK(w.state() == PlaybackState::stalled);
    CHECK(w.playhead() == ByteOffset(2000));
    CHECK(w.playhead_piece() == PieceIndex(2));
    CHECK(w.stalls(t0 + 5s).count == 1);
    CHECK(w.stalls(t0 + 5s).total == 3s);
    w.on_piece_had(PieceIndex(2), t0 + 6s);
    CHECK(w.state() == PlaybackState::playing);
    auto s = w.stalls(t0 + 6s);
    CHECK(s.count == 1);
    CHECK(s.total == 4s);
    CHECK(s.longest == 4s);
    // Playback resumes from the stall point: 0.5 s later it is half-way through piece 2.
    w.tick(t0 + 6500ms);
    CHECK(w.playhead() == ByteOffset(2500));
    CHECK(w.playing_time() == 2500ms);
}

TEST_CASE("stalls are counted with their total and longest duration", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, pieces({0, 2, 4, 5, 6, 7, 8, 9}));
    w.on_piece_had(PieceIndex(1), t0 + 1500ms);  // due at 1 s: 0.5 s stall
    w.on_piece_had(PieceIndex(3), t0 + 5s);      // due at 1.5 + 2 = 3.5 s: 1.5 s stall
    auto s = w.stalls(t0 + 5s);
    CHECK(s.count == 2);
    CHECK(s.total == 2s);
    CHECK(s.longest == 1500ms);
    w.tick(t0 + 1h);
    CHECK(w.state() == PlaybackState::finished);
    CHECK(w.reached_end());
    CHECK(w.playhead() == ByteOffset(9500));
    CHECK(w.playing_time() == 9500ms);
    CHECK(w.stalls(t0 + 1h).count == 2);
}

TEST_CASE("a piece that arrives before it is due causes no stall", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, pieces({0}));
    for (int p = 1; p < 10; ++p)
        w.on_piece_had(PieceIndex(p), t0 + std::chrono::milliseconds(p * 1000 - 1));
    w.tick(t0 + 20s);
    CHECK(w.reached_end());
    CHECK(w.stalls(t0 + 20s).count == 0);
}

TEST_CASE("deadlines say when playback will need each piece", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, pieces({0, 1, 2}));
    w.tick(t0 + 1250ms);
    CHECK(w.playhead_piece() == PieceIndex(1));
    CHECK(w.into_playhead_piece() == 250ms);
    CHECK(w.time_until_needed(PieceIndex(0)) == 0s);
    CHECK(w.time_until_needed(PieceIndex(1)) == 0s);
    CHECK(w.time_until_needed(PieceIndex(2)) == 750ms);
    CHECK(w.time_until_needed(PieceIndex(5)) == 3750ms);
    CHECK(w.deadline(PieceIndex(5), t0 + 1250ms) == t0 + 5s);
    CHECK(w.buffer_ahead() == 1750ms);
}

TEST_CASE("an ejected piece ahead of the playhead stalls playback again", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, all_pieces());
    w.on_piece_lost(PieceIndex(4), t0 + 1s);
    CHECK_FALSE(w.had().has(PieceIndex(4)));
    w.tick(t0 + 10s);
    CHECK(w.state() == PlaybackState::stalled);
    CHECK(w.playhead() == ByteOffset(4000));
}

TEST_CASE("pause stops the playhead and resume continues it", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, all_pieces());
    w.pause(t0 + 1s);
    CHECK(w.state() == PlaybackState::paused);
    w.tick(t0 + 5s);
    CHECK(w.playhead() == ByteOffset(1000));
    w.resume(t0 + 5s);
    w.tick(t0 + 6s);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.playhead() == ByteOffset(2000));
    CHECK(w.stalls(t0 + 6s).count == 0);
}

TEST_CASE("a resumed title starts at its saved position", "[client][watcher]") {
    StreamWatcherConfig c;
    c.start_offset = ByteOffset(5200);
    StreamWatcher w(geometry(), c, t0, pieces({0, 1, 5}));
    CHECK(w.playhead_piece() == PieceIndex(5));
    CHECK(w.state() == PlaybackState::playing);
    w.tick(t0 + 2s);
    CHECK(w.state() == PlaybackState::stalled);
    CHECK(w.playhead() == ByteOffset(6000));
}

TEST_CASE("a seek to a missing piece waits without counting a stall and records its latency",
          "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, pieces({0, 1}));
    w.seek(ByteOffset(6100), t0 + 500ms);
    CHECK(w.seeks() == 1);
    CHECK(w.state() == PlaybackState::seeking);
    CHECK(w.playhead_piece() == PieceIndex(6));
    w.on_piece_had(PieceIndex(6), t0 + 800ms);
    CHECK(w.state() == PlaybackState::playing);
    REQUIRE(w.seek_latencies().size() == 1);
    CHECK(w.seek_latencies()[0] == 300ms);
    CHECK(w.stalls(t0 + 800ms).count == 0);
}

TEST_CASE("player reads drive the playhead, which never passes the read frontier",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    StreamWatcher w(geometry(), c, t0, all_pieces());
    // No read yet: the player has not started.
    w.tick(t0 + 2s);
    CHECK(w.state() == PlaybackState::starting);
    CHECK(w.on_player_read(ByteOffset(0), Bytes(1500), t0 + 2s) == ReadKind::first);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(*w.startup_delay() == 2s);
    CHECK(w.read_ahead() == Bytes(1500));
    // 3 s later the clock says 3000 bytes, but the player has only read 1500.
    w.tick(t0 + 5s);
    CHECK(w.playhead() == ByteOffset(1500));
    CHECK(w.on_player_read(ByteOffset(1500), Bytes(2000), t0 + 5s) == ReadKind::sequential);
    w.tick(t0 + 6s);
    CHECK(w.playhead() == ByteOffset(2500));
    CHECK(w.read_ahead() == Bytes(1000));
}

TEST_CASE("a player read far from the frontier is a seek", "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    StreamWatcher w(geometry(), c, t0, pieces({0, 1, 2}));
    w.on_player_read(ByteOffset(0), Bytes(1000), t0);
    CHECK(w.on_player_read(ByteOffset(7100), Bytes(500), t0 + 1s) == ReadKind::seek);
    CHECK(w.seeks() == 1);
    CHECK(w.state() == PlaybackState::seeking);
    CHECK(w.playhead() == ByteOffset(7100));
    CHECK(w.read_frontier() == ByteOffset(7600));
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(7)});
    w.on_piece_had(PieceIndex(7), t0 + 1200ms);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.blocked_reads().empty());
    CHECK(w.seek_latencies() == std::vector<std::chrono::nanoseconds>{200ms});
}

TEST_CASE("no player reads for a while at the read frontier means paused, and a read resumes",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.pause_after = 3s;
    StreamWatcher w(geometry(), c, t0, all_pieces());
    w.on_player_read(ByteOffset(0), Bytes(2000), t0);
    w.tick(t0 + 4s);
    // At the frontier since t0 + 2 s: not yet 3 s without a read there.
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.playhead() == ByteOffset(2000));
    w.tick(t0 + 5500ms);
    CHECK(w.state() == PlaybackState::paused);
    CHECK(w.playhead() == ByteOffset(2000));
    CHECK(w.on_player_read(ByteOffset(2000), Bytes(100), t0 + 10s) == ReadKind::sequential);
    CHECK(w.state() == PlaybackState::playing);
    w.tick(t0 + 10s + 100ms);
    CHECK(w.playhead() == ByteOffset(2100));
}

TEST_CASE("a player that read the whole title at once plays on to the end, not into a pause",
          "[client][watcher][player]") {
    // mpv fills its cache with a short title in half a second and then reads nothing while it plays.
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.pause_after = 3s;
    StreamWatcher w(geometry(), c, t0, all_pieces());
    w.on_player_read(ByteOffset(0), Bytes(9500), t0);
    w.tick(t0 + 6s);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.playhead() == ByteOffset(6000));
    w.tick(t0 + 9s);
    CHECK(w.playhead() == ByteOffset(9000));
    w.tick(t0 + 9600ms);
    CHECK(w.reached_end());
    CHECK(w.playhead() == ByteOffset(9500));
}

TEST_CASE("a read waiting far ahead of the playhead is not urgent until it comes near or waits too long",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    c.urgent_lead = 2s;
    c.read_patience = 30s;
    StreamWatcher w(geometry(), c, t0, pieces({0, 1, 2, 3, 4, 5}));
    CHECK(w.on_player_read(ByteOffset(0), Bytes(6000), t0) == ReadKind::first);
    // The player's cache fill reaches piece 6 while the playhead is at byte 0: 6 s ahead.
    CHECK(w.on_player_read(ByteOffset(6000), Bytes(500), t0, true) == ReadKind::sequential);
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(6)});
    CHECK(w.urgent_reads().empty());
    w.tick(t0 + 3s);
    CHECK(w.urgent_reads().empty());  // needed in 3 s
    w.tick(t0 + 4s);
    CHECK(w.urgent_reads() == std::vector<PieceIndex>{PieceIndex(6)});  // needed in 2 s
    w.on_piece_had(PieceIndex(6), t0 + 4100ms);
    CHECK(w.blocked_reads().empty());
    CHECK(w.urgent_reads().empty());

    // A read at the playhead is urgent at once; a read that waited read_patience is urgent however far.
    StreamWatcher v(geometry(), c, t0, pieces({0, 1, 2, 3, 4, 5, 6, 7}));
    v.on_player_read(ByteOffset(0), Bytes(8500), t0);
    v.on_player_read(ByteOffset(8000), Bytes(500), t0, true);
    CHECK(v.blocked_reads() == std::vector<PieceIndex>{PieceIndex(8)});
    CHECK(v.urgent_reads().empty());
    v.pause(t0 + 1s);
    v.tick(t0 + 31s);
    CHECK(v.urgent_reads() == std::vector<PieceIndex>{PieceIndex(8)});
}

TEST_CASE(
    "a read-ahead peers hold waits for them until the server's last moment, and a read blocking "
    "startup counts down while the player waits",
    "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    c.urgent_lead = 2s;
    c.read_patience = 30s;
    const auto held = pieces({0, 1, 2, 3});
    const PeerHeld peers{&held, 500ms};
    StreamWatcher w(geometry(), c, t0, pieces({0}));
    CHECK(w.on_player_read(ByteOffset(0), Bytes(1000), t0) == ReadKind::first);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.on_player_read(ByteOffset(1000), Bytes(500), t0, true) == ReadKind::sequential);
    // Needed in 1 s: inside the fixed lead, but peers hold it and the server's last moment is 0.5 s away.
    CHECK(w.urgent_reads() == std::vector<PieceIndex>{PieceIndex(1)});
    CHECK(w.urgent_reads(peers).empty());
    w.tick(t0 + 600ms);
    CHECK(w.urgent_reads(peers) == std::vector<PieceIndex>{PieceIndex(1)});
    // A piece no peer holds keeps the fixed lead.
    const auto none = pieces({});
    w.on_piece_had(PieceIndex(1), t0 + 700ms);
    CHECK(w.on_player_read(ByteOffset(2000), Bytes(500), t0 + 700ms, true) == ReadKind::sequential);
    CHECK(w.urgent_reads({&none, 500ms}) == std::vector<PieceIndex>{PieceIndex(2)});  // needed in 1.3 s
    CHECK(w.urgent_reads(peers).empty());

    // Before playback starts the playhead stands still: the read at it is urgent at once, and one 2 s ahead
    // becomes urgent once it has waited 2 s - 0.5 s.
    StreamWatcher v(geometry(), c, t0, pieces({}));
    CHECK(v.on_player_read(ByteOffset(0), Bytes(1000), t0) == ReadKind::first);
    CHECK(v.on_player_read(ByteOffset(2000), Bytes(500), t0, true) == ReadKind::sequential);
    CHECK(v.state() == PlaybackState::starting);
    CHECK(v.urgent_reads(peers) == std::vector<PieceIndex>{PieceIndex(0)});
    v.tick(t0 + 1400ms);
    CHECK(v.urgent_reads(peers) == std::vector<PieceIndex>{PieceIndex(0)});
    v.tick(t0 + 1600ms);
    CHECK(v.urgent_reads(peers) == (std::vector<PieceIndex>{PieceIndex(0), PieceIndex(2)}));
}

TEST_CASE("a waiting read at the playhead and in the index range is urgent at once",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    StreamWatcher w(geometry(), c, t0, pieces({}));
    w.set_index_range(ByteOffset(9000), ByteOffset(9500));
    CHECK(w.on_player_read(ByteOffset(9000), Bytes(500), t0) == ReadKind::index);
    CHECK(w.on_player_read(ByteOffset(0), Bytes(9500), t0) == ReadKind::first);
    CHECK(w.urgent_reads() == (std::vector<PieceIndex>{PieceIndex(0), PieceIndex(9)}));
}

TEST_CASE("a read of missing bytes marks only its first missing piece as blocked",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    StreamWatcher w(geometry(), c, t0, pieces({0}));
    w.on_player_read(ByteOffset(0), Bytes(9500), t0);  // "bytes=0-"
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(1)});
}

TEST_CASE("clock mode ignores player reads", "[client][watcher]") {
    StreamWatcher w(geometry(), {}, t0, all_pieces());
    CHECK(w.on_player_read(ByteOffset(5000), Bytes(10), t0 + 1s) == ReadKind::ignored);
    CHECK(w.seeks() == 0);
}

TEST_CASE("a player that reports its position drives the playhead, and its reads no longer do",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    c.pause_after = 3s;
    c.report_slack = 1s;
    StreamWatcher w(geometry(), c, t0, all_pieces());
    w.on_player_read(ByteOffset(0), Bytes(9500), t0);  // the whole title into the player's cache
    w.on_reported_position(0s, t0 + 100ms);
    CHECK(w.position_reported());
    w.on_reported_position(2s, t0 + 2100ms);
    CHECK(w.playhead() == ByteOffset(2000));
    // Between reports the clock carries it, at most report_slack past the last report.
    w.tick(t0 + 2600ms);
    CHECK(w.playhead() == ByteOffset(2500));
    w.tick(t0 + 8s);
    CHECK(w.playhead() == ByteOffset(3000));
    CHECK(w.state() == PlaybackState::playing);
    // Paused by the viewer: the position stays.
    w.on_reported_position(2500ms, t0 + 8s);
    w.on_reported_pause(true, t0 + 8s);
    w.tick(t0 + 20s);
    CHECK(w.state() == PlaybackState::paused);
    CHECK(w.playhead() == ByteOffset(2500));
    // Reads far away neither seek nor move it.
    CHECK(w.on_player_read(ByteOffset(8000), Bytes(500), t0 + 20s) == ReadKind::sequential);
    CHECK(w.playhead() == ByteOffset(2500));
    CHECK(w.seeks() == 0);
    w.on_reported_pause(false, t0 + 21s);
    w.on_reported_position(2500ms, t0 + 21s);
    w.tick(t0 + 21500ms);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.playhead() == ByteOffset(3000));
    // A jump is a seek.
    w.on_reported_position(7s, t0 + 22s);
    CHECK(w.seeks() == 1);
    CHECK(w.playhead() == ByteOffset(7000));
    // The end.
    w.on_reported_position(9500ms, t0 + 25s);
    CHECK(w.reached_end());
}

TEST_CASE("a reported position resumes where the player starts, and waits far ahead are not urgent",
          "[client][watcher][player]") {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2000);
    c.start_offset = ByteOffset(6000);
    c.urgent_lead = 2s;
    StreamWatcher w(geometry(), c, t0, pieces({0, 1, 2, 3, 4, 5, 6}));
    CHECK(w.playhead() == ByteOffset(6000));
    w.on_reported_position(6s, t0 + 500ms);
    CHECK(w.state() == PlaybackState::playing);
    CHECK(w.playhead() == ByteOffset(6000));
    CHECK(w.seeks() == 0);
    // The cache fill waits at piece 9, 3 s ahead: not urgent; at the playhead + 2 s it is.
    w.on_player_read(ByteOffset(9000), Bytes(500), t0 + 500ms, true);
    CHECK(w.urgent_reads().empty());
    w.on_reported_position(7s, t0 + 1500ms);
    CHECK(w.urgent_reads() == std::vector<PieceIndex>{PieceIndex(9)});
}
