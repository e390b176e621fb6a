// Pure parts of playback: MP4 index placement, resume points, the status line, and the
// StreamWatcher's handling of index reads and seeks in player mode.
#include <catch2/catch.hpp>

#include <cstring>

#include "client/core/mp4_layout.hpp"
#include "client/core/resume_point.hpp"
#include "client/core/status_line.hpp"
#include "client/core/stream_watcher.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

void box(std::vector<std::uint8_t>& out, const char* type, std::uint32_t size) {
    for (int s = 24; s >= 0; s -= 8)
        out.push_back(static_cast<std::uint8_t>(size >> s));
    out.insert(out.end(), type, type + 4);
    for (std::uint32_t i = 8; i < size; ++i)
        out.push_back(0);
}

}  // namespace

TEST_CASE("an MP4 with mdat before moov has its index at the end", "[client][playback][mp4]") {
    std::vector<std::uint8_t> head;
    box(head, "ftyp", 32);
    box(head, "free", 8);
    // mdat: header only in the head bytes, its size says where it ends.
    const std::uint32_t mdat_size = 5000;
    for (int s = 24; s >= 0; s -= 8)
        head.push_back(static_cast<std::uint8_t>(mdat_size >> s));
    head.insert(head.end(), {'m', 'd', 'a', 't'});
    auto l = inspect_mp4_head(head, Bytes(32 + 8 + 5000 + 700));
    CHECK(l.placement == Mp4IndexPlacement::index_at_end);
    CHECK(l.index_begin == ByteOffset(5040));
    CHECK(l.index_end == ByteOffset(5740));
}

TEST_CASE("an MP4 with moov first needs nothing special", "[client][playback][mp4]") {
    std::vector<std::uint8_t> head;
    box(head, "ftyp", 24);
    box(head, "moov", 100);
    box(head, "mdat", 16);
    CHECK(inspect_mp4_head(head, Bytes(140)).placement == Mp4IndexPlacement::index_first);
}

TEST_CASE("a 64-bit mdat size is read from its largesize field", "[client][playback][mp4]") {
    std::vector<std::uint8_t> head;
    box(head, "ftyp", 16);
    head.insert(head.end(), {0, 0, 0, 1, 'm', 'd', 'a', 't'});
    const std::uint64_t mdat = 6ull << 30;
    for (int s = 56; s >= 0; s -= 8)
        head.push_back(static_cast<std::uint8_t>(mdat >> s));
    auto l = inspect_mp4_head(head, Bytes(16 + mdat + 4096));
    CHECK(l.placement == Mp4IndexPlacement::index_at_end);
    CHECK(l.index_begin == ByteOffset(16 + mdat));
}

TEST_CASE("a box running to the end of a title of 2^64-1 bytes ends the walk without wrapping",
          "[client][playback][mp4]") {
    // After a size-0 box the offset is the title's end: at + 8 must not wrap past 2^64, or the next box
    // header would be read far outside the head (undefined behaviour).
    std::vector<std::uint8_t> head;
    box(head, "ftyp", 24);
    head.insert(head.end(), {0, 0, 0, 0, 'f', 'r', 'e', 'e'});
    CHECK(inspect_mp4_head(head, Bytes(UINT64_MAX)).placement == Mp4IndexPlacement::unknown);
}

TEST_CASE("non-MP4, truncated and damaged heads are told apart", "[client][playback][mp4]") {
    std::vector<std::uint8_t> ts(188, 0);
    ts[0] = 0x47;  // MPEG-TS sync byte
    CHECK(inspect_mp4_head(ts, Bytes(188 * 100)).placement == Mp4IndexPlacement::not_mp4);
    CHECK(inspect_mp4_head({}, Bytes(100)).placement == Mp4IndexPlacement::not_mp4);

    std::vector<std::uint8_t> head;
    box(head, "ftyp", 24);
    head.resize(28);  // the next box header is cut off
    CHECK(inspect_mp4_head(head, Bytes(1000)).placement == Mp4IndexPlacement::unknown);

    std::vector<std::uint8_t> lying;
    box(lying, "ftyp", 24);
    lying.insert(lying.end(), {0, 0, 0x10, 0, 'm', 'd', 'a', 't'});  // mdat of 4096 bytes in a 1000-byte file
    CHECK(inspect_mp4_head(lying, Bytes(1000)).placement == Mp4IndexPlacement::unknown);

    std::vector<std::uint8_t> tiny;
    box(tiny, "ftyp", 24);
    tiny.insert(tiny.end(), {0, 0, 0, 4, 'f', 'r', 'e', 'e'});  // size below its own header
    CHECK(inspect_mp4_head(tiny, Bytes(1000)).placement == Mp4IndexPlacement::unknown);

    std::vector<std::uint8_t> to_end;
    box(to_end, "ftyp", 24);
    to_end.insert(to_end.end(), {0, 0, 0, 0, 'm', 'd', 'a', 't'});  // size 0: mdat runs to the end, no index
    CHECK(inspect_mp4_head(to_end, Bytes(1000)).placement == Mp4IndexPlacement::unknown);
}

