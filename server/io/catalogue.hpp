// The store's catalogue: every disk holds a copy of every manifest under manifests/NAME.json. A scan reads
// them all (re-parsing only files that changed since the last scan) and keeps, per title, the manifest with
// the highest generation, so the catalogue survives a lost disk and a crash between the per-disk renames of a
// re-ingest (both versions' blocks exist until every disk has the new manifest).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/core/manifest.hpp"

namespace toast::server {

// Where things live on one disk. Only ingest creates paths, and only from validated names.
std::filesystem::path manifests_dir(const std::filesystem::path& disk);
std::filesystem::path manifest_path(const std::filesystem::path& disk, std::string_view title);
std::filesystem::path ingest_lock_path(const std::filesystem::path& disk);

// A disk's identity: a random id written into DISK/disk.id at its first use by ingest, so manifests name
// disks by what they are, not by their position in the config's `disks`.
std::filesystem::path disk_id_path(const std::filesystem::path& disk);
// The disk's identity, or "" when it has none yet or the file cannot be read or is not a valid id.
std::string read_disk_id(const std::filesystem::path& disk);
// The disk's identity, written (durably) first if it has none. Throws std::runtime_error naming the disk.
std::string ensure_disk_id(const std::filesystem::path& disk);

struct CatalogueEntry {
    Manifest manifest;                        // the winner: highest generation, then highest version
    std::map<std::size_t, Manifest> by_disk;  // every disk's readable copy
};

struct CatalogueScan {
    std::map<std::string, CatalogueEntry> titles;
    std::vector<std::string> problems;  // unreadable or invalid manifest files, one line each
    // Valid manifests whose disks the config does not hold now (see remap_disks): not served, but their
    // blocks are kept.
    std::vector<Manifest> unplaced;
};

class Catalogue {
  public:
    explicit Catalogue(std::vector<std::filesystem::path> disks);
    CatalogueScan scan();

  private:
    struct Cached {
        std::uintmax_t inode = 0;
        std::int64_t mtime_ns = 0;
        std::uintmax_t size = 0;
        std::optional<Manifest> manifest;
        std::string error;
    };
    std::vector<std::filesystem::path> disks_;
    std::map<std::filesystem::path, Cached> cache_;
};

}  // namespace toast::server
