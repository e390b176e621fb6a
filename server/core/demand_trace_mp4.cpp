// The demand trace of an MP4 file: each sample of each track is a unit, its bytes needed by its decode time
// on the movie's timeline; the moov box is needed before anything plays.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "server/core/demand_trace.hpp"
#include "server/core/demand_trace_units.hpp"

namespace toast::server {

using trace_detail::build_trace;
using trace_detail::failure;
using trace_detail::Unit;

namespace {

struct Box {
    std::array<char, 4> type{};
    std::uint64_t start = 0;    // first byte of the box
    std::uint64_t payload = 0;  // first byte after the header
    std::uint64_t end = 0;      // one past the last byte
    std::string_view name() const { return {type.data(), 4}; }
};

class Mp4Reader {
  public:
    explicit Mp4Reader(std::span<const std::uint8_t> file) : file_(file) {}

    bool has(std::uint64_t at, std::uint64_t n) const { return at <= file_.size() && n <= file_.size() - at; }
    std::uint32_t u32(std::uint64_t at) const {
        const auto* p = file_.data() + at;
        return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
    }
    std::uint64_t u64(std::uint64_t at) const { return (std::uint64_t{u32(at)} << 32) | u32(at + 4); }
    std::uint16_t u16(std::uint64_t at) const {
        return static_cast<std::uint16_t>((file_[at] << 8) | file_[at + 1]);
    }
    std::uint8_t u8(std::uint64_t at) const { return file_[at]; }

    // The boxes directly inside [begin, end); false with `error` set when one does not fit.
    bool children(std::uint64_t begin, std::uint64_t end, std::vector<Box>& out, std::string& error) const {
        out.clear();
        std::uint64_t at = begin;
        while (at < end) {
            if (end - at < 8) {
                error = "MP4 box at byte " + std::to_string(at) + " is cut short";
                return false;
            }
            Box b;
            b.start = at;
            std::uint64_t size = u32(at);
            std::copy_n(reinterpret_cast<const char*>(file_.data() + at + 4), 4, b.type.begin());
            b.payload = at + 8;
            if (size == 1) {
                if (end - at < 16) {
                    error = "MP4 box at byte " + std::to_string(at) + " is cut short";
                    return false;
                }
                size = u64(at + 8);
                b.payload = at + 16;
            } else if (size == 0) {
                size = end - at;  // to the end of the enclosing box (or file)
            }
            if (size < b.payload - at || size > end - at) {
                error = "MP4 box '" + std::string(b.name()) + "' at byte " + std::to_string(at) + " claims " +
                        std::to_string(size) + " bytes, " + std::to_string(end - at) + " are left";
                return false;
            }
            b.end = at + size;
            out.push_back(b);
            at = b.end;
        }
        return true;
    }

