// Ingest: store a media file as a title (blocks placed by policy, checksummed, manifest on every disk) and
// write its .torrent. Never leaves a half-written title visible:
//   1. under the store's ingest lock (flock on disk 0), clean up what a crashed ingest left behind
//      (store_upkeep.hpp);
//   2. write every block replica into a new version directory under a temporary name, fsync, rename;
//      hash torrent pieces from the same pass over the source;
//   3. stage the manifest on every disk and the .torrent next to its target (temporary names, fsync'ed);
//   4. commit: rename the manifests into place (the catalogue keeps the highest generation, so the first
//      rename already publishes the complete new version), fsync the directories; then rename the .torrent;
//   5. remove the previous version's blocks.
// A crash at any point leaves the previous version (or nothing) served; the next ingest removes leftovers.
// An MPEG-TS or MP4 source also gets its demand trace (bytes first needed per round) in the manifest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "server/core/manifest.hpp"
#include "server/core/server_config.hpp"
#include "server/io/ingest_error.hpp"
#include "toast/common/endpoint.hpp"

namespace toast::server {

struct IngestOptions {
    std::string name;
    std::filesystem::path media;
    std::filesystem::path torrent;
    std::optional<PlacementPolicy> policy;  // default: config.policy
    std::optional<BitRate> bitrate;         // default: the trace's average, else config.default_bitrate
    std::vector<std::string> announce;
    // The operator's own peers (e.g. a seed beside this server), written to the torrent's
    // "toast"."operator_peers": every toast-client counts them as server-side, not as viewers.
    std::vector<Endpoint> operator_peers;
    std::optional<Bytes> block_size;               // default: config.block_size, else bitrate x time_slice
    std::optional<Bytes> piece_size;               // default: config.piece_size
    std::optional<bool> private_torrent;           // default: config.private_torrents
    std::optional<std::filesystem::path> peer_ca;  // default: config.peer_ca; a CA certificate (PEM)
    // Record the demand trace of an MPEG-TS or MP4 source (rounds of config.time_slice), so the title is
    // paced and admitted by it. A source in one of those containers that cannot be parsed fails the ingest
    // unless this is off; other files are constant-rate titles either way.
    bool trace = true;
};

struct IngestResult {
    Manifest manifest;
    std::string info_hash;                       // hex, v1
    std::vector<std::uint64_t> blocks_per_disk;  // replicas written to each disk
    std::uint64_t held_blocks = 0;               // blocks this node holds (all of them off a tier)
    std::size_t removed_versions = 0;            // old versions' block directories removed after the commit
};

// Throws IngestError naming the bad argument (before anything is written) or the failed operation.
// With `config.tier` the node writes only the blocks it holds (toast/common/tier.hpp), the torrent lists
// every node and the tier, and the block size defaults to a multiple of the piece size.
IngestResult ingest_title(const ServerConfig& config, const IngestOptions& options);

// On a tier: the default block size (bitrate x time_slice) rounded to the nearest multiple of the piece
// size, at least one piece, so that every piece lies in one block.
std::uint64_t tier_block_size(std::uint64_t block_size, std::uint64_t piece_size);

}  // namespace toast::server
