#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "server/core/demand_trace.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;

namespace {

using Buf = std::vector<std::uint8_t>;

std::span<const std::uint8_t> view(const Buf& b) {
    return {b.data(), b.size()};
}

// ---- MPEG-TS construction ----

void put_timestamp(std::uint8_t* p, int marker, std::int64_t t) {
    p[0] = static_cast<std::uint8_t>((marker << 4) | (((t >> 30) & 0x07) << 1) | 1);
    p[1] = static_cast<std::uint8_t>(t >> 22);
    p[2] = static_cast<std::uint8_t>((((t >> 15) & 0x7F) << 1) | 1);
    p[3] = static_cast<std::uint8_t>(t >> 7);
    p[4] = static_cast<std::uint8_t>(((t & 0x7F) << 1) | 1);
}

// A table (PSI) packet: payload start, no PES start code.
void ts_table(Buf& out, std::uint16_t pid) {
    Buf p(188, 0xFF);
    p[0] = 0x47;
    p[1] = static_cast<std::uint8_t>(0x40 | (pid >> 8));
    p[2] = static_cast<std::uint8_t>(pid);
    p[3] = 0x10;
    p[4] = 0x00;  // pointer field
    p[5] = 0x00;  // table id
    out.insert(out.end(), p.begin(), p.end());
}

// One PES of `packets` transport packets on `pid`, stamped with PTS (and DTS when dts >= 0), 90 kHz.
void ts_pes(Buf& out, std::uint16_t pid, std::int64_t pts, std::int64_t dts, int packets,
            std::uint8_t stream_id = 0xE0) {
    for (int i = 0; i < packets; ++i) {
        Buf p(188, 0xAB);
        p[0] = 0x47;
        p[1] = static_cast<std::uint8_t>((i == 0 ? 0x40 : 0x00) | (pid >> 8));
        p[2] = static_cast<std::uint8_t>(pid);
        p[3] = 0x10;  // payload only
        if (i == 0) {
            auto* q = p.data() + 4;
            q[0] = 0;
            q[1] = 0;
            q[2] = 1;
            q[3] = stream_id;
            q[4] = 0;
            q[5] = 0;
            q[6] = 0x80;
            q[7] = dts >= 0 ? 0xC0 : 0x80;
            q[8] = dts >= 0 ? 10 : 5;
            put_timestamp(q + 9, dts >= 0 ? 3 : 2, pts);
            if (dts >= 0) put_timestamp(q + 14, 1, dts);
        }
        out.insert(out.end(), p.begin(), p.end());
    }
}

// ---- MP4 construction ----

void put32(Buf& b, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8)
        b.push_back(static_cast<std::uint8_t>(v >> s));
}

Buf box(const std::string& type, const Buf& payload) {
    Buf b;
    b.reserve(8 + payload.size());
    put32(b, static_cast<std::uint32_t>(8 + payload.size()));
    for (char c : type)
        b.push_back(static_cast<std::uint8_t>(c));
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Buf cat(std::initializer_list<Buf> parts) {
    Buf b;
    for (const auto& p : parts)
        b.insert(b.end(), p.begin(), p.end());
    return b;
}

Buf full(std::initializer_list<std::uint32_t> words) {
    Buf b;
    for (auto w : words)
        put32(b, w);
    return b;
}

struct Track {
    std::uint32_t timescale = 0;
    std::uint32_t delta = 0;             // every sample lasts this long
    std::vector<std::uint32_t> sizes{};  // per sample
    std::uint32_t per_chunk = 0;         // samples per chunk
    std::vector<std::uint32_t> chunk_offsets{};
};

Buf trak(const Track& t) {
    Buf mdhd = full({0, 0, 0, t.timescale, 0, 0});
    Buf stts = full({0, 1, static_cast<std::uint32_t>(t.sizes.size()), t.delta});
    Buf stsz = full({0, 0, static_cast<std::uint32_t>(t.sizes.size())});
    for (auto s : t.sizes)
        put32(stsz, s);
    Buf stsc = full({0, 1, 1, t.per_chunk, 1});
    Buf stco = full({0, static_cast<std::uint32_t>(t.chunk_offsets.size())});
    for (auto o : t.chunk_offsets)
        put32(stco, o);
    Buf stbl = cat({box("stts", stts), box("stsz", stsz), box("stsc", stsc), box("stco", stco)});
    return box("trak", box("mdia", cat({box("mdhd", mdhd), box("minf", box("stbl", stbl))})));
}

}  // namespace

