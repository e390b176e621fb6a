#include "server/core/manifest.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "server/core/block_math.hpp"

namespace toast::server {

namespace {

bool name_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

std::string hex_crcs(const std::vector<std::uint32_t>& crcs) {
    std::string out;
    out.reserve(crcs.size() * 8);
    char buf[9];
    for (auto c : crcs) {
        std::snprintf(buf, sizeof buf, "%08x", c);
        out += buf;
    }
    return out;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

std::optional<std::vector<std::uint32_t>> parse_crcs(std::string_view text) {
    if (text.size() % 8 != 0) return std::nullopt;
    std::vector<std::uint32_t> out;
    out.reserve(text.size() / 8);
    for (std::size_t i = 0; i < text.size(); i += 8) {
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 8; ++k) {
            int d = hex_digit(text[i + k]);
            if (d < 0) return std::nullopt;
            v = (v << 4) | static_cast<std::uint32_t>(d);
        }
        out.push_back(v);
    }
    return out;
}

struct Fail {
    std::string message;
};

const nlohmann::json& field(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) throw Fail{std::string("missing field '") + key + "'"};
    return *it;
}

std::uint64_t uint_field(const nlohmann::json& j, const char* key) {
    const auto& v = field(j, key);
    // Parsed text gives unsigned numbers; a json built in memory may hold the same values as signed ones.
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
        throw Fail{std::string("'") + key + "' must be a non-negative integer"};
    }
    return v.get<std::uint64_t>();
}

std::string string_field(const nlohmann::json& j, const char* key) {
    const auto& v = field(j, key);
    if (!v.is_string()) throw Fail{std::string("'") + key + "' must be a string"};
    return v.get<std::string>();
}

// The "tier" object, and that the node's replicas are exactly on the blocks it holds.
ManifestTier parse_manifest_tier(const nlohmann::json& t, const Manifest& m) {
    auto parsed = parse_tier_json(t);
    if (!parsed.tier) throw Fail{"'" + parsed.error + "'"};
    ManifestTier tier;
    tier.layout = std::move(*parsed.tier);
    tier.node = string_field(t, "node");
    if (!tier.layout.find(tier.node))
        throw Fail{"'tier.node' \"" + tier.node + "\" is not a node of the tier"};
    tier.content = string_field(t, "content");
    if (tier.content.size() != 16 || tier.content.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Fail{"'tier.content' must be 16 lowercase hex digits"};
    const auto self = *tier.layout.find(tier.node);
    for (std::size_t b = 0; b < m.blocks.size(); ++b) {
        const auto holders = tier.layout.holders(m.title, b);
        const bool held = std::find(holders.begin(), holders.end(), self) != holders.end();
        if (held == m.blocks[b].replicas.empty()) {
            throw Fail{"blocks[" + std::to_string(b) + "]: node \"" + tier.node + "\" " +
                       (held ? "holds it by the tier's placement but it has no replicas"
                             : "does not hold it by the tier's placement but it has replicas")};
        }
    }
    return tier;
}

}  // namespace

bool is_valid_title_name(std::string_view name) {
    if (name.empty() || name.size() > 128 || name.front() == '.') return false;
    for (char c : name)
        if (!name_char(c)) return false;
    return true;
}

bool is_valid_file_name(std::string_view name) {
    if (name.empty() || name.size() > 160 || name.front() == '.') return false;
    for (char c : name)
        if (!name_char(c)) return false;
    return true;
}

bool is_safe_relative_path(std::string_view path) {
    if (path.empty() || path.size() > 1024) return false;
    std::size_t start = 0;
    while (start <= path.size()) {
        auto slash = path.find('/', start);
        auto part =
            path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (part.empty() || part.front() == '.') return false;  // also rejects "." and ".."
        for (char c : part)
            if (!name_char(c) && c != '@') return false;
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return true;
}

std::string version_dir_name(std::string_view title, std::string_view version) {
    return "blocks/" + std::string(title) + "@" + std::string(version);
}

std::string torrent_file_path(std::string_view title, std::string_view version) {
    return "torrents/" + std::string(title) + "@" + std::string(version) + ".torrent";
}

std::string block_file_name(std::string_view title, std::string_view version, std::uint64_t block) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "/%06llu.blk", static_cast<unsigned long long>(block));
    return version_dir_name(title, version) + buf;
}

