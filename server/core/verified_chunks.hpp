// Which checksum chunks of which block files reads have already checked against the manifest's CRC-32C.
//
// A record belongs to one file on one disk *as it was when checked*: its identity is (inode, mtime, size), so
// a file that is rewritten in place (new mtime), replaced by a rename (new inode) or truncated (new size) no
// longer matches and is checked again from scratch. The record is independent of whether the file is open:
// the store's open-file cache may close and re-open a file any number of times without a chunk being hashed
// twice (re-verifying on every re-open would make CRC-32C a large share of the server's CPU once a title has
// more block files than the cache has slots). Memory is one bit per 64 KiB chunk plus the key: about 150 bytes per block
// file, and callers forget files whose title version left the catalogue.
//
// Pure data, not thread-safe: the block store guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace toast::server {

// What fstat(2) says about a file: equal identities mean the bytes have not been replaced or rewritten.
struct FileIdentity {
    std::uint64_t inode = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t size = 0;
    bool operator==(const FileIdentity&) const = default;
};

class VerifiedChunks {
  public:
    // Appends to `out` the chunks in [first, last] of `file` on `disk` that have not been verified for
    // exactly `identity` (all of them when the file was never seen or has another identity now). A file
    // has `chunk_count` chunks; chunks at or beyond it are ignored.
    void unverified(std::uint32_t disk, std::string_view file, const FileIdentity& identity,
                    std::uint64_t first, std::uint64_t last, std::size_t chunk_count,
                    std::vector<std::uint64_t>& out) const;

    // Records that `chunk` of the file, with this identity, matched its checksum. A record for another
    // identity of the same file is replaced.
    void mark(std::uint32_t disk, std::string_view file, const FileIdentity& identity, std::uint64_t chunk,
              std::size_t chunk_count);

    // Records that `chunk` of the file, with this identity, failed its checksum: nothing that passed before
    // is trusted any more (bytes rot without changing the identity), and the file is suspect until that
    // chunk passes again or the file gets another identity.
    void fail(std::uint32_t disk, std::string_view file, const FileIdentity& identity, std::uint64_t chunk,
              std::size_t chunk_count);

    // Whether some chunk of the file failed its checksum and has not passed since. The identity is not
    // asked for: a caller choosing between replicas has not opened them.
    bool suspect(std::uint32_t disk, std::string_view file) const;
    // How many files are suspect: callers on the read path skip the look-up while there are none.
    std::size_t suspect_files() const { return suspect_files_; }

    // Drops what is known about a file (its title version was replaced or removed).
    void forget(std::uint32_t disk, std::string_view file);

    std::size_t files() const;

  private:
    struct Record {
        FileIdentity identity;
        std::vector<bool> verified;  // per chunk
        std::vector<bool> failed;    // per chunk
        std::size_t failed_count = 0;
    };
    // Keeps suspect_files_ in step with a record's failed chunks.
    void set_failed(Record& r, std::uint64_t chunk, bool failed);
    Record& record(std::uint32_t disk, std::string_view file, const FileIdentity& identity,
                   std::size_t chunk_count);
    // Transparent hashing so look-ups by string_view do not build a std::string.
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using DiskRecords = std::unordered_map<std::string, Record, Hash, std::equal_to<>>;

    const Record* find(std::uint32_t disk, std::string_view file) const;

    std::vector<DiskRecords> disks_;  // indexed by disk number
    std::size_t suspect_files_ = 0;
};

}  // namespace toast::server
