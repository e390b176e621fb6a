#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <libtorrent/bdecode.hpp>

#include "server/io/ingest.hpp"
#include "store_fixture.hpp"

using namespace toast;
using namespace toast::server;
using namespace toast::server::testing;
using Catch::Matchers::Contains;
namespace lt = libtorrent;

namespace {

// The test runs Debian's ffmpeg and ffprobe (scripts/install-deps.sh); the child runner needs a full path.
std::string tool(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const auto candidate = std::filesystem::path(dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    FAIL(name + " is not installed (scripts/install-deps.sh installs it)");
    return name;
}

// A few seconds of real H.264 + AAC at a constant quality (variable rate), made by ffmpeg.
std::filesystem::path encode(const StoreFixture& fx, const std::string& name, int seconds) {
    const auto ts = fx.path(name + ".ts");
    auto r = toast::testing::run(tool("ffmpeg"), {"-hide_banner", "-loglevel",
                                                  "error",        "-y",
                                                  "-f",           "lavfi",
                                                  "-i",           "testsrc2=size=320x240:rate=25",
                                                  "-f",           "lavfi",
                                                  "-i",           "sine=frequency=300",
                                                  "-t",           std::to_string(seconds),
                                                  "-c:v",         "libx264",
                                                  "-preset",      "ultrafast",
                                                  "-crf",         "30",
                                                  "-g",           "25",
                                                  "-c:a",         "aac",
                                                  "-b:a",         "48k",
                                                  "-f",           "mpegts",
                                                  ts.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return ts;
}

std::filesystem::path remux_mp4(const StoreFixture& fx, const std::filesystem::path& ts) {
    const auto mp4 = fx.path(ts.stem().string() + ".mp4");
    auto r =
        toast::testing::run(tool("ffmpeg"), {"-hide_banner", "-loglevel", "error", "-y", "-i", ts.string(),
                                             "-c", "copy", "-movflags", "+faststart", mp4.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return mp4;
}

IngestOptions options(const StoreFixture& fx, const std::string& name, const std::filesystem::path& media) {
    IngestOptions o;
    o.name = name;
    o.media = media;
    o.torrent = fx.path(name + ".torrent");
    return o;
}

}  // namespace

TEST_CASE("ingest records an MPEG-TS or MP4 file's demand trace, the torrent keeps its average and peak",
          "[server][trace][ingest]") {
    StoreFixture fx(2, "rda", {{"time_slice", "1s"}});
    const auto ts = encode(fx, "clip", 6);
    const auto mp4 = remux_mp4(fx, ts);
    for (const auto& media : {ts, mp4}) {
        INFO(media.string());
        const auto size = std::filesystem::file_size(media);
        auto r = ingest_title(fx.config, options(fx, "clip", media));
        REQUIRE(r.manifest.trace);
        const auto& trace = *r.manifest.trace;
        CHECK(trace.round == std::chrono::seconds(1));
        CHECK(trace.total() == size);
        CHECK(trace.bytes.size() >= 6);
        CHECK(trace.bytes.size() <= 7);  // the last audio frame may reach into a seventh second
        for (std::size_t k = 1; k + 1 < 6; ++k)
            CHECK(trace.bytes[k] > 0);
        // Without --bitrate the title's bitrate is the trace's average.
        CHECK(r.manifest.bitrate == trace.average_rate());
        CHECK(trace.peak_rate() >= trace.average_rate());

        lt::error_code ec;
        const auto bytes = toast::testing::read_file(fx.path("clip.torrent"));
        auto root = lt::bdecode({bytes.data(), static_cast<std::ptrdiff_t>(bytes.size())}, ec);
        REQUIRE_FALSE(ec);
        auto toast_dict = root.dict_find_dict("toast");
        CHECK(toast_dict.dict_find_int_value("average_bitrate") ==
              static_cast<std::int64_t>(trace.average_rate().value()));
        CHECK(toast_dict.dict_find_int_value("peak_bitrate") ==
              static_cast<std::int64_t>(trace.peak_rate().value()));
    }
}

TEST_CASE("an MP4's trace agrees with ffprobe's packet positions second by second",
          "[server][trace][ingest]") {
    StoreFixture fx(2, "rda", {{"time_slice", "1s"}});
    const auto mp4 = remux_mp4(fx, encode(fx, "probe", 5));
    auto r = ingest_title(fx.config, options(fx, "probe", mp4));
    REQUIRE(r.manifest.trace);
    const auto& trace = *r.manifest.trace;

    // Independently: every packet's decode time, position and size as ffprobe reports them.
    auto probe = toast::testing::run(
        tool("ffprobe"),
        {"-v", "error", "-show_entries", "packet=dts_time,pos,size", "-of", "csv=p=0", mp4.string()});
    INFO(probe.err);
    REQUIRE(probe.exit_code == 0);
    std::map<long, std::uint64_t> need;  // second -> end of the furthest packet decoded in it
    double first = 1e300;
    std::vector<std::tuple<double, std::uint64_t>> packets;
    std::istringstream lines(probe.out);
    std::string line;
    while (std::getline(lines, line)) {
        double dts = 0;
        unsigned long long size = 0, pos = 0;
        if (std::sscanf(line.c_str(), "%lf,%llu,%llu", &dts, &size, &pos) != 3) continue;
        first = std::min(first, dts);
        packets.emplace_back(dts, pos + size);
    }
    REQUIRE(packets.size() > 100);
    for (const auto& [dts, end] : packets) {
        auto& n = need[static_cast<long>((dts - first) + 1e-9)];
        n = std::max<std::uint64_t>(n, end);
    }
    // From the second second on (the first also holds the moov), each second's bytes are the growth of the
    // furthest byte needed.
    std::uint64_t before = 0, running = 0;
    for (auto& [second, end] : need) {
        running = std::max(running, end);
        if (second >= 1 && second + 1 < static_cast<long>(trace.bytes.size())) {
            INFO("second " << second);
            CHECK(trace.bytes[static_cast<std::size_t>(second)] == running - before);
        }
        before = running;
    }
}

TEST_CASE("a broken transport stream fails the ingest unless its trace is not wanted",
          "[server][trace][ingest]") {
    StoreFixture fx(2, "rda", {{"time_slice", "1s"}});
    const auto ts = encode(fx, "broken", 2);
    {
        std::fstream f(ts, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(188 * 5);
        f.put('\0');  // the sixth packet loses its sync byte
    }
    auto o = options(fx, "broken", ts);
    CHECK_THROWS_WITH(ingest_title(fx.config, o), Contains("looks like MPEG-TS") &&
                                                      Contains("packet 5 at byte 940") &&
                                                      Contains("--no-trace"));
    CHECK_FALSE(std::filesystem::exists(fx.path("broken.torrent")));
    o.trace = false;
    auto r = ingest_title(fx.config, o);
    CHECK_FALSE(r.manifest.trace);
    CHECK(r.manifest.bitrate == fx.config.default_bitrate);

    // A file in no known container is a constant-rate title, trace or not.
    auto plain = ingest_title(fx.config, options(fx, "plain", fx.media("plain.bin", 300'000, 9)));
    CHECK_FALSE(plain.manifest.trace);
}
