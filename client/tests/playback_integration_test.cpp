// `toast-client play` end to end on 127.0.0.1: real videos generated with ffmpeg
// (H.264/AAC in MPEG-TS, in MP4 with the index first and in MP4 with the index at the end), ingested into the
// real toast-server, and decoded by ffmpeg through the client's local URL while the client downloads them.
// Decoding is compared frame by frame (ffmpeg's framecrc: timestamps and a CRC of every decoded video frame
// and audio packet) with decoding the original file, which proves zero decode errors, the full duration and,
// with -ss, the right timestamps.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <thread>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "client/core/stats.hpp"
#include "swarm_fixture.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using toast::client::StatsRecord;
using toast::client::testing::read_stats;
using toast::testing::ChildProcess;
using toast::testing::TempDir;

namespace {

constexpr int kSeconds = 16;
constexpr const char* kPieceSize = "32KiB";

enum class Container { ts, mp4_index_first, mp4_index_at_end };

// A kSeconds H.264/AAC test pattern with a keyframe every second. `noisy_kbps`: noise over the pattern so
// the video really takes that rate (a clean pattern compresses far below any target).
void make_video(const std::filesystem::path& out, Container c, int noisy_kbps = 0) {
    std::vector<std::string> args{"-v",
                                  "error",
                                  "-y",
                                  "-f",
                                  "lavfi",
                                  "-i",
                                  "testsrc=size=320x240:rate=25",
                                  "-f",
                                  "lavfi",
                                  "-i",
                                  "sine=frequency=440:sample_rate=44100",
                                  "-t",
                                  std::to_string(kSeconds),
                                  "-c:v",
                                  "libx264",
                                  "-preset",
                                  "ultrafast",
                                  "-g",
                                  "25",
                                  "-b:v",
                                  "1200k",
                                  "-c:a",
                                  "aac",
                                  "-b:a",
                                  "64k"};
    if (noisy_kbps > 0) {
        const auto rate = std::to_string(noisy_kbps) + "k";
        args.insert(args.end(), {"-vf", "noise=alls=20:allf=t", "-b:v", rate, "-maxrate", rate, "-bufsize",
                                 std::to_string(noisy_kbps / 2) + "k"});
    }
    if (c == Container::mp4_index_first) args.insert(args.end(), {"-movflags", "+faststart"});
    args.push_back(out.string());
    auto r = toast::testing::run(FFMPEG_BIN, args, 60s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
}

// ffmpeg decoding `input` (a file or a URL) to framecrc lines; `seek` adds -ss before the input.
toast::testing::RunResult decode(const std::string& input, std::optional<int> seek = {},
                                 std::chrono::milliseconds limit = 60s) {
    std::vector<std::string> args{"-v", "error", "-nostdin"};
    if (seek) args.insert(args.end(), {"-ss", std::to_string(*seek)});
    args.insert(args.end(), {"-i", input, "-map", "0", "-f", "framecrc", "-"});
    return toast::testing::run(FFMPEG_BIN, args, limit);
}

// The framecrc lines without the header comments (the muxer's version line differs in nothing else).
std::vector<std::string> frames(const std::string& framecrc) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < framecrc.size()) {
        auto end = framecrc.find('\n', start);
        if (end == std::string::npos) end = framecrc.size();
        auto line = framecrc.substr(start, end - start);
        if (!line.empty() && line[0] != '#') out.push_back(line);
        start = end + 1;
    }
    return out;
}

// Decoded video frames (stream 0) in framecrc output.
long video_frames(const std::vector<std::string>& lines) {
    return std::count_if(lines.begin(), lines.end(),
                         [](const std::string& l) { return l.rfind("0,", 0) == 0; });
}

// The server with one ingested video, a tracker, and `toast-client play` instances against them. The server
// is not started: each test starts it when its scenario needs it.
class PlaybackBed : public toast::client::testing::SwarmFixture {
  public:
    explicit PlaybackBed(Container c, int noisy_kbps = 0) : SwarmFixture("warn") {
        const std::string title = c == Container::ts ? "movie.ts" : "movie.mp4";
        const auto media = dir() / ("media-" + title);
        make_video(media, c, noisy_kbps);
        bitrate_ = std::to_string(std::filesystem::file_size(media) * 8 / kSeconds);
        ingest(title, media, bitrate_, {"--piece-size", kPieceSize});
        start_tracker();
    }

