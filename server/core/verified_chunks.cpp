#include "server/core/verified_chunks.hpp"

#include <algorithm>

namespace toast::server {

const VerifiedChunks::Record* VerifiedChunks::find(std::uint32_t disk, std::string_view file) const {
    if (disk >= disks_.size()) return nullptr;
    auto it = disks_[disk].find(file);
    return it == disks_[disk].end() ? nullptr : &it->second;
}

void VerifiedChunks::unverified(std::uint32_t disk, std::string_view file, const FileIdentity& identity,
                                std::uint64_t first, std::uint64_t last, std::size_t chunk_count,
                                std::vector<std::uint64_t>& out) const {
    if (chunk_count == 0 || first > last) return;
    last = std::min<std::uint64_t>(last, chunk_count - 1);
    const Record* r = find(disk, file);
    const bool known = r && r->identity == identity && r->verified.size() == chunk_count;
    for (auto c = first; c <= last; ++c)
        if (!known || !r->verified[c]) out.push_back(c);
}

VerifiedChunks::Record& VerifiedChunks::record(std::uint32_t disk, std::string_view file,
                                               const FileIdentity& identity, std::size_t chunk_count) {
    if (disk >= disks_.size()) disks_.resize(disk + 1);
    auto& records = disks_[disk];
    auto it = records.find(file);
    if (it == records.end()) it = records.emplace(std::string(file), Record{}).first;
    auto& r = it->second;
    if (r.identity != identity || r.verified.size() != chunk_count) {
        r.identity = identity;
        r.verified.assign(chunk_count, false);
        r.failed.assign(chunk_count, false);
        if (r.failed_count > 0) --suspect_files_;
        r.failed_count = 0;
    }
    return r;
}

void VerifiedChunks::set_failed(Record& r, std::uint64_t chunk, bool failed) {
    if (r.failed[chunk] == failed) return;
    r.failed[chunk] = failed;
    if (failed) {
        if (r.failed_count++ == 0) ++suspect_files_;
    } else if (--r.failed_count == 0) {
        --suspect_files_;
    }
}

void VerifiedChunks::mark(std::uint32_t disk, std::string_view file, const FileIdentity& identity,
                          std::uint64_t chunk, std::size_t chunk_count) {
    if (chunk >= chunk_count) return;
    auto& r = record(disk, file, identity, chunk_count);
    r.verified[chunk] = true;
    set_failed(r, chunk, false);
}

void VerifiedChunks::fail(std::uint32_t disk, std::string_view file, const FileIdentity& identity,
                          std::uint64_t chunk, std::size_t chunk_count) {
    if (chunk >= chunk_count) return;
    auto& r = record(disk, file, identity, chunk_count);
    r.verified.assign(chunk_count, false);
    set_failed(r, chunk, true);
}

bool VerifiedChunks::suspect(std::uint32_t disk, std::string_view file) const {
    const Record* r = find(disk, file);
    return r && r->failed_count > 0;
}

void VerifiedChunks::forget(std::uint32_t disk, std::string_view file) {
    if (disk >= disks_.size()) return;
    auto it = disks_[disk].find(file);
    if (it == disks_[disk].end()) return;
    if (it->second.failed_count > 0) --suspect_files_;
    disks_[disk].erase(it);
}

std::size_t VerifiedChunks::files() const {
    std::size_t n = 0;
    for (const auto& d : disks_)
        n += d.size();
    return n;
}

}  // namespace toast::server
