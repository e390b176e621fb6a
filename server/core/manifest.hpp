// A title's manifest: everything needed to serve it and check it, written at ingest onto every disk (so
// losing a disk does not lose the catalogue). Block files are named in the manifest, relative to the disk's
// store root; a title name is only ever a key, never turned into a path when looking a title up.
//
// JSON (format 1):
//   {"format":1, "title":"NAME", "size":N, "bitrate":BITS_PER_S, "block_size":B, "policy":"rda", "seed":S,
//    "version":"HEX", "generation":G, "created":UNIX_SECONDS, "chunk_size":65536,
//    "blocks":[{"replicas":[{"disk":0,"file":"blocks/NAME@HEX/000000.blk"}, ...], "crc32c":"8 hex digits per
//    chunk"}, ...],
//    "trace":{"round_ns":N, "bytes":[...]},      optional: the title's demand trace (demand_trace.hpp), when
//                                                 ingest found one in an MPEG-TS or MP4 file
//    "torrent":{"file":"torrents/NAME@HEX.torrent", "name":"NAME.ts", "info_hash":"40 hex digits"},
//    "tier":{"nodes":[{"id":ID,"url":URL},...], "replicas":2, "placement":"block", "node":ID,
//            "content":"16 hex digits"}}      optional: the title was ingested on a tier (tier.hpp); these
//                                              disks hold node `node`'s share, and a block that node does not
//                                              hold has an empty "replicas"; `content` names the bytes, the
//                                              same on every node (the title's ETag there)
// `generation` grows by one per re-ingest of a name; of several manifests for one name the highest wins.
// `torrent` (absent in manifests written before the store kept torrents) names the title's .torrent, of which
// ingest writes a copy onto every disk before the manifest, and the file name inside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/demand_trace.hpp"
#include "server/core/server_config.hpp"
#include "toast/common/tier.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

// Checksum granularity: a 256 KiB range verifies only the 64 KiB chunks it touches.
constexpr std::uint64_t kChunkSize = 64 * 1024;

struct BlockReplica {
    std::uint32_t disk = 0;
    std::string file;  // relative to the disk's store root
    bool operator==(const BlockReplica&) const = default;
};

struct BlockRecord {
    std::vector<BlockReplica> replicas;
    std::vector<std::uint32_t> chunk_crcs;  // CRC-32C of each kChunkSize chunk of the block
    bool operator==(const BlockRecord&) const = default;
};

struct TorrentRecord {
    std::string file;  // relative to a disk's store root
    std::string name;  // the file name inside the torrent: the title's name plus its container's extension
    std::string info_hash;  // v1, 40 lowercase hex digits
    bool operator==(const TorrentRecord&) const = default;
};

// A title ingested on a tier: the tier at ingest (which decides, with the title's name, the holders of each
// block), the node whose share these disks hold, and the content id every node gives the same bytes.
struct ManifestTier {
    TierLayout layout;
    std::string node;
    std::string content;  // 16 lowercase hex digits
    bool operator==(const ManifestTier&) const = default;
    NodeIndex self() const { return layout.find(node).value_or(NodeIndex(0)); }
};

struct Manifest {
    std::string title;
    std::uint64_t size = 0;
    BitRate bitrate{0};
    std::uint64_t block_size = 0;
    PlacementPolicy policy = PlacementPolicy::rda;
    std::uint64_t seed = 0;
    std::string version;  // hex id, unique per ingest; also the ETag
    std::uint64_t generation = 0;
    std::int64_t created = 0;  // seconds since the epoch
    std::uint64_t chunk_size = kChunkSize;
    std::vector<BlockRecord> blocks;
    std::optional<DemandTrace> trace;  // paced and admitted by this when present; sums to size
    // The identity (disk id file) of the disk each replica `disk` index named at ingest; empty in manifests
    // written before disks had identities, whose indices are config positions.
    std::vector<std::string> disk_ids;
    std::optional<TorrentRecord> torrent;
    std::optional<ManifestTier> tier;
    bool operator==(const Manifest&) const = default;
};

// Rewrites the replicas' disk indices from the positions at ingest to the positions of the same disks in the
// config now, found by identity (`current_ids[i]` is configured disk i's, "" when it has none or cannot be
// read). An identity no configured disk has keeps its position if the disk there has no readable identity
// (a dead or unmounted disk: the other replicas serve); otherwise the manifest cannot be placed and the
// returned message says which disk is missing. "" on success.
std::string remap_disks(Manifest& manifest, const std::vector<std::string>& current_ids);

// 1-64 lowercase hex digits: what a disk id file holds.
bool is_valid_disk_id(std::string_view id);

// [A-Za-z0-9._-]{1,128}, not starting with '.'.
bool is_valid_title_name(std::string_view name);

// A relative path of [A-Za-z0-9._@-] components separated by '/', none empty, "." or "..", none starting with
// '.': what a manifest may name as a block file.
bool is_safe_relative_path(std::string_view path);

// The block file for `block` of version `version` of `title` ("blocks/NAME@VERSION/000042.blk").
std::string block_file_name(std::string_view title, std::string_view version, std::uint64_t block);
// The directory holding a version's blocks on each disk ("blocks/NAME@VERSION").
std::string version_dir_name(std::string_view title, std::string_view version);
// Where each disk keeps a version's .torrent ("torrents/NAME@VERSION.torrent").
std::string torrent_file_path(std::string_view title, std::string_view version);
// A torrent's file name: like a title name, but up to 160 characters (a name plus an extension).
bool is_valid_file_name(std::string_view name);

nlohmann::json manifest_to_json(const Manifest& m);

struct ManifestParse {
    std::optional<Manifest> manifest;
    std::string error;  // set when manifest is empty: which field is wrong and why
};
// Validates everything a reader relies on: types, the name, block count and lengths against size, checksum
// counts, replica disks below `disk_count` and distinct, and file names safe; on a tier, the tier itself,
// and that exactly the blocks the node holds have replicas.
ManifestParse parse_manifest(const nlohmann::json& json, std::size_t disk_count);

}  // namespace toast::server
