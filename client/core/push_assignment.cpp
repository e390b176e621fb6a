#include "client/core/push_assignment.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "client/core/service_api.hpp"

namespace toast::client {

namespace {

using json = nlohmann::json;

bool box_id_like(std::string_view s) {
    if (s.empty() || s.size() > 64) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
               c == '_' || c == '-';
    });
}

// A title name is shown and logged, never used as a path; anything that looks like one is refused anyway.
std::string name_problem(std::string_view n) {
    if (n.empty() || n.size() > 200) return "must be 1 to 200 characters";
    if (n.find('/') != std::string_view::npos || n.find('\\') != std::string_view::npos)
        return "looks like a path (it has a slash)";
    if (n == "." || n == ".." || n.front() == '.') return "looks like a path (it starts with a dot)";
    for (unsigned char c : n) {
        if (c < 0x20 || c == 0x7f || c == '?' || c == '#' || c == '%')
            return "has a character a name cannot have";
    }
    return {};
}

bool read_int(const json& j, const char* key, std::int64_t min, std::int64_t max, std::int64_t& out) {
    if (!j.contains(key) || !j[key].is_number_integer()) return false;
    if (j[key].is_number_unsigned() && j[key].get<std::uint64_t>() > static_cast<std::uint64_t>(max))
        return false;
    const auto v = j[key].get<std::int64_t>();
    if (v < min || v > max) return false;
    out = v;
    return true;
}

std::string unknown_key(const json& j, std::initializer_list<std::string_view> known) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (std::find(known.begin(), known.end(), it.key()) == known.end()) return it.key();
    }
    return {};
}

}  // namespace

bool AssignedTitle::holds(PieceIndex p) const {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const PieceRange& r) { return r.first <= p && p <= r.last; });
}

Bytes PushAssignment::bytes() const {
    Bytes total{0};
    for (const auto& t : titles)
        total += t.bytes;
    return total;
}

const AssignedTitle* PushAssignment::find(std::string_view info_hash) const {
    for (const auto& t : titles)
        if (t.info_hash == info_hash) return &t;
    return nullptr;
}

Bytes range_bytes(const std::vector<PieceRange>& ranges, Bytes size, Bytes piece_size) {
    std::uint64_t total = 0;
    const auto ps = piece_size.value();
    for (const auto& r : ranges) {
        const std::uint64_t begin = std::uint64_t(r.first.value()) * ps;
        const std::uint64_t end =
            std::min<std::uint64_t>((std::uint64_t(r.last.value()) + 1) * ps, size.value());
        if (end > begin) total += end - begin;
    }
    return Bytes(total);
}

bool ranges_cover(const std::vector<PieceRange>& outer, const std::vector<PieceRange>& inner) {
    for (const auto& r : inner) {
        for (auto p = r.first; p <= r.last; ++p) {
            if (std::none_of(outer.begin(), outer.end(),
                             [&](const PieceRange& o) { return o.first <= p && p <= o.last; }))
                return false;
        }
    }
    return true;
}