nlohmann::json manifest_to_json(const Manifest& m) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : m.blocks) {
        nlohmann::json replicas = nlohmann::json::array();
        for (const auto& r : b.replicas)
            replicas.push_back({{"disk", r.disk}, {"file", r.file}});
        blocks.push_back({{"replicas", std::move(replicas)}, {"crc32c", hex_crcs(b.chunk_crcs)}});
    }
    nlohmann::json j = {{"format", 1},
                        {"title", m.title},
                        {"size", m.size},
                        {"bitrate", m.bitrate.value()},
                        {"block_size", m.block_size},
                        {"policy", std::string(to_string(m.policy))},
                        {"seed", m.seed},
                        {"version", m.version},
                        {"generation", m.generation},
                        {"created", m.created},
                        {"chunk_size", m.chunk_size},
                        {"blocks", std::move(blocks)}};
    if (m.trace) j["trace"] = {{"round_ns", m.trace->round.count()}, {"bytes", m.trace->bytes}};
    if (!m.disk_ids.empty()) j["disk_ids"] = m.disk_ids;
    if (m.torrent) {
        j["torrent"] = {
            {"file", m.torrent->file}, {"name", m.torrent->name}, {"info_hash", m.torrent->info_hash}};
    }
    if (m.tier) {
        auto tier = tier_to_json(m.tier->layout);
        tier["node"] = m.tier->node;
        tier["content"] = m.tier->content;
        j["tier"] = std::move(tier);
    }
    return j;
}

bool is_valid_disk_id(std::string_view id) {
    return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
}

std::string remap_disks(Manifest& m, const std::vector<std::string>& current_ids) {
    if (m.disk_ids.empty()) return {};
    std::vector<std::size_t> to(m.disk_ids.size());
    std::vector<bool> taken(current_ids.size(), false);
    for (std::size_t p = 0; p < m.disk_ids.size(); ++p) {
        auto it = std::find(current_ids.begin(), current_ids.end(), m.disk_ids[p]);
        if (it != current_ids.end()) {
            to[p] = static_cast<std::size_t>(it - current_ids.begin());
        } else if (p < current_ids.size() && current_ids[p].empty()) {
            to[p] = p;
        } else {
            return "its replicas on the disk with identity " + m.disk_ids[p] + " (disk " + std::to_string(p) +
                   " at ingest) have no configured disk: no disk in 'disks' has that identity";
        }
        if (taken[to[p]]) {
            return "disk " + std::to_string(to[p]) + " would stand for two disks of the ingest (identity " +
                   m.disk_ids[p] + ")";
        }
        taken[to[p]] = true;
    }
    for (auto& b : m.blocks)
        for (auto& r : b.replicas)
            r.disk = static_cast<std::uint32_t>(to[r.disk]);
    std::vector<std::string> ids(current_ids.size());
    for (std::size_t p = 0; p < m.disk_ids.size(); ++p)
        ids[to[p]] = m.disk_ids[p];
    m.disk_ids = std::move(ids);
    return {};
}