  private:
    std::span<const std::uint8_t> file_;
};

const Box* find_box(const std::vector<Box>& boxes, std::string_view type) {
    for (const auto& b : boxes)
        if (b.name() == type) return &b;
    return nullptr;
}

// A track's edit list shifts its media times onto the movie's timeline: empty edits (media_time -1) delay it
// by their duration (movie timescale), the first real edit starts it at its media_time (track timescale).
// Returns the shift in nanoseconds to add to the track's decode times.
std::int64_t edit_shift_ns(const Mp4Reader& r, const Box& trak, std::uint32_t movie_timescale,
                           std::uint32_t track_timescale) {
    std::vector<Box> level;
    std::string ignored;
    if (!r.children(trak.payload, trak.end, level, ignored)) return 0;
    const Box* edts = find_box(level, "edts");
    if (!edts || !r.children(edts->payload, edts->end, level, ignored)) return 0;
    const Box* elst = find_box(level, "elst");
    if (!elst || elst->end - elst->payload < 8) return 0;
    const bool v1 = r.u8(elst->payload) == 1;
    const std::uint32_t count = r.u32(elst->payload + 4);
    const std::uint64_t entry = v1 ? 20 : 12;
    long double shift = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint64_t at = elst->payload + 8 + entry * i;
        if (at + entry > elst->end) break;
        const std::uint64_t duration = v1 ? r.u64(at) : r.u32(at);
        const auto media_time = v1 ? static_cast<std::int64_t>(r.u64(at + 8))
                                   : static_cast<std::int64_t>(static_cast<std::int32_t>(r.u32(at + 4)));
        if (media_time == -1) {
            if (movie_timescale > 0) shift += static_cast<long double>(duration) * 1e9L / movie_timescale;
            continue;
        }
        shift -= static_cast<long double>(media_time) * 1e9L / track_timescale;
        break;
    }
    return static_cast<std::int64_t>(shift);
}

bool cut_short(const Box& b, std::string& error) {
    error = "MP4 '" + std::string(b.name()) + "' box at byte " + std::to_string(b.start) + " is cut short";
    return false;
}

// The boxes of a track that hold its samples: mdhd (the timescale) and stbl's children (the sample tables).
struct TrackBoxes {
    Box mdhd;
    Box stbl;
    std::vector<Box> tables;
};

std::optional<TrackBoxes> track_boxes(const Mp4Reader& r, const Box& trak, std::string& error) {
    std::vector<Box> level;
    auto descend = [&](const Box& parent, std::string_view type) -> std::optional<Box> {
        if (!r.children(parent.payload, parent.end, level, error)) return std::nullopt;
        const Box* b = find_box(level, type);
        if (!b) {
            error = "MP4 '" + std::string(parent.name()) + "' box at byte " + std::to_string(parent.start) +
                    " has no '" + std::string(type) + "' box";
            return std::nullopt;
        }
        return *b;
    };
    auto mdia = descend(trak, "mdia");
    if (!mdia) return std::nullopt;
    auto mdhd = descend(*mdia, "mdhd");
    if (!mdhd) return std::nullopt;
    auto minf = descend(*mdia, "minf");
    if (!minf) return std::nullopt;
    auto stbl = descend(*minf, "stbl");
    if (!stbl) return std::nullopt;
    if (!r.children(stbl->payload, stbl->end, level, error)) return std::nullopt;
    return TrackBoxes{*mdhd, *stbl, level};
}

// The track's timescale (mdhd; version 1 has 64-bit times before it); 0 with `error` set when unusable.
std::uint32_t track_timescale(const Mp4Reader& r, const Box& mdhd, std::string& error) {
    const std::uint64_t version = r.has(mdhd.payload, 4) ? r.u8(mdhd.payload) : 0;
    const std::uint64_t ts_at = mdhd.payload + (version == 1 ? 20 : 12);
    if (!r.has(ts_at, 4) || ts_at + 4 > mdhd.end) {
        cut_short(mdhd, error);
        return 0;
    }
    const std::uint32_t timescale = r.u32(ts_at);
    if (timescale == 0)
        error = "MP4 'mdhd' box at byte " + std::to_string(mdhd.start) + " has a timescale of 0";
    return timescale;
}

// Compact sample sizes (stz2): 4, 8 or 16 bits each.
bool compact_sample_sizes(const Mp4Reader& r, const Box& stz2, std::vector<std::uint32_t>& sizes,
                          std::string& error) {
    if (stz2.end - stz2.payload < 12) return cut_short(stz2, error);
    const unsigned field = r.u8(stz2.payload + 7);
    const std::uint32_t count = r.u32(stz2.payload + 8);
    if (field != 4 && field != 8 && field != 16) {
        error = "MP4 'stz2' box at byte " + std::to_string(stz2.start) + " has a field size of " +
                std::to_string(field) + " bits (4, 8 or 16 expected)";
        return false;
    }
    if ((stz2.end - stz2.payload - 12) * 8 / field < count) return cut_short(stz2, error);
    sizes.resize(count);
    const std::uint64_t at = stz2.payload + 12;
    for (std::uint32_t i = 0; i < count; ++i) {
        if (field == 16) {
            sizes[i] = r.u16(at + 2ull * i);
        } else if (field == 8) {
            sizes[i] = r.u8(at + i);
        } else {
            const auto byte = r.u8(at + i / 2);
            sizes[i] = (i % 2 == 0) ? (byte >> 4) : (byte & 0x0F);
        }
    }
    return true;
}

// Sample sizes: stsz (one size for all, or one each), else stz2.
bool sample_sizes(const Mp4Reader& r, const TrackBoxes& t, std::vector<std::uint32_t>& sizes,
                  std::string& error) {
    if (const Box* stsz = find_box(t.tables, "stsz")) {
        if (stsz->end - stsz->payload < 12) return cut_short(*stsz, error);
        const std::uint32_t fixed = r.u32(stsz->payload + 4);
        const std::uint32_t count = r.u32(stsz->payload + 8);
        if (fixed != 0) {
            sizes.assign(count, fixed);
            return true;
        }
        if ((stsz->end - stsz->payload - 12) / 4 < count) return cut_short(*stsz, error);
        sizes.resize(count);
        for (std::uint32_t i = 0; i < count; ++i)
            sizes[i] = r.u32(stsz->payload + 12 + 4ull * i);
        return true;
    }
    if (const Box* stz2 = find_box(t.tables, "stz2")) return compact_sample_sizes(r, *stz2, sizes, error);
    error = "MP4 'stbl' box at byte " + std::to_string(t.stbl.start) + " has neither 'stsz' nor 'stz2'";
    return false;
}

// Chunk offsets: stco (32-bit), else co64.
bool chunk_offsets(const Mp4Reader& r, const TrackBoxes& t, std::vector<std::uint64_t>& chunks,
                   std::string& error) {
    for (const auto& [type, width] : {std::pair{"stco", 4}, std::pair{"co64", 8}}) {
        const Box* b = find_box(t.tables, type);
        if (!b) continue;
        if (b->end - b->payload < 8) return cut_short(*b, error);
        const std::uint32_t count = r.u32(b->payload + 4);
        if ((b->end - b->payload - 8) / static_cast<std::uint64_t>(width) < count)
            return cut_short(*b, error);
        for (std::uint32_t i = 0; i < count; ++i) {
            const std::uint64_t at = b->payload + 8 + static_cast<std::uint64_t>(width) * i;
            chunks.push_back(width == 4 ? r.u32(at) : r.u64(at));
        }
        return true;
    }
    error = "MP4 'stbl' box at byte " + std::to_string(t.stbl.start) + " has neither 'stco' nor 'co64'";
    return false;
}

// A required table of `entry` bytes per entry, its entry count after version and flags; nullptr with
// `error` set when it is missing or cut short.
const Box* counted_table(const Mp4Reader& r, const TrackBoxes& t, std::string_view type, std::uint64_t entry,
                         std::uint32_t& count, std::string& error) {
    const Box* b = find_box(t.tables, type);
    if (!b) {
        error =
            "MP4 'stbl' box at byte " + std::to_string(t.stbl.start) + " has no '" + std::string(type) + "'";
        return nullptr;
    }
    count = b->end - b->payload < 8 ? 0 : r.u32(b->payload + 4);
    if (b->end - b->payload < 8 || (b->end - b->payload - 8) / entry < count) {
        cut_short(*b, error);
        return nullptr;
    }
    return b;
}

// The decode times of a track's samples in order, from its stts runs of (count, delta).
class DecodeTimes {
  public:
    DecodeTimes(const Mp4Reader& r, const Box& stts, std::uint32_t runs)
        : r_(r), stts_(stts), runs_(runs), left_(runs > 0 ? r.u32(stts.payload + 8) : 0) {}
    // The next sample's time in the track's timescale; nullopt when the runs are used up.
    std::optional<std::uint64_t> next() {
        while (left_ == 0) {
            if (++run_ >= runs_) return std::nullopt;
            left_ = r_.u32(stts_.payload + 8 + 8ull * run_);
        }
        const auto t = dts_;
        dts_ += r_.u32(stts_.payload + 8 + 8ull * run_ + 4);
        --left_;
        return t;
    }