    // `toast-client play` serving on a fresh port (player none), staying until stopped.
    std::unique_ptr<ChildProcess> play(const std::string& who, std::vector<std::string> extra = {},
                                       const std::string& behavior = "seed") {
        http_port_[who] = toast::testing::free_tcp_port();
        extra.insert(extra.begin(), {"--http", "127.0.0.1:" + std::to_string(http_port_[who]), "--behavior",
                                     behavior, "--log-level", "info"});
        std::filesystem::create_directories(log_dir(who));
        return start_client("play", who, extra, log_dir(who));
    }

    std::string url(const std::string& who) const {
        return "http://127.0.0.1:" + std::to_string(http_port_.at(who)) + "/" + title();
    }
    std::uint16_t http_port(const std::string& who) const { return http_port_.at(who); }
    std::filesystem::path log_dir(const std::string& who) const { return logs() / who; }
    const std::string& bitrate() const { return bitrate_; }

  private:
    std::string bitrate_;
    std::map<std::string, std::uint16_t> http_port_;
};

// Stops a client with SIGTERM (it writes its summary) and returns its last stats record.
StatsRecord stop_and_summarise(ChildProcess& p, const std::filesystem::path& stats) {
    auto status = p.stop(SIGTERM, 10s);
    INFO(p.stderr_text());
    REQUIRE(status);
    CHECK(*status == 0);
    auto lines = read_stats(stats);
    REQUIRE(!lines.empty());
    REQUIRE(lines.back().event == "summary");
    return lines.back();
}

void check_decodes_like_the_file(PlaybackBed& bed, const std::string& who, std::optional<int> seek = {}) {
    auto reference = decode(bed.media().string(), seek);
    REQUIRE(reference.exit_code == 0);
    auto via_url = decode(bed.url(who), seek);
    INFO("ffmpeg stderr: " << via_url.err);
    CHECK(via_url.exit_code == 0);
    CHECK(via_url.err.empty());  // -v error: any decode error would be printed
    auto want = frames(reference.out);
    auto got = frames(via_url.out);
    REQUIRE(want.size() > 100);
    CHECK(got.size() == want.size());
    CHECK(got == want);
    if (!seek) {
        CHECK(video_frames(got) == kSeconds * 25);  // the full duration, every frame
    } else {
        // From the seek target to the end (a keyframe every second: within a frame or two of it).
        CHECK(std::abs(video_frames(got) - (kSeconds - *seek) * 25) <= 2);
    }
}

}  // namespace

TEST_CASE("ffmpeg decodes an MPEG-TS through the local URL while the swarm downloads it",
          "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    bed.start_server();
    auto seed = bed.seed("seed");
    auto c = bed.play("viewer");
    REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
    check_decodes_like_the_file(bed, "viewer");
    auto s = stop_and_summarise(*c, bed.stats("viewer"));
    CHECK(s.player_url == bed.url("viewer"));
    REQUIRE(s.first_byte_ms);
    CHECK(*s.first_byte_ms < 5000);
    CHECK(s.bytes_from_peers + s.bytes_server_useful > 0);
    CHECK(s.stalls == 0);
    seed->stop(SIGTERM, 10s);
}

TEST_CASE("ffmpeg decodes an MP4 with its index first through the local URL",
          "[client][playback][integration]") {
    PlaybackBed bed(Container::mp4_index_first);
    bed.start_server();
    auto c = bed.play("viewer");
    REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
    check_decodes_like_the_file(bed, "viewer");
    auto s = stop_and_summarise(*c, bed.stats("viewer"));
    CHECK(s.seeks == 0);
    CHECK(s.stalls == 0);
}

TEST_CASE("an MP4 with its index at the end gets its first and last pieces first and decodes fully",
          "[client][playback][integration]") {
    PlaybackBed bed(Container::mp4_index_at_end);
    bed.start_server();
    auto c = bed.play("viewer");
    REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
    // Before any player read, the client has fetched the head and the index at the tail.
    bool tail_first = false;
    for (int i = 0; i < 100 && !tail_first; ++i) {
        std::this_thread::sleep_for(50ms);
        tail_first = c->stderr_text().find("MP4 index at the end") != std::string::npos;
    }
    CHECK(tail_first);
    check_decodes_like_the_file(bed, "viewer");
    auto s = stop_and_summarise(*c, bed.stats("viewer"));
    // The player's jumps to the index at the end and back are not seeks.
    CHECK(s.seeks == 0);
    CHECK(s.urgent_fetches >= 2);
    CHECK(s.stalls == 0);
}