namespace {

// The header fields: everything but the blocks and the optional sections.
Manifest parse_header(const nlohmann::json& j) {
    if (!j.is_object()) throw Fail{"a manifest must be a JSON object"};
    if (uint_field(j, "format") != 1) throw Fail{"unsupported 'format' " + field(j, "format").dump()};
    Manifest m;
    m.title = string_field(j, "title");
    if (!is_valid_title_name(m.title)) throw Fail{"invalid 'title' \"" + m.title + "\""};
    m.size = uint_field(j, "size");
    m.bitrate = BitRate(uint_field(j, "bitrate"));
    m.block_size = uint_field(j, "block_size");
    if (m.block_size == 0) throw Fail{"'block_size' must be greater than 0"};
    auto policy_text = string_field(j, "policy");
    auto policy = parse_placement_policy(policy_text);
    if (!policy) throw Fail{"unknown 'policy' \"" + policy_text + "\""};
    m.policy = *policy;
    m.seed = uint_field(j, "seed");
    m.version = string_field(j, "version");
    if (m.version.empty() || m.version.size() > 64 || !is_safe_relative_path(m.version) ||
        m.version.find('/') != std::string::npos) {
        throw Fail{"invalid 'version' \"" + m.version + "\""};
    }
    m.generation = uint_field(j, "generation");
    const auto& created = field(j, "created");
    if (!created.is_number_integer()) throw Fail{"'created' must be an integer"};
    m.created = created.get<std::int64_t>();
    m.chunk_size = uint_field(j, "chunk_size");
    if (m.chunk_size == 0) throw Fail{"'chunk_size' must be greater than 0"};
    return m;
}

// blocks[i] (`where`): its replicas, each on a configured disk at most once, and its chunk checksums. On a
// tier (`on_tier`) a block the node does not hold has no replicas here (checked against the tier later).
BlockRecord parse_block(const nlohmann::json& b, const std::string& where, std::uint64_t chunks,
                        std::size_t disk_count, bool on_tier) {
    if (!b.is_object()) throw Fail{where + " must be an object"};
    BlockRecord rec;
    const auto& replicas = field(b, "replicas");
    if (!replicas.is_array()) throw Fail{where + ".replicas must be an array"};
    if (replicas.empty() && !on_tier) throw Fail{where + ".replicas must be a non-empty array"};
    std::set<std::uint32_t> seen;
    for (const auto& r : replicas) {
        if (!r.is_object()) throw Fail{where + ".replicas entries must be objects"};
        BlockReplica rep;
        auto disk = uint_field(r, "disk");
        if (disk >= disk_count) {
            throw Fail{where + " names disk " + std::to_string(disk) + " but only " +
                       std::to_string(disk_count) + " disks are configured"};
        }
        rep.disk = static_cast<std::uint32_t>(disk);
        if (!seen.insert(rep.disk).second)
            throw Fail{where + " lists disk " + std::to_string(disk) + " twice"};
        rep.file = string_field(r, "file");
        if (!is_safe_relative_path(rep.file)) throw Fail{where + " has an unsafe file \"" + rep.file + "\""};
        rec.replicas.push_back(std::move(rep));
    }
    auto crcs = parse_crcs(string_field(b, "crc32c"));
    if (!crcs || crcs->size() != chunks) {
        throw Fail{where + ".crc32c must hold " + std::to_string(chunks) + " checksums of 8 hex digits"};
    }
    rec.chunk_crcs = std::move(*crcs);
    return rec;
}

void parse_blocks(const nlohmann::json& j, std::size_t disk_count, Manifest& m) {
    const auto& blocks = field(j, "blocks");
    if (!blocks.is_array()) throw Fail{"'blocks' must be an array"};
    const auto expected = block_count(m.size, m.block_size);
    if (blocks.size() != expected) {
        throw Fail{"'blocks' has " + std::to_string(blocks.size()) + " entries, size and block_size need " +
                   std::to_string(expected)};
    }
    m.blocks.reserve(blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const auto chunks = block_count(block_length(i, m.size, m.block_size), m.chunk_size);
        m.blocks.push_back(parse_block(blocks[i], "blocks[" + std::to_string(i) + "]", chunks, disk_count,
                                       j.contains("tier")));
    }
}

// The demand trace: per-round byte counts that add up to the title's size.
DemandTrace parse_trace(const nlohmann::json& t, std::uint64_t size) {
    if (!t.is_object()) throw Fail{"'trace' must be an object"};
    DemandTrace trace;
    trace.round = std::chrono::nanoseconds(uint_field(t, "round_ns"));
    if (trace.round.count() <= 0) throw Fail{"'trace.round_ns' must be greater than 0"};
    const auto& bytes = field(t, "bytes");
    if (!bytes.is_array() || bytes.empty()) throw Fail{"'trace.bytes' must be a non-empty array"};
    for (const auto& b : bytes) {
        if (!b.is_number_integer() || (!b.is_number_unsigned() && b.get<std::int64_t>() < 0))
            throw Fail{"'trace.bytes' must hold non-negative integers"};
        trace.bytes.push_back(b.get<std::uint64_t>());
    }
    if (trace.total() != size) {
        throw Fail{"'trace.bytes' sums to " + std::to_string(trace.total()) + ", 'size' is " +
                   std::to_string(size)};
    }
    return trace;
}

// The identity of each disk at ingest, one for every disk a replica names.
void parse_disk_ids(const nlohmann::json& ids, Manifest& m) {
    if (!ids.is_array() || ids.size() > 65536) throw Fail{"'disk_ids' must be an array of disk ids"};
    for (const auto& id : ids) {
        if (!id.is_string() || !is_valid_disk_id(id.get<std::string>()))
            throw Fail{"'disk_ids' entries must be 1-64 lowercase hex digits"};
        m.disk_ids.push_back(id.get<std::string>());
    }
    for (const auto& b : m.blocks)
        for (const auto& r : b.replicas)
            if (r.disk >= m.disk_ids.size())
                throw Fail{"a replica names disk " + std::to_string(r.disk) + " but 'disk_ids' has " +
                           std::to_string(m.disk_ids.size()) + " entries"};
}

TorrentRecord parse_torrent(const nlohmann::json& t) {
    if (!t.is_object()) throw Fail{"'torrent' must be an object"};
    TorrentRecord rec;
    rec.file = string_field(t, "file");
    if (!is_safe_relative_path(rec.file)) throw Fail{"torrent has an unsafe file \"" + rec.file + "\""};
    rec.name = string_field(t, "name");
    if (!is_valid_file_name(rec.name)) throw Fail{"invalid torrent 'name' \"" + rec.name + "\""};
    rec.info_hash = string_field(t, "info_hash");
    if (rec.info_hash.size() != 40 ||
        rec.info_hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
        throw Fail{"torrent 'info_hash' must be 40 lowercase hex digits"};
    }
    return rec;
}

}  // namespace

ManifestParse parse_manifest(const nlohmann::json& j, std::size_t disk_count) {
    try {
        Manifest m = parse_header(j);
        parse_blocks(j, disk_count, m);
        if (j.contains("trace")) m.trace = parse_trace(j["trace"], m.size);
        if (j.contains("disk_ids")) parse_disk_ids(j["disk_ids"], m);
        if (auto t = j.find("torrent"); t != j.end()) m.torrent = parse_torrent(*t);
        if (auto t = j.find("tier"); t != j.end()) m.tier = parse_manifest_tier(*t, m);
        return {std::move(m), {}};
    } catch (const Fail& f) {
        return {std::nullopt, f.message};
    } catch (const nlohmann::json::exception& e) {
        return {std::nullopt, e.what()};
    }
}

}  // namespace toast::server