std::optional<PushAssignment> parse_push_assignment(std::string_view text, std::string* error) {
    auto bad = [error](std::string m) -> std::optional<PushAssignment> {
        if (error) *error = std::move(m);
        return std::nullopt;
    };
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    if (auto k = unknown_key(j, {"box", "plan", "generation", "window", "rate_bps", "quota", "upload_bps",
                                 "refresh_s", "titles"});
        !k.empty())
        return bad("unknown field \"" + k + "\"");
    PushAssignment a;
    if (!j.contains("box") || !j["box"].is_string() || !box_id_like(j["box"].get<std::string>()))
        return bad("\"box\" must be a box id");
    a.box = j["box"].get<std::string>();
    if (!j.contains("plan") || !j["plan"].is_string() || j["plan"].get<std::string>().size() > 64 ||
        !box_id_like(j["plan"].get<std::string>()))
        return bad("\"plan\" must be a plan id");
    a.plan = j["plan"].get<std::string>();
    std::int64_t v = 0;
    constexpr std::int64_t kMax = std::int64_t(1) << 62;
    if (!read_int(j, "generation", 0, kMax, v)) return bad("\"generation\" must be a non-negative integer");
    a.generation = static_cast<std::uint64_t>(v);
    if (!j.contains("window") || !j["window"].is_object()) return bad("\"window\" must be an object");
    const auto& w = j["window"];
    if (auto k = unknown_key(w, {"start_ms", "end_ms"}); !k.empty())
        return bad("unknown field \"window." + k + "\"");
    if (!read_int(w, "start_ms", 0, kMax, a.window_start_ms) ||
        !read_int(w, "end_ms", 0, kMax, a.window_end_ms) || a.window_end_ms < a.window_start_ms)
        return bad("\"window\" must have start_ms <= end_ms, unix milliseconds");
    if (!read_int(j, "rate_bps", 1000, 100'000'000'000, v))
        return bad("\"rate_bps\" must be in [1000, 1e11]");
    a.rate = BitRate(static_cast<std::uint64_t>(v));
    if (!read_int(j, "quota", 0, std::int64_t(1) << 50, v)) return bad("\"quota\" must be a number of bytes");
    a.quota = Bytes(static_cast<std::uint64_t>(v));
    if (!read_int(j, "upload_bps", 0, 100'000'000'000, v)) return bad("\"upload_bps\" must be a rate");
    a.upload = BitRate(static_cast<std::uint64_t>(v));
    if (!read_int(j, "refresh_s", 1, 86'400, v)) return bad("\"refresh_s\" must be in [1, 86400]");
    a.refresh = std::chrono::seconds(v);
    if (!j.contains("titles") || !j["titles"].is_array()) return bad("\"titles\" must be an array");
    for (std::size_t i = 0; i < j["titles"].size(); ++i) {
        const auto& e = j["titles"][i];
        const auto where = "titles[" + std::to_string(i) + "]";
        if (!e.is_object()) return bad(where + " is not an object");
        if (auto k =
                unknown_key(e, {"name", "info_hash", "torrent", "piece_size", "pieces", "ranges", "bytes"});
            !k.empty())
            return bad("unknown field \"" + where + "." + k + "\"");
        AssignedTitle t;
        if (!e.contains("name") || !e["name"].is_string()) return bad(where + ".name must be a string");
        t.name = e["name"].get<std::string>();
        if (auto p = name_problem(t.name); !p.empty()) return bad(where + ".name '" + t.name + "' " + p);
        if (!e.contains("info_hash") || !e["info_hash"].is_string() ||
            !is_title_id(e["info_hash"].get<std::string>()))
            return bad(where + ".info_hash must be 40 lower-case hex digits");
        t.info_hash = e["info_hash"].get<std::string>();
        if (!e.contains("torrent") || !e["torrent"].is_string() ||
            e["torrent"].get<std::string>() != "/torrents/" + t.name + ".torrent")
            return bad(where + ".torrent must be \"/torrents/" + t.name + ".torrent\" on the box's server");
        t.torrent = e["torrent"].get<std::string>();
        if (!read_int(e, "piece_size", 16 * 1024, std::int64_t(1) << 30, v) || (v & (v - 1)) != 0)
            return bad(where + ".piece_size must be a power of two of at least 16 KiB");
        t.piece_size = Bytes(static_cast<std::uint64_t>(v));
        if (!read_int(e, "pieces", 1, std::int64_t(1) << 30, v))
            return bad(where + ".pieces must be positive");
        t.pieces = static_cast<std::int32_t>(v);
        if (!e.contains("ranges") || !e["ranges"].is_array() || e["ranges"].empty())
            return bad(where + ".ranges must be a non-empty array of [first, last] pieces");
        std::int64_t next = 0;
        for (std::size_t r = 0; r < e["ranges"].size(); ++r) {
            const auto& pair = e["ranges"][r];
            const auto at = where + ".ranges[" + std::to_string(r) + "]";
            if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() ||
                !pair[1].is_number_integer())
                return bad(at + " must be [first, last]");
            const auto first = pair[0].get<std::int64_t>(), last = pair[1].get<std::int64_t>();
            if (first < next || last < first)
                return bad(at + " [" + std::to_string(first) + ", " + std::to_string(last) +
                           "] is out of order or overlaps the range before it");
            if (last >= t.pieces)
                return bad(at + " [" + std::to_string(first) + ", " + std::to_string(last) +
                           "] is out of range: the title has " + std::to_string(t.pieces) + " pieces");
            t.ranges.push_back(
                {PieceIndex(static_cast<std::int32_t>(first)), PieceIndex(static_cast<std::int32_t>(last))});
            next = last + 1;
        }
        if (!read_int(e, "bytes", 1, std::int64_t(1) << 50, v)) return bad(where + ".bytes must be positive");
        t.bytes = Bytes(static_cast<std::uint64_t>(v));
        // The ranges' bytes at full pieces bound what the title's last (short) piece can make them.
        const auto full =
            range_bytes(t.ranges, Bytes(std::uint64_t(t.pieces) * t.piece_size.value()), t.piece_size);
        if (t.bytes > full || full.value() - t.bytes.value() >= t.piece_size.value())
            return bad(where + ".bytes " + std::to_string(t.bytes.value()) + " is not what its ranges hold");
        if (a.find(t.info_hash)) return bad(where + ".info_hash " + t.info_hash + " is listed twice");
        a.titles.push_back(std::move(t));
    }
    return a;
}

std::string check_assignment(const PushAssignment& a, std::string_view box_id, Bytes push_quota) {
    if (a.box != box_id) return "it is for box '" + a.box + "', this box is '" + std::string(box_id) + "'";
    if (a.bytes() > push_quota) {
        return "it needs " + format_bytes(a.bytes()) + ", over this box's push quota of " +
               format_bytes(push_quota);
    }
    return {};
}

std::string check_title(const AssignedTitle& t, const TorrentFacts& f) {
    const auto who = "title '" + t.name + "'";
    if (f.info_hash != t.info_hash)
        return who + ": the server's torrent has info-hash " + f.info_hash + ", the assignment says " +
               t.info_hash;
    if (f.name != t.name) return who + ": info-hash " + t.info_hash + " is the title '" + f.name + "'";
    if (f.piece_size != t.piece_size || f.pieces != t.pieces) {
        return who + ": the torrent has " + std::to_string(f.pieces) + " pieces of " +
               format_bytes(f.piece_size) + ", the assignment says " + std::to_string(t.pieces) + " of " +
               format_bytes(t.piece_size);
    }
    const auto bytes = range_bytes(t.ranges, f.size, f.piece_size);
    if (bytes != t.bytes) {
        return who + ": its ranges hold " + std::to_string(bytes.value()) + " bytes, the assignment says " +
               std::to_string(t.bytes.value());
    }
    return {};
}

}  // namespace toast::client