TEST_CASE(
    "a seek fetches its target from the server at once and moves the in-order window, and ffmpeg seeking "
    "to the middle decodes the right timestamps",
    "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    bed.start_server();
    // A seed that uploads at the title's bitrate: it delivers in playback order, not the middle at once.
    auto seed = bed.seed("seed", {"--upload-limit", bed.bitrate()});
    auto c = bed.play("viewer", {"--picker", "hybrid", "--inorder-window", "4s"});
    REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
    const auto title = toast::testing::read_file(bed.media());
    const std::uint64_t piece = 32 * 1024;
    // The player starts at the beginning...
    auto start = toast::testing::http_request(bed.http_port("viewer"), "GET", "/" + bed.title(),
                                              {{"Range", "bytes=0-65535"}}, 20s);
    REQUIRE(start.status == 206);
    CHECK(start.body == title.substr(0, 65536));
    std::this_thread::sleep_for(2500ms);
    auto before = read_stats(bed.stats("viewer"));
    REQUIRE(!before.empty());
    // ...then jumps to three quarters of the title.
    const std::uint64_t target = title.size() * 3 / 4;
    const auto target_piece = static_cast<std::int32_t>(target / piece);
    auto jump = toast::testing::http_request(
        bed.http_port("viewer"), "GET", "/" + bed.title(),
        {{"Range", "bytes=" + std::to_string(target) + "-" + std::to_string(target + 65535)}}, 20s);
    REQUIRE(jump.status == 206);
    CHECK(jump.body == title.substr(target, 65536));
    std::this_thread::sleep_for(1500ms);  // a stats line after the seek
    auto after = read_stats(bed.stats("viewer"));
    REQUIRE(after.size() > before.size());
    const auto& b = before.back();
    const auto& a = after.back();
    CHECK(a.seeks == b.seeks + 1);
    CHECK(a.seek_ms.size() == b.seek_ms.size() + 1);
    // The target was fetched from the server at once (a player read waited for it)...
    CHECK(a.urgent_fetches > b.urgent_fetches);
    CHECK(a.bytes_from_server > b.bytes_from_server);
    // ...and the in-order window moved from the start to the target.
    REQUIRE(b.inorder_window);
    REQUIRE(a.inorder_window);
    CHECK(b.inorder_window->first < target_piece / 2);
    CHECK(a.inorder_window->first >= target_piece);
    CHECK(a.inorder_window->first <= target_piece + 2);
    CHECK(a.playhead >= target);

    // A player seeking by timestamp decodes exactly what it decodes from the file.
    check_decodes_like_the_file(bed, "viewer", kSeconds / 2);
    auto s = stop_and_summarise(*c, bed.stats("viewer"));
    CHECK(s.seeks >= a.seeks + 1);
    seed->stop(SIGTERM, 10s);
}

TEST_CASE("with the server down and no peer, a read waits and completes correctly when the server returns",
          "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    auto c = bed.play("viewer");
    REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
    auto pending = std::async(std::launch::async, [&] {
        return toast::testing::http_request(bed.http_port("viewer"), "GET", "/" + bed.title(),
                                            {{"Range", "bytes=400000-499999"}}, 40s);
    });
    CHECK(pending.wait_for(3s) == std::future_status::timeout);
    bed.start_server();
    REQUIRE(pending.wait_for(30s) == std::future_status::ready);
    auto r = pending.get();
    CHECK(r.status == 206);
    CHECK(r.body == toast::testing::read_file(bed.media()).substr(400000, 100000));
    auto s = stop_and_summarise(*c, bed.stats("viewer"));
    CHECK(s.bytes_from_peers == 0);
    CHECK(s.bytes_server_useful > 0);
}

