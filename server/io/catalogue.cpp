#include "server/io/catalogue.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "server/io/durable_file.hpp"

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

Catalogue::Catalogue(std::vector<std::filesystem::path> disks) : disks_(std::move(disks)) {}

CatalogueScan Catalogue::scan() {
    CatalogueScan out;
    std::map<std::filesystem::path, Cached> next;
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
                std::ifstream in(path, std::ios::binary);
                std::stringstream text;
                text << in.rdbuf();
                auto json = nlohmann::json::parse(text.str(), nullptr, false);
                if (json.is_discarded()) {
                    entry.error = "not valid JSON";
                } else {
                    auto parsed = parse_manifest(json, disks_.size());
                    entry.manifest = std::move(parsed.manifest);
                    entry.error = parsed.error;
                }
                if (entry.manifest && file != entry.manifest->title + ".json") {
                    entry.error = "holds title \"" + entry.manifest->title + "\"";
                    entry.manifest.reset();
                }
            }
            if (entry.manifest) {
                const auto& m = *entry.manifest;
                auto& title = out.titles[m.title];
                const bool better =
                    title.by_disk.empty() || m.generation > title.manifest.generation ||
                    (m.generation == title.manifest.generation && m.version > title.manifest.version);
                if (better) title.manifest = m;
                title.by_disk[d] = m;
            } else {
                out.problems.push_back("manifest " + path.string() + ": " + entry.error);
            }
            next[path] = std::move(entry);
        }
    }
    cache_ = std::move(next);
    return out;
}

}  // namespace toast::server
