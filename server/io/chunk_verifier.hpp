// Checks the 64 KiB chunks a read touches against the manifest's CRC-32C, once per file version: a
// VerifiedChunks ledger keyed by (disk, file) and the file's identity (inode, mtime, size) remembers which
// chunks passed, whether or not the file stays open, so the open-file cache may evict and re-open a file
// without hashing it again, while a file rewritten, replaced or truncated under us is checked again.
// Re-reading and re-hashing on every request would double the bytes each read moves; `toast-server verify`
// re-checks everything. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "server/core/manifest.hpp"
#include "server/core/verified_chunks.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class ChunkVerifier {
  public:
    enum class Outcome { ok, unreadable, corrupt };
    struct Result {
        Outcome outcome = Outcome::ok;
        std::string detail;  // what is wrong, naming the file and chunk
    };

    // `verified` counts chunks hashed; `failures` (per disk, may be null) chunks that did not match.
    explicit ChunkVerifier(Counter* verified) : verified_(verified) {}

    // Verifies the chunks of [offset, offset + length) of block file `file` on `disk` (open as `fd`, now
    // `identity`) that were not verified for this identity yet, or all of them when `revalidate`. `record`
    // is the block's manifest entry, `block_length` its size. A chunk that fails makes the ledger distrust
    // the whole file, so later reads check it again instead of trusting what passed before (bytes can rot
    // without changing the file's identity), and marks it suspect. Preconditions: length > 0,
    // offset + length <= block_length.
    Result verify(std::uint32_t disk, const std::string& file, const FileIdentity& identity, int fd,
                  const BlockRecord& record, std::uint64_t block_length, std::uint64_t chunk_size,
                  std::uint64_t offset, std::uint64_t length, Counter* failures, bool revalidate = false);

    // Whether a chunk of the file failed and has not passed since (VerifiedChunks::suspect).
    bool suspect(std::uint32_t disk, std::string_view file);

    // Forgets a file (its version left the store).
    void forget(std::uint32_t disk, std::string_view file);

  private:
    Counter* verified_;
    std::mutex mutex_;
    VerifiedChunks ledger_;
    // ledger_.suspect_files() as of the last change, read without the lock: every piece a read dispatches
    // asks whether its replicas are suspect, and nearly always none is.
    std::atomic<std::size_t> suspects_{0};
};

// Reads exactly `size` bytes at `offset`; false with errno set on error, errno 0 on a short file.
bool pread_all(int fd, char* buf, std::size_t size, std::uint64_t offset);

}  // namespace toast::server
