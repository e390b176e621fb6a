#include "server/io/catalogue.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>

#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace toast::server {

std::filesystem::path manifests_dir(const std::filesystem::path& disk) {
    return disk / "manifests";
}

std::filesystem::path manifest_path(const std::filesystem::path& disk, std::string_view title) {
    return manifests_dir(disk) / (std::string(title) + ".json");
}

std::filesystem::path ingest_lock_path(const std::filesystem::path& disk) {
    return disk / "ingest.lock";
}

std::filesystem::path disk_id_path(const std::filesystem::path& disk) {
    return disk / "disk.id";
}

std::string read_disk_id(const std::filesystem::path& disk) {
    std::ifstream in(disk_id_path(disk), std::ios::binary);
    std::string id;
    if (!in || !std::getline(in, id) || !is_valid_disk_id(id)) return {};
    return id;
}

std::string ensure_disk_id(const std::filesystem::path& disk) {
    if (auto id = read_disk_id(disk); !id.empty()) return id;
    std::error_code ec;
    if (std::filesystem::exists(disk_id_path(disk), ec)) {
        throw std::runtime_error(disk_id_path(disk).string() +
                                 " is not a disk id (1-64 lowercase hex digits); remove it only if this disk "
                                 "holds no titles");
    }
    std::random_device rd;
    char hex[33];
    for (int i = 0; i < 4; ++i)
        std::snprintf(hex + 8 * i, 9, "%08x", static_cast<unsigned>(rd()));
    write_file_atomically(disk_id_path(disk), std::string(hex) + "\n");
    return hex;
}

Catalogue::Catalogue(std::vector<std::filesystem::path> disks) : disks_(std::move(disks)) {}

CatalogueScan Catalogue::scan() {
    CatalogueScan out;
    std::map<std::filesystem::path, Cached> next;
    std::vector<std::string> ids;
    for (const auto& disk : disks_)
        ids.push_back(read_disk_id(disk));
    for (std::size_t d = 0; d < disks_.size(); ++d) {
        std::error_code ec;
        std::filesystem::directory_iterator it(manifests_dir(disks_[d]), ec);
        if (ec) continue;  // a missing or unreadable disk: the other copies serve the catalogue
        for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
            if (ec) break;
            const auto& path = it->path();
            const auto file = path.filename().string();
            if (file.empty() || file.front() == '.' || path.extension() != ".json") continue;
            struct stat st {};
            if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            const std::int64_t mtime_ns =
                static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
            Cached entry;
            auto old = cache_.find(path);
            if (old != cache_.end() && old->second.inode == st.st_ino && old->second.mtime_ns == mtime_ns &&
                old->second.size == static_cast<std::uintmax_t>(st.st_size)) {
                entry = std::move(old->second);
            } else {
                entry.inode = st.st_ino;
                entry.mtime_ns = mtime_ns;
                entry.size = static_cast<std::uintmax_t>(st.st_size);
                std::string text;
                try {
                    text = read_file(path);
                } catch (const FileReadError& e) {
                    entry.error = "cannot be read: " + e.reason();
                }
                if (entry.error.empty()) {
                    auto json = nlohmann::json::parse(text, nullptr, false);
                    if (json.is_discarded()) {
                        entry.error = "not valid JSON";
                    } else {
                        auto parsed = parse_manifest(json, disks_.size());
                        entry.manifest = std::move(parsed.manifest);
                        entry.error = parsed.error;
                    }
                }
                if (entry.manifest && file != entry.manifest->title + ".json") {
                    entry.error = "holds title \"" + entry.manifest->title + "\"";
                    entry.manifest.reset();
                }
            }
            std::optional<Manifest> placed = entry.manifest;
            std::string error = entry.error;
            if (placed) {
                // Cached as written; placed on the disks as they are configured now.
                error = remap_disks(*placed, ids);
                if (!error.empty()) {
                    out.unplaced.push_back(*entry.manifest);
                    placed.reset();
                }
            }
            if (placed) {
                const auto& m = *placed;
                auto& title = out.titles[m.title];
                const bool better =
                    title.by_disk.empty() || m.generation > title.manifest.generation ||
                    (m.generation == title.manifest.generation && m.version > title.manifest.version);
                if (better) title.manifest = m;
                title.by_disk[d] = m;
            } else {
                out.problems.push_back("manifest " + path.string() + ": " + error);
            }
            next[path] = std::move(entry);
        }
    }
    cache_ = std::move(next);
    return out;
}

}  // namespace toast::server