  private:
    const Mp4Reader& r_;
    const Box& stts_;
    std::uint32_t runs_;
    std::uint32_t run_ = 0;
    std::uint32_t left_;
    std::uint64_t dts_ = 0;
};

// Appends the samples of one track (a trak box) to `units`. False with `error` naming the problem.
bool read_track(const Mp4Reader& r, const Box& trak, std::uint32_t movie_timescale, std::vector<Unit>& units,
                std::string& error) {
    const auto t = track_boxes(r, trak, error);
    if (!t) return false;
    const std::uint32_t timescale = track_timescale(r, t->mdhd, error);
    if (timescale == 0) return false;
    const std::int64_t shift = edit_shift_ns(r, trak, movie_timescale, timescale);
    std::vector<std::uint32_t> sizes;
    if (!sample_sizes(r, *t, sizes, error)) return false;
    std::vector<std::uint64_t> chunks;
    if (!chunk_offsets(r, *t, chunks, error)) return false;
    // Samples per chunk: runs of (first chunk, samples per chunk), first chunks 1-based and increasing.
    std::uint32_t runs = 0;
    const Box* stsc = counted_table(r, *t, "stsc", 12, runs, error);
    if (!stsc) return false;
    std::uint32_t deltas = 0;
    const Box* stts = counted_table(r, *t, "stts", 8, deltas, error);
    if (!stts) return false;

    // Walk the samples: chunk by chunk for offsets, stts runs for times.
    std::size_t sample = 0;
    DecodeTimes times(r, *stts, deltas);
    for (std::uint32_t run = 0; run < runs && sample < sizes.size(); ++run) {
        const std::uint64_t at = stsc->payload + 8 + 12ull * run;
        const std::uint32_t first = r.u32(at);
        const std::uint32_t per_chunk = r.u32(at + 4);
        const std::uint32_t last =
            run + 1 < runs ? r.u32(at + 12) - 1 : static_cast<std::uint32_t>(chunks.size());
        if (first == 0 || first > chunks.size() + 1 || last + 1 < first) {
            error = "MP4 'stsc' box at byte " + std::to_string(stsc->start) + " has entry " +
                    std::to_string(run) + " starting at chunk " + std::to_string(first) + " of " +
                    std::to_string(chunks.size());
            return false;
        }
        for (std::uint32_t c = first; c <= last && c <= chunks.size() && sample < sizes.size(); ++c) {
            std::uint64_t offset = chunks[c - 1];
            for (std::uint32_t s = 0; s < per_chunk && sample < sizes.size(); ++s, ++sample) {
                auto time = times.next();
                if (!time) {
                    error = "MP4 'stts' box at byte " + std::to_string(stts->start) + " times " +
                            std::to_string(sample) + " of " + std::to_string(sizes.size()) + " samples";
                    return false;
                }
                const auto ns = static_cast<std::int64_t>(static_cast<long double>(*time) * 1e9L / timescale);
                units.push_back(Unit{ns + shift, offset + sizes[sample]});
                offset += sizes[sample];
            }
        }
    }
    if (sample < sizes.size()) {
        error = "MP4 track at byte " + std::to_string(trak.start) + " places " + std::to_string(sample) +
                " of its " + std::to_string(sizes.size()) + " samples in chunks";
        return false;
    }
    return true;
}

}  // namespace

