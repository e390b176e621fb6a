#include "server/io/chunk_verifier.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "server/core/crc32c.hpp"

namespace toast::server {

namespace {

std::vector<char>& scratch(std::size_t size) {
    thread_local std::vector<char> buffer;
    if (buffer.size() < size) buffer.resize(size);
    return buffer;
}

}  // namespace

bool pread_all(int fd, char* buf, std::size_t size, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < size) {
        auto n = ::pread(fd, buf + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) {
            errno = 0;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

ChunkVerifier::Result ChunkVerifier::verify(std::uint32_t disk, const std::string& file,
                                            const FileIdentity& identity, int fd, const BlockRecord& record,
                                            std::uint64_t block_length, std::uint64_t chunk_size,
                                            std::uint64_t offset, std::uint64_t length, Counter* failures,
                                            bool revalidate) {
    const auto chunks = record.chunk_crcs.size();
    thread_local std::vector<std::uint64_t> todo;
    todo.clear();
    const auto first = offset / chunk_size;
    const auto last = std::min<std::uint64_t>((offset + length - 1) / chunk_size, chunks - 1);
    if (revalidate) {
        for (auto c = first; c <= last && c < chunks; ++c)
            todo.push_back(c);
    } else {
        std::lock_guard lock(mutex_);
        ledger_.unverified(disk, file, identity, first, last, chunks, todo);
    }
    for (auto c : todo) {
        const auto len = static_cast<std::size_t>(std::min(chunk_size, block_length - c * chunk_size));
        auto& buf = scratch(len);
        if (!pread_all(fd, buf.data(), len, c * chunk_size)) {
            return {Outcome::unreadable,
                    file + ": " + (errno ? std::strerror(errno) : "shorter than expected")};
        }
        if (verified_) verified_->inc();
        if (crc32c(buf.data(), len) != record.chunk_crcs[c]) {
            if (failures) failures->inc();
            std::lock_guard lock(mutex_);
            ledger_.fail(disk, file, identity, c, chunks);
            suspects_.store(ledger_.suspect_files(), std::memory_order_relaxed);
            return {Outcome::corrupt, file + ": chunk " + std::to_string(c) + " fails its CRC-32C"};
        }
        std::lock_guard lock(mutex_);
        ledger_.mark(disk, file, identity, c, chunks);
        suspects_.store(ledger_.suspect_files(), std::memory_order_relaxed);
    }
    return {};
}

bool ChunkVerifier::suspect(std::uint32_t disk, std::string_view file) {
    if (suspects_.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lock(mutex_);
    return ledger_.suspect(disk, file);
}

void ChunkVerifier::forget(std::uint32_t disk, std::string_view file) {
    std::lock_guard lock(mutex_);
    ledger_.forget(disk, file);
    suspects_.store(ledger_.suspect_files(), std::memory_order_relaxed);
}

}  // namespace toast::server