TEST_CASE("resume points round-trip and reject another title's position", "[client][playback][resume]") {
    ResumePoint p{Bytes(1000), ByteOffset(400)};
    auto text = format_resume_point(p);
    CHECK(text == "{\"title_size\":1000,\"offset\":400}\n");
    std::string error;
    CHECK(parse_resume_point(text, Bytes(1000), &error) == p);

    CHECK_FALSE(parse_resume_point(text, Bytes(999), &error));
    CHECK(error == "title_size: 1000 is not this title's size 999");
    CHECK_FALSE(parse_resume_point("{\"title_size\":1000,\"offset\":1001}", Bytes(1000), &error));
    CHECK(error == "offset: 1001 is past the end (1000 bytes)");
    CHECK_FALSE(parse_resume_point("not json", Bytes(1000), &error));
    CHECK(error == "not a JSON object");
    CHECK_FALSE(parse_resume_point("{\"title_size\":1000}", Bytes(1000), &error));
    CHECK(error == "offset: missing");
    CHECK_FALSE(parse_resume_point("{\"title_size\":1000,\"offset\":-3}", Bytes(1000), &error));
    CHECK(error == "offset: not a non-negative integer");
    CHECK_FALSE(parse_resume_point("{\"title_size\":1000,\"offset\":3,\"x\":1}", Bytes(1000), &error));
    CHECK(error == "x: unknown key");
    // Watched to the end: start again from the beginning.
    CHECK(parse_resume_point("{\"title_size\":1000,\"offset\":1000}", Bytes(1000))->offset == ByteOffset(0));
    CHECK(resume_point_file_name("movie.mp4") == ".movie.mp4.position");
}

TEST_CASE("the status line shows state, position, buffer, sources, stalls and peers",
          "[client][playback][status]") {
    StatusFigures f;
    f.state = PlaybackState::playing;
    f.position = 62s;
    f.duration = 3420s;
    f.buffer_ahead = 12500ms;
    f.bytes_from_peers = 120ull << 20;
    f.bytes_from_server = 8ull << 20;
    f.stalls = 1;
    f.stall_time = 400ms;
    f.peers = 3;
    CHECK(
        format_status_line(f) ==
        "playing 01:02/57:00 | buffer 12.5s | peers 3 | from peers 120 MiB, server 8 MiB | stalls 1 (0.4s)");
    f.duration = 3h + 5s;
    f.first_byte = 87ms;
    CHECK(format_status_line(f).find("/3:00:05 |") != std::string::npos);
    CHECK(format_status_line(f).ends_with(" | first byte 87ms"));
    CHECK(refresh_in_place("abc") == "\rabc\x1b[K");
    CHECK(format_clock(-5s) == "00:00");
}

