#include "server/io/open_file_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace toast::server {

namespace {

FileIdentity identity_of(const struct stat& st) {
    return FileIdentity{static_cast<std::uint64_t>(st.st_ino),
                        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                        static_cast<std::uint64_t>(st.st_size)};
}

}  // namespace

OpenFileCache::OpenFileCache(std::vector<std::filesystem::path> roots, std::size_t capacity, Counter* opens)
    : roots_(std::move(roots)),
      capacity_(std::max<std::size_t>(1, capacity)),
      index_(roots_.size()),
      opens_(opens) {}

std::optional<OpenFileCache::Entry> OpenFileCache::get(std::uint32_t disk, std::string_view file, int& err) {
    if (disk >= roots_.size()) {
        err = ENOENT;
        return std::nullopt;
    }
    std::shared_ptr<const OpenFile> cached;
    {
        std::lock_guard lock(mutex_);
        auto it = index_[disk].find(file);
        if (it != index_[disk].end()) {
            lru_.splice(lru_.begin(), lru_, it->second);
            cached = it->second->open;
        }
    }
    if (cached) {
        struct stat st {};
        // Still linked: the path names this inode (a rename over it or a delete leaves no links). A rewrite
        // in place keeps the fd valid; the new identity tells the caller to check the bytes again.
        if (::fstat(cached->fd(), &st) == 0 && st.st_nlink > 0) return Entry{cached, identity_of(st)};
        drop(disk, file);
    }
    return open_file(disk, file, err);
}

std::optional<OpenFileCache::Entry> OpenFileCache::open_file(std::uint32_t disk, std::string_view file,
                                                             int& err) {
    const auto path = roots_[disk] / std::filesystem::path(std::string(file));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err = errno;
        return std::nullopt;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        err = S_ISREG(st.st_mode) ? errno : EISDIR;
        ::close(fd);
        return std::nullopt;
    }
    auto opened = std::make_shared<const OpenFile>(fd);
    if (opens_) opens_->inc();
    std::shared_ptr<const OpenFile> evicted;  // closed after the lock is released
    std::lock_guard lock(mutex_);
    auto& index = index_[disk];
    auto it = index.find(file);
    if (it != index.end()) {
        // Another worker opened it meanwhile: keep one fd per file in the cache.
        it->second->open = opened;
        lru_.splice(lru_.begin(), lru_, it->second);
    } else {
        if (lru_.size() >= capacity_) {
            auto& oldest = lru_.back();
            evicted = std::move(oldest.open);
            index_[oldest.disk].erase(oldest.file);
            lru_.pop_back();
        }
        lru_.push_front(Node{disk, std::string(file), opened});
        index.emplace(std::string(file), lru_.begin());
    }
    return Entry{opened, identity_of(st)};
}

void OpenFileCache::drop(std::uint32_t disk, std::string_view file) {
    std::shared_ptr<const OpenFile> closing;
    std::lock_guard lock(mutex_);
    if (disk >= index_.size()) return;
    auto it = index_[disk].find(file);
    if (it == index_[disk].end()) return;
    closing = std::move(it->second->open);
    lru_.erase(it->second);
    index_[disk].erase(it);
}

std::size_t OpenFileCache::size() const {
    std::lock_guard lock(mutex_);
    return lru_.size();
}

}  // namespace toast::server