TEST_CASE("playing a title again resumes at the saved position", "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    bed.start_server();
    auto size = std::filesystem::file_size(bed.media());
    {
        auto c = bed.play("viewer");
        REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
        auto r = toast::testing::http_request(bed.http_port("viewer"), "GET", "/" + bed.title(),
                                              {{"Range", "bytes=" + std::to_string(size / 2) + "-"}}, 20s);
        REQUIRE(r.status == 206);
        std::this_thread::sleep_for(1200ms);
        auto s = stop_and_summarise(*c, bed.stats("viewer"));
        CHECK(s.playhead >= size / 2);
    }
    auto saved = toast::testing::read_file(bed.save_dir("viewer") / ("." + bed.title() + ".position"));
    auto j = nlohmann::json::parse(saved);
    CHECK(j["title_size"] == size);
    auto offset = j["offset"].get<std::uint64_t>();
    CHECK(offset >= size / 2);
    auto again = bed.play("viewer");
    REQUIRE(toast::testing::wait_for_tcp_port(bed.http_port("viewer"), 10s));
    std::this_thread::sleep_for(1500ms);
    auto s = stop_and_summarise(*again, bed.stats("viewer"));
    // No player read yet: the playhead is where the last session left it, not at byte 0.
    CHECK(s.playhead == offset);
}

TEST_CASE("play launches the player on the local URL and leaves when it exits",
          "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    bed.start_server();
    // A stand-in for mpv: decodes the URL it is given with ffmpeg, then exits.
    TempDir bin;
    std::ofstream(bin / "mpv") << "#!/bin/sh\nfor a; do url=$a; done\nexec " FFMPEG_BIN
                                  " -v error -nostdin -i \"$url\" -f null -\n";
    std::filesystem::permissions(bin / "mpv", std::filesystem::perms::owner_all);
    std::string old_path = std::getenv("PATH");
    ::setenv("PATH", (bin.path().string() + ":" + old_path).c_str(), 1);
    auto c = bed.play("viewer", {"--player", "mpv"}, "stream");
    ::setenv("PATH", old_path.c_str(), 1);
    auto status = c->wait(60s);
    INFO(c->stderr_text());
    REQUIRE(status);
    CHECK(*status == 0);
    auto lines = read_stats(bed.stats("viewer"));
    REQUIRE(!lines.empty());
    CHECK(lines.back().event == "summary");
    CHECK(lines.back().first_byte_ms.has_value());
    CHECK(c->stdout_text().find(bed.url("viewer")) != std::string::npos);
}

TEST_CASE("a player that fails to start is reported with its own message and a non-zero exit",
          "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    TempDir bin;
    // VLC run as root: it prints its reason and exits 1 at once. The stand-in also records its arguments.
    std::ofstream(bin / "vlc") << "#!/bin/sh\necho \"$@\" > " << (bin / "args").string()
                               << "\necho 'VLC is not supposed to be run as root. Sorry.' >&2\nexit 1\n";
    std::filesystem::permissions(bin / "vlc", std::filesystem::perms::owner_all);
    std::string old_path = std::getenv("PATH");
    ::setenv("PATH", (bin.path().string() + ":" + old_path).c_str(), 1);
    auto c = bed.play(
        "viewer", {"--player", "vlc", "--player-arg=--intf=dummy", "--player-arg", "--no-audio"}, "stream");
    ::setenv("PATH", old_path.c_str(), 1);
    auto status = c->wait(30s);
    INFO(c->stderr_text());
    REQUIRE(status);
    CHECK(*status == 1);
    CHECK(c->stderr_text().find(
              "player 'vlc' exited with status 1: VLC is not supposed to be run as root. Sorry.") !=
          std::string::npos);
    CHECK(c->stderr_text().find((bed.save_dir("viewer") / "player.log").string()) != std::string::npos);
    CHECK(toast::testing::read_file(bin / "args") ==
          "--play-and-exit --intf=dummy --no-audio " + bed.url("viewer") + "\n");
}

TEST_CASE("a player that is not installed is a clear error", "[client][playback][integration]") {
    PlaybackBed bed(Container::ts);
    TempDir empty;
    std::string old_path = std::getenv("PATH");
    ::setenv("PATH", empty.path().c_str(), 1);
    auto r = toast::testing::run(
        TOAST_CLIENT_BIN,
        {"play", bed.torrent().string(), "--save-dir", bed.save_dir("x").string(), "--listen", "127.0.0.1:0",
         "--stats", bed.stats("x").string(), "--player", "vlc"},
        20s);
    ::setenv("PATH", old_path.c_str(), 1);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("player 'vlc' not found in PATH") != std::string::npos);
}