TraceResult extract_mp4_trace(std::span<const std::uint8_t> file, std::chrono::nanoseconds round) {
    Mp4Reader r(file);
    std::vector<Box> top;
    std::string error;
    if (!r.children(0, file.size(), top, error)) return failure(error);
    const Box* moov = find_box(top, "moov");
    if (!moov) return failure("MP4 file has no 'moov' box");
    if (find_box(top, "moof"))
        return failure(
            "fragmented MP4 ('moof' boxes) is not supported; remux it with "
            "ffmpeg -i IN -c copy -movflags +faststart OUT.mp4");
    std::vector<Box> tracks;
    if (!r.children(moov->payload, moov->end, tracks, error)) return failure(error);
    // The movie timescale (mvhd, after 64-bit times in version 1) scales empty edits.
    std::uint32_t movie_timescale = 0;
    if (const Box* mvhd = find_box(tracks, "mvhd")) {
        const std::uint64_t at = mvhd->payload + (r.u8(mvhd->payload) == 1 ? 20 : 12);
        if (at + 4 <= mvhd->end) movie_timescale = r.u32(at);
    }
    std::vector<Unit> units;
    for (const auto& b : tracks)
        if (b.name() == "trak" && !read_track(r, b, movie_timescale, units, error)) return failure(error);
    if (units.empty()) return failure("MP4 file has no samples");
    for (const auto& u : units)
        if (u.end > file.size())
            return failure("MP4 sample ending at byte " + std::to_string(u.end) +
                           " lies past the end of the " + std::to_string(file.size()) + "-byte file");
    // A player needs the whole moov before any sample: round 0 holds everything up to its end (the whole file
    // when moov comes last, which is what makes such files unfit for progressive streaming).
    return TraceResult{build_trace(units, moov->end, file.size(), round), {}};
}

}  // namespace toast::server