TEST_CASE("a transport stream's trace counts each second's packets up to its last frame", "[server][trace]") {
    // Tables first, then 3 s of 25 fps video: frame k of second s has s + 1 packets (1, 2, 3 per frame).
    Buf ts;
    ts_table(ts, 0x0000);
    ts_table(ts, 0x1000);
    for (int second = 0; second < 3; ++second)
        for (int f = 0; f < 25; ++f) {
            const std::int64_t t = 90'000 * second + 3'600 * f + 900'000;  // starts at 10 s: the origin moves
            ts_pes(ts, 0x100, t + 3'600, t, second + 1);
        }
    REQUIRE(detect_container(view(ts)) == MediaContainer::mpeg_ts);
    auto r = extract_demand_trace(view(ts), 1s);
    REQUIRE(r.trace);
    CHECK(r.trace->round == 1s);
    // The two table packets are needed with the first second.
    CHECK(r.trace->bytes == std::vector<std::uint64_t>{(2 + 25) * 188, 50 * 188, 75 * 188});
    CHECK(r.trace->total() == ts.size());
    CHECK(r.trace->peak_rate() == BitRate(75 * 188 * 8));
    CHECK(r.trace->average_rate() == BitRate(static_cast<std::uint64_t>(std::llround(ts.size() * 8 / 3.0))));
}

TEST_CASE("interleaved audio and video: a second needs the file up to its last unit of any PID",
          "[server][trace]") {
    // Video every 0.5 s (4 packets), audio every 0.5 s (1 packet) but muxed 0.5 s ahead of the video.
    Buf ts;
    ts_pes(ts, 0x101, 0, -1, 1, 0xC0);        // audio 0.0
    ts_pes(ts, 0x101, 45'000, -1, 1, 0xC0);   // audio 0.5
    ts_pes(ts, 0x100, 0, 0, 4);               // video 0.0
    ts_pes(ts, 0x101, 90'000, -1, 1, 0xC0);   // audio 1.0
    ts_pes(ts, 0x100, 45'000, 45'000, 4);     // video 0.5   <- end of second 0's units
    ts_pes(ts, 0x101, 135'000, -1, 1, 0xC0);  // audio 1.5
    ts_pes(ts, 0x100, 90'000, 90'000, 4);     // video 1.0
    ts_pes(ts, 0x100, 135'000, 135'000, 4);   // video 1.5
    auto r = extract_ts_trace(view(ts), 1s);
    REQUIRE(r.trace);
    // Second 0 needs the first 11 packets (audio 1.0 sits before video 0.5 in the file); second 1 the rest.
    CHECK(r.trace->bytes == std::vector<std::uint64_t>{11 * 188, 9 * 188});
}

TEST_CASE("a transport stream uses DTS over PTS and survives the 33-bit timestamp wrap", "[server][trace]") {
    Buf ts;
    const std::int64_t start = (std::int64_t{1} << 33) - 90'000;  // one second before the wrap
    for (int f = 0; f < 12; ++f) {
        const std::int64_t dts = (start + 22'500 * f) % (std::int64_t{1} << 33);
        // PTS far ahead (reordered B-frames): ignored in favour of DTS.
        ts_pes(ts, 0x100, (dts + 200'000) % (std::int64_t{1} << 33), dts, 2);
    }
    auto r = extract_ts_trace(view(ts), 1s);
    REQUIRE(r.trace);
    CHECK(r.trace->bytes == std::vector<std::uint64_t>{8 * 188, 8 * 188, 8 * 188});
}

TEST_CASE("a transport stream with a broken packet is refused naming the packet", "[server][trace]") {
    Buf ts;
    ts_pes(ts, 0x100, 0, 0, 3);
    ts[188 * 2] = 0x00;
    auto r = extract_ts_trace(view(ts), 1s);
    CHECK_FALSE(r.trace);
    CHECK(r.error == "MPEG-TS packet 2 at byte 376 does not start with the sync byte 0x47");

    Buf tables;
    ts_table(tables, 0);
    auto none = extract_ts_trace(view(tables), 1s);
    CHECK_FALSE(none.trace);
    CHECK(none.error == "MPEG-TS file has no PES packet with a timestamp");
}

TEST_CASE("an MP4's trace follows its sample tables, the moov counted in the first second",
          "[server][trace]") {
    // Video: 10 fps for 2 s, sample k of 100 + 10k bytes, 5 per chunk. Audio: 4 samples of 50 bytes per
    // second (timescale 1000, 250 ms each), 2 per chunk. Chunks alternate video, audio in the mdat.
    Track video{.timescale = 90'000, .delta = 9'000, .per_chunk = 5};
    for (int k = 0; k < 20; ++k)
        video.sizes.push_back(100 + 10 * k);
    Track audio{.timescale = 1'000, .delta = 250, .sizes = std::vector<std::uint32_t>(8, 50), .per_chunk = 2};
    // Offsets depend on the moov's size, which does not depend on their values: build once to measure.
    video.chunk_offsets.assign(4, 0);
    audio.chunk_offsets.assign(4, 0);
    const Buf ftyp = box("ftyp", Buf{'i', 's', 'o', 'm', 0, 0, 2, 0});
    const auto moov_size = box("moov", cat({trak(video), trak(audio)})).size();
    std::uint32_t at = static_cast<std::uint32_t>(ftyp.size() + moov_size + 8);
    Buf mdat_payload;
    for (int c = 0; c < 4; ++c) {
        video.chunk_offsets[c] = at;
        for (int s = 0; s < 5; ++s) {
            mdat_payload.insert(mdat_payload.end(), video.sizes[5 * c + s], 0x11);
            at += video.sizes[5 * c + s];
        }
        audio.chunk_offsets[c] = at;
        mdat_payload.insert(mdat_payload.end(), 100, 0x22);
        at += 100;
    }
    const Buf moov = box("moov", cat({trak(video), trak(audio)}));
    REQUIRE(moov.size() == moov_size);
    const Buf file = cat({ftyp, moov, box("mdat", mdat_payload)});
    REQUIRE(detect_container(view(file)) == MediaContainer::mp4);

    auto r = extract_demand_trace(view(file), 1s);
    REQUIRE(r.trace);
    std::uint64_t second0 = 0, second1 = 0;
    for (int k = 0; k < 10; ++k)
        second0 += video.sizes[k];
    for (int k = 10; k < 20; ++k)
        second1 += video.sizes[k];
    const auto header = ftyp.size() + moov.size() + 8;
    CHECK(r.trace->bytes == std::vector<std::uint64_t>{header + second0 + 200, second1 + 200});
    CHECK(r.trace->total() == file.size());

    // Half-second rounds split each second's chunk pair.
    auto half = extract_mp4_trace(view(file), 500ms);
    REQUIRE(half.trace);
    CHECK(half.trace->bytes.size() == 4);
    CHECK(half.trace->bytes[0] == header + 100 + 110 + 120 + 130 + 140 + 100);
}

TEST_CASE("an MP4 track's edit list moves its samples onto the movie's timeline", "[server][trace]") {
    // Video at 1000 units per second, 4 samples of 500 ms; its edit list starts the movie at media time 1000
    // (1 s): samples decode at -1, -0.5, 0 and 0.5 s. Audio: 2 samples of 1 s from 0, after an empty edit of
    // 1 s (movie timescale 100): at 1 and 2 s. Video first in the mdat, then audio.
    const Buf ftyp = box("ftyp", Buf{'i', 's', 'o', 'm'});
    Track video{.timescale = 1'000,
                .delta = 500,
                .sizes = {100, 100, 100, 100},
                .per_chunk = 4,
                .chunk_offsets = {0}};
    Track audio{.timescale = 1'000, .delta = 1'000, .sizes = {50, 50}, .per_chunk = 2, .chunk_offsets = {0}};
    auto with_edits = [](const Track& t, const Buf& elst) {
        Buf b = trak(t);
        // Insert edts after the trak header, before mdia.
        Buf edts = box("edts", box("elst", elst));
        Buf out(b.begin(), b.begin() + 8);
        out.insert(out.end(), edts.begin(), edts.end());
        out.insert(out.end(), b.begin() + 8, b.end());
        const auto size = static_cast<std::uint32_t>(out.size());
        out[0] = static_cast<std::uint8_t>(size >> 24);
        out[1] = static_cast<std::uint8_t>(size >> 16);
        out[2] = static_cast<std::uint8_t>(size >> 8);
        out[3] = static_cast<std::uint8_t>(size);
        return out;
    };
    const Buf mvhd = box("mvhd", full({0, 0, 0, 100, 0}));
    auto build = [&] {
        return box("moov",
                   cat({mvhd, with_edits(video, full({0, 1, 400, 1'000, 0x00010000})),
                        with_edits(audio, full({0, 2, 100, 0xFFFFFFFF, 0x00010000, 200, 0, 0x00010000}))}));
    };
    const auto header = static_cast<std::uint32_t>(ftyp.size() + build().size() + 8);
    video.chunk_offsets = {header};
    audio.chunk_offsets = {header + 400};
    const Buf file = cat({ftyp, build(), box("mdat", Buf(500, 0x44))});
    auto r = extract_mp4_trace(view(file), 1s);
    REQUIRE(r.trace);
    // Origin -1 s: second 0 = [-1, 0) holds video 0, 1; second 1 = [0, 1) video 2, 3; second 2 audio 0 (1 s);
    // second 3 audio 1 (2 s).
    CHECK(r.trace->bytes == std::vector<std::uint64_t>{header + 200, 200, 50, 50});
}

TEST_CASE("an MP4 whose moov comes last needs the whole file first", "[server][trace]") {
    Track video{.timescale = 1'000,
                .delta = 500,
                .sizes = {300, 300, 300, 300},
                .per_chunk = 4,
                .chunk_offsets = {16}};
    const Buf mdat = box("mdat", Buf(1200, 0x33));
    const Buf ftyp = box("ftyp", Buf{'i', 's', 'o', 'm'});
    video.chunk_offsets = {static_cast<std::uint32_t>(ftyp.size() + 8)};
    const Buf file = cat({ftyp, mdat, box("moov", trak(video))});
    auto r = extract_mp4_trace(view(file), 1s);
    REQUIRE(r.trace);
    CHECK(r.trace->bytes == std::vector<std::uint64_t>{file.size(), 0});
}

TEST_CASE("a damaged or fragmented MP4 is refused with the reason", "[server][trace]") {
    const Buf ftyp = box("ftyp", Buf{'i', 's', 'o', 'm'});
    Buf bad = cat({ftyp, box("moov", Buf{})});
    bad[ftyp.size() + 3] = 200;  // moov claims 200 bytes
    auto r = extract_mp4_trace(view(bad), 1s);
    CHECK_FALSE(r.trace);
    CHECK(r.error == "MP4 box 'moov' at byte 12 claims 200 bytes, 8 are left");

    auto frag = extract_mp4_trace(view(cat({ftyp, box("moov", Buf{}), box("moof", Buf{})})), 1s);
    CHECK_FALSE(frag.trace);
    CHECK_THAT(frag.error, Catch::Contains("fragmented MP4") && Catch::Contains("+faststart"));

    Track video{.timescale = 1'000,
                .delta = 500,
                .sizes = {300, 300},
                .per_chunk = 2,
                .chunk_offsets = {5000}};  // chunk offset past the end of the file
    auto past = extract_mp4_trace(view(cat({ftyp, box("moov", trak(video))})), 1s);
    CHECK_FALSE(past.trace);
    CHECK_THAT(past.error, Catch::Contains("past the end"));

    CHECK(extract_demand_trace(view(Buf(1000, 0x00)), 1s).error ==
          "neither an MPEG transport stream nor an MP4 file");
}

TEST_CASE("a resampled trace never needs bytes later than the original", "[server][trace]") {
    DemandTrace t{1s, {10, 20, 30, 40, 50}};
    // 2 s rounds: [0,2) needs old rounds 0-1, [2,4) needs 2-3, [4,6) needs 4.
    CHECK(resample(t, 2s).bytes == std::vector<std::uint64_t>{30, 70, 50});
    // 1.5 s rounds: [0,1.5) needs old rounds starting before 1.5 s: 0 and 1; [1.5,3): 2; [3,4.5): 3 and 4.
    CHECK(resample(t, 1500ms).bytes == std::vector<std::uint64_t>{30, 30, 90, 0});
    // 500 ms rounds: a whole old round is needed at its start.
    auto fine = resample(t, 500ms);
    CHECK(fine.bytes == std::vector<std::uint64_t>{10, 0, 20, 0, 30, 0, 40, 0, 50, 0});
    CHECK(fine.total() == t.total());
    CHECK(t.needed_by(1) == 30);
    CHECK(t.needed_by(99) == 150);
}
