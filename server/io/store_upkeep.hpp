// The store's upkeep: disks made ready for writing (their subdirectories and identities), and the store
// cleaned of what ingests leave behind: a crashed one's temporary files and orphan versions, stale manifest
// copies, and a committed one's older versions. The clean-up runs under the ingest lock (flock on disk 0), so
// that it never removes what a concurrent ingest is still writing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "server/core/manifest.hpp"
#include "server/core/server_config.hpp"

namespace toast::server {

// Creates manifests/, blocks/ and torrents/ on every disk. Throws IngestError for a disk that is not a
// directory or cannot be prepared.
void prepare_disks(const ServerConfig& config);

// Every disk's identity, giving one to a disk at its first use. Throws IngestError when an identity cannot
// be read or written, or when two disks have the same one.
std::vector<std::string> disk_identities(const ServerConfig& config);

struct CleanupReport {
    std::size_t temporary_files = 0;
    std::size_t orphan_versions = 0;     // block directories no current manifest references
    std::size_t repaired_manifests = 0;  // disks whose manifest copy was missing, stale or unreadable
};

// Removes leftovers of crashed ingests and rewrites stale manifest copies. Takes the ingest lock itself.
CleanupReport clean_up_store(const ServerConfig& config);

// The work of clean_up_store, for a caller that already holds the ingest lock.
CleanupReport clean_up_locked(const ServerConfig& config);

// Once `m` is live, the title's older block directories and torrents go; `version_dir` is m's block
// directory. Returns how many block directories were removed. The caller holds the ingest lock.
std::size_t drop_old_versions(const ServerConfig& config, const Manifest& m, const std::string& version_dir);

}  // namespace toast::server