namespace {

// 10 pieces of 1000 bytes at 8000 bit/s: one piece is one second of media.
TitleGeometry geometry10() {
    return *TitleGeometry::make(Bytes(10'000), Bytes(1000), BitRate(8000));
}

StreamWatcherConfig player_config() {
    StreamWatcherConfig c;
    c.mode = WatcherMode::player;
    c.seek_threshold = Bytes(2500);
    return c;
}

}  // namespace

TEST_CASE("reads inside the index range neither move the playhead nor count as seeks",
          "[client][playback][watcher]") {
    const SteadyTime t0{};
    PieceSet had(PieceCount(10));
    had.set(PieceIndex(0));
    StreamWatcher w(geometry10(), player_config(), t0, had);
    w.set_index_range(ByteOffset(9200), ByteOffset(10'000));
    CHECK(w.on_player_read(ByteOffset(0), Bytes(500), t0) == ReadKind::first);
    CHECK(w.on_player_read(ByteOffset(9200), Bytes(800), t0 + 10ms) == ReadKind::index);
    CHECK(w.seeks() == 0);
    CHECK(w.read_frontier() == ByteOffset(500));
    // The index piece is missing: the read waiting for it makes it urgent.
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(9)});
    // Back from the index to where it left off: sequential.
    CHECK(w.on_player_read(ByteOffset(500), Bytes(500), t0 + 20ms) == ReadKind::sequential);
    // A read only partly inside the index range is an ordinary (here: far, so seeking) read.
    CHECK(w.on_player_read(ByteOffset(8000), Bytes(1500), t0 + 30ms) == ReadKind::seek);
}

TEST_CASE("a seek drops urgent reads before its target and keeps the ones after it",
          "[client][playback][watcher]") {
    const SteadyTime t0{};
    PieceSet had(PieceCount(10));
    had.set(PieceIndex(0));
    StreamWatcher w(geometry10(), player_config(), t0, had);
    w.set_index_range(ByteOffset(9500), ByteOffset(10'000));
    w.on_player_read(ByteOffset(0), Bytes(1000), t0);
    w.on_player_read(ByteOffset(1000), Bytes(1), t0 + 1ms);    // waits for piece 1
    w.on_player_read(ByteOffset(9500), Bytes(500), t0 + 2ms);  // index: waits for piece 9
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(1), PieceIndex(9)});
    CHECK(w.on_player_read(ByteOffset(6100), Bytes(1), t0 + 3ms) == ReadKind::seek);
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(6), PieceIndex(9)});
    CHECK(w.playhead_piece() == PieceIndex(6));
    CHECK(w.state() == PlaybackState::seeking);
    w.on_piece_had(PieceIndex(6), t0 + 250ms);
    CHECK(w.state() == PlaybackState::playing);
    REQUIRE(w.seek_latencies().size() == 1);
    CHECK(w.seek_latencies()[0] == 247ms);
    CHECK(w.blocked_reads() == std::vector<PieceIndex>{PieceIndex(9)});
}

TEST_CASE("a request near the playhead is not a seek, one far from it is even over bytes sent before",
          "[client][playback][watcher]") {
    const SteadyTime t0{};
    PieceSet had(PieceCount(10));
    for (int p = 0; p < 10; ++p)
        had.set(PieceIndex(p));
    StreamWatcher w(geometry10(), player_config(), t0, had);
    CHECK(w.on_player_read(ByteOffset(0), Bytes(9000), t0) == ReadKind::first);  // read far ahead
    w.tick(t0 + 4s);
    CHECK(w.playhead() == ByteOffset(4000));
    // It dropped its read-ahead and asks again from where it plays (the threshold is 2500 bytes).
    CHECK(w.on_player_read(ByteOffset(4100), Bytes(100), t0 + 4s) == ReadKind::sequential);
    CHECK(w.on_player_read(ByteOffset(2000), Bytes(100), t0 + 4s) == ReadKind::sequential);
    CHECK(w.read_frontier() == ByteOffset(9000));
    // Far ahead of the playhead: a seek, although bytes up to 9000 were sent before.
    CHECK(w.on_player_read(ByteOffset(7000), Bytes(100), t0 + 4s) == ReadKind::seek);
    CHECK(w.playhead() == ByteOffset(7000));
    // The rest of a request is a continuation: never a seek, wherever the playhead is.
    CHECK(w.on_player_read(ByteOffset(400), Bytes(100), t0 + 4s, true) == ReadKind::sequential);
    CHECK(w.playhead() == ByteOffset(7000));
    CHECK(w.seeks() == 1);
    CHECK(w.on_player_read(ByteOffset(1000), Bytes(100), t0 + 4s) == ReadKind::seek);
    CHECK(w.seeks() == 2);
    CHECK(w.playhead() == ByteOffset(1000));
}
