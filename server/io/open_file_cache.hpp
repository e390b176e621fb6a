// A bounded least-recently-used set of open block files, keyed by (disk, file relative to the disk root).
// Reads get an fd without an open(2) per request, and HTTP can sendfile(2) from it; a segment still being
// sent keeps its file open after eviction (shared ownership).
//
// Every get() fstat's the fd and returns the file's identity as of now, so callers can tell a rewritten file
// from the one they checked; a file that was deleted or replaced by a rename (no links left) is re-opened by
// path. Thread-safe; open(2) and fstat(2) run outside the lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/core/title_store.hpp"
#include "server/core/verified_chunks.hpp"
#include "server/io/open_file.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class OpenFileCache {
  public:
    struct Entry {
        std::shared_ptr<const OpenFile> file;
        FileIdentity identity;  // fstat at the time of get()
    };

    // `roots[d]` is disk d's directory; at most `capacity` (>= 1) files stay open. `opens`, when given,
    // counts every successful open(2), i.e. every miss.
    OpenFileCache(std::vector<std::filesystem::path> roots, std::size_t capacity, Counter* opens = nullptr);

    // The open file, or nullopt with `err` set to the errno of open/fstat (EISDIR for a non-regular file).
    std::optional<Entry> get(std::uint32_t disk, std::string_view file, int& err);
    // Closes the cached fd of a file (if cached); segments in flight keep theirs.
    void drop(std::uint32_t disk, std::string_view file);

    std::size_t capacity() const { return capacity_; }
    std::size_t size() const;

  private:
    struct Node {
        std::uint32_t disk;
        std::string file;
        std::shared_ptr<const OpenFile> open;
    };
    using Lru = std::list<Node>;  // most recently used first
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using Index = std::unordered_map<std::string, Lru::iterator, Hash, std::equal_to<>>;

    std::optional<Entry> open_file(std::uint32_t disk, std::string_view file, int& err);

    std::vector<std::filesystem::path> roots_;
    std::size_t capacity_;
    mutable std::mutex mutex_;
    Lru lru_;
    std::vector<Index> index_;  // per disk
    Counter* opens_;
};

}  // namespace toast::server
