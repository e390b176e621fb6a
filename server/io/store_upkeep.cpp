#include "server/io/store_upkeep.hpp"

#include <exception>
#include <set>
#include <system_error>

#include "server/io/catalogue.hpp"
#include "server/io/ingest_error.hpp"
#include "toast/common/durable_file.hpp"

namespace toast::server {

namespace fs = std::filesystem;

void prepare_disks(const ServerConfig& config) {
    for (std::size_t d = 0; d < config.disks.size(); ++d) {
        const auto& path = config.disks[d].path;
        std::error_code ec;
        if (!fs::is_directory(path, ec)) {
            throw IngestError("disk " + std::to_string(d) + " (" + path.string() + ") is not a directory");
        }
        for (const char* sub : {"manifests", "blocks", "torrents"})
            if (!ec) fs::create_directories(path / sub, ec);
        if (ec)
            throw IngestError("cannot prepare disk " + std::to_string(d) + " (" + path.string() +
                              "): " + ec.message());
    }
}

std::vector<std::string> disk_identities(const ServerConfig& config) {
    std::vector<std::string> ids;
    for (std::size_t d = 0; d < config.disks.size(); ++d) {
        try {
            ids.push_back(ensure_disk_id(config.disks[d].path));
        } catch (const std::exception& e) {
            throw IngestError("disk " + std::to_string(d) + ": " + e.what());
        }
        for (std::size_t o = 0; o < d; ++o)
            if (ids[o] == ids[d])
                throw IngestError("disks " + std::to_string(o) + " and " + std::to_string(d) +
                                  " have the same identity " + ids[d] + " (" +
                                  disk_id_path(config.disks[d].path).string() +
                                  "): the same disk listed twice, or a copied directory");
    }
    return ids;
}

CleanupReport clean_up_locked(const ServerConfig& config) {
    CleanupReport report;
    Catalogue catalogue(disk_paths(config));
    auto scan = catalogue.scan();
    std::set<std::string> referenced;           // version directories under blocks/
    std::set<std::string> referenced_torrents;  // files under torrents/
    for (const auto& m : scan.unplaced) {
        referenced.insert(fs::path(version_dir_name(m.title, m.version)).filename().string());
        if (m.torrent) referenced_torrents.insert(fs::path(m.torrent->file).filename().string());
    }
    for (const auto& [name, entry] : scan.titles) {
        const auto& m = entry.manifest;
        referenced.insert(fs::path(version_dir_name(m.title, m.version)).filename().string());
        if (m.torrent) referenced_torrents.insert(fs::path(m.torrent->file).filename().string());
        const auto text = manifest_to_json(m).dump();
        for (std::size_t d = 0; d < config.disks.size(); ++d) {
            auto it = entry.by_disk.find(d);
            if (it != entry.by_disk.end() && it->second == m) continue;
            std::error_code ec;
            if (!fs::is_directory(config.disks[d].path / "manifests", ec)) continue;
            write_file_atomically(manifest_path(config.disks[d].path, m.title), text);
            ++report.repaired_manifests;
        }
    }
    for (const auto& disk : config.disks) {
        for (const std::string sub : {"manifests", "blocks", "torrents"}) {
            std::error_code ec;
            const auto dir = disk.path / sub;
            std::vector<fs::path> doomed;
            for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
                 it.increment(ec)) {
                const auto file = it->path().filename().string();
                if (is_temporary_name(file)) {
                    doomed.push_back(it->path());
                    ++report.temporary_files;
                } else if ((sub == "blocks" && !referenced.count(file)) ||
                           (sub == "torrents" && !referenced_torrents.count(file))) {
                    doomed.push_back(it->path());
                    ++report.orphan_versions;
                }
            }
            for (const auto& p : doomed)
                fs::remove_all(p, ec);
            if (!doomed.empty()) fsync_directory(dir);
        }
    }
    return report;
}

CleanupReport clean_up_store(const ServerConfig& config) {
    prepare_disks(config);
    FileLock lock(ingest_lock_path(config.disks.front().path));
    return clean_up_locked(config);
}

std::size_t drop_old_versions(const ServerConfig& config, const Manifest& m, const std::string& version_dir) {
    const auto prefix = m.title + "@";
    const auto keep = fs::path(version_dir).filename().string();
    // An empty title keeps no torrent: every older version's goes.
    const auto keep_torrent = m.torrent ? fs::path(m.torrent->file).filename().string() : std::string();
    std::size_t removed = 0;
    std::error_code ec;
    for (const auto& disk : config.disks) {
        std::vector<fs::path> old;
        for (fs::directory_iterator it(disk.path / "blocks", ec); !ec && it != fs::directory_iterator();
             it.increment(ec)) {
            const auto file = it->path().filename().string();
            if (file.rfind(prefix, 0) == 0 && file != keep) old.push_back(it->path());
        }
        for (const auto& p : old) {
            fs::remove_all(p, ec);
            ++removed;
        }
        for (fs::directory_iterator it(disk.path / "torrents", ec); !ec && it != fs::directory_iterator();
             it.increment(ec)) {
            const auto file = it->path().filename().string();
            if (file.rfind(prefix, 0) == 0 && file != keep_torrent) fs::remove(it->path(), ec);
        }
    }
    return removed;
}

}  // namespace toast::server