#ifdef MPV_BIN
namespace {

// mpv's time-pos, asked over its JSON IPC socket; nullopt while nothing listens there (mpv not started yet,
// or gone) or mpv has no position yet. Each answer is awaited at most 2 s.
std::optional<double> mpv_time_pos(const std::filesystem::path& socket) {
    boost::asio::io_context io;
    boost::asio::local::stream_protocol::socket s(io);
    boost::system::error_code ec;
    s.connect(socket.string(), ec);
    if (ec) return std::nullopt;
    timeval limit{2, 0};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    const std::string ask = "{\"command\":[\"get_property\",\"time-pos\"],\"request_id\":7}\n";
    boost::asio::write(s, boost::asio::buffer(ask), ec);
    if (ec) return std::nullopt;
    std::string got;
    char buf[4096];
    // mpv interleaves its events with the answer: read lines until the one carrying our request id.
    for (int reads = 0; reads < 64; ++reads) {
        auto n = s.read_some(boost::asio::buffer(buf), ec);
        if (ec) return std::nullopt;
        got.append(buf, n);
        std::size_t end;
        while ((end = got.find('\n')) != std::string::npos) {
            auto line = nlohmann::json::parse(got.substr(0, end), nullptr, false);
            got.erase(0, end + 1);
            if (!line.is_object() || line.value("request_id", 0) != 7) continue;
            if (line.value("error", "") != "success" || !line["data"].is_number()) return std::nullopt;
            return line["data"].get<double>();
        }
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE(
    "mpv plays a title from the swarm: its read-ahead waits for peers, a stopped viewing resumes where it "
    "was, and the client takes mpv with it",
    "[client][playback][integration][mpv]") {
    // About 3 Mbps: a player's fixed costs (the first piece; ffmpeg reads the last 250 kB of an MPEG-TS for
    // its duration before it plays, fetched at once) weigh in this 16 s title about as in a longer one.
    PlaybackBed bed(Container::ts, 3000);
    bed.start_server();
    const auto size = std::filesystem::file_size(bed.media());
    // A seed uploading at twice the bitrate stays ahead of playback without handing over the whole title at
    // once, so mpv's read-ahead past the playhead would reach the server if it were taken as urgent.
    auto seed = bed.seed("seed", {"--upload-limit", std::to_string(2 * std::stoull(bed.bitrate()))});
    REQUIRE(bed.wait_for_seeders(1, 10s));
    const std::vector<std::string> mpv{"--player", "mpv", "--player-arg=--vo=null", "--player-arg=--ao=null"};
    const auto socket = bed.save_dir("viewer") / "mpv-ipc.sock";
    REQUIRE(socket.string().size() < 100);  // else the client puts it in the temporary directory
    std::uint64_t server_bytes = 0;
    double stopped_at = 0;
    {
        auto c = bed.play("viewer", mpv, "stream");
        std::optional<double> pos;
        for (int i = 0; i < 400 && c->running() && !(pos && *pos >= 6.0); ++i) {
            std::this_thread::sleep_for(100ms);
            pos = mpv_time_pos(socket);
        }
        INFO(c->stderr_text());
        REQUIRE(pos);
        REQUIRE(*pos >= 6.0);
        stopped_at = *pos;
        auto s = stop_and_summarise(*c, bed.stats("viewer"));
        server_bytes += s.bytes_from_server;
        CHECK(s.stalls == 0);
        // The client took its player with it: nothing answers on mpv's socket any more.
        bool gone = false;
        for (int i = 0; i < 50 && !gone; ++i) {
            gone = !mpv_time_pos(socket);
            if (!gone) std::this_thread::sleep_for(100ms);
        }
        CHECK(gone);
    }
    {
        auto c = bed.play("viewer", mpv, "stream");
        std::optional<double> resumed;
        for (int i = 0; i < 200 && c->running() && !resumed; ++i) {
            std::this_thread::sleep_for(100ms);
            resumed = mpv_time_pos(socket);
        }
        INFO(c->stderr_text());
        REQUIRE(resumed);
        CHECK(std::abs(*resumed - stopped_at) <= 2.0);
        // mpv plays to the end and exits; the client leaves with it.
        auto status = c->wait(60s);
        REQUIRE(status);
        CHECK(*status == 0);
        auto lines = read_stats(bed.stats("viewer"));
        REQUIRE(!lines.empty());
        REQUIRE(lines.back().event == "summary");
        server_bytes += lines.back().bytes_from_server;
        CHECK(lines.back().stalls == 0);
    }
    INFO("server bytes " << server_bytes << " of " << size);
    CHECK(server_bytes < size / 4);
    CHECK(toast::testing::read_file(bed.save_dir("viewer") / bed.title()) ==
          toast::testing::read_file(bed.media()));
    seed->stop(SIGTERM, 10s);
}
#endif
