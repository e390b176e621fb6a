// What the box keeps across restarts and within its disk quota: the saved title list, and which titles the
// cache policy evicts to make room.
#include <algorithm>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <libtorrent/torrent_status.hpp>

#include "client/lt/torrent_file.hpp"
#include "client/service/service_title.hpp"
#include "client/service/title_service.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace toast::client {

namespace {

constexpr const char* kListFile = "titles.json";

}  // namespace

void TitleService::load_saved() {
    auto list_path = options_.save_dir / kListFile;
    std::string text;
    try {
        text = read_file(list_path);
    } catch (const FileReadError& e) {
        if (e.missing()) return;  // a first start: no title saved yet
        throw;
    }
    std::string error;
    auto saved = parse_saved_titles(text, &error);
    if (!saved) throw std::runtime_error(list_path.string() + ": " + error + " (fix or remove the file)");
    for (auto& s : *saved) {
        auto dir = titles_dir_ / s.id;
        try {
            auto bytes = read_file(dir / kTitleTorrentFile);
            auto torrent = parse_title_torrent(std::vector<char>(bytes.begin(), bytes.end()),
                                               (dir / kTitleTorrentFile).string());
            if (title_id(torrent.params.ti->info_hashes().get_best()) != s.id)
                throw std::runtime_error("its torrent is another title's");
            auto rate = torrent.bitrate;
            auto g = TitleGeometry::make(Bytes(static_cast<std::uint64_t>(torrent.params.ti->total_size())),
                                         Bytes(static_cast<std::uint64_t>(torrent.params.ti->piece_length())),
                                         rate.value_or(BitRate(0)), &error);
            if (!g) throw std::runtime_error("unusable title: " + error);
            auto t = std::make_unique<ServiceTitle>(s, std::move(torrent), *g, dir);
            start_seeding(*t);
            titles_[s.id] = std::move(t);
        } catch (const std::exception& e) {
            spdlog::warn("dropping title {} ('{}'): {}", s.id, s.name, e.what());
        }
    }
    spdlog::info("resumed {} of {} saved title(s)", titles_.size(), saved->size());
}

void TitleService::save_list() {
    std::vector<SavedTitle> list;
    for (auto& [id, t] : titles_)
        list.push_back(t->saved);
    try {
        write_file_atomically(options_.save_dir / kListFile, format_saved_titles(list));
    } catch (const std::exception& e) {
        spdlog::error("cannot save the title list: {}", e.what());
    }
}

bool TitleService::make_room(ServiceTitle* for_title, ControlResponse* refusal) {
    if (!options_.disk_quota) return true;
    std::vector<CacheEntry> entries;
    for (auto& [id, t] : titles_) {
        // A title held by push counts against the push quota, until it is played.
        if (t->saved.pushed && t.get() != for_title) continue;
        bool pinned = t->stream != nullptr || t.get() == for_title;
        CacheEntry e{.id = id,
                     .bytes = pinned ? t->geometry.total_size() : disk_bytes(*t),
                     .size = t->geometry.total_size(),
                     .last_watched = std::max(t->saved.added, t->saved.last_watched),
                     .pinned = pinned};
        if (options_.cache == CachePolicy::popularity && link_) {
            e.demand = link_->demand(id);
            e.bitrate = t->geometry.bitrate();
            e.duration_s = std::chrono::duration<double>(t->geometry.title_duration()).count();
            e.upload = options_.upload_limit.value_or(BitRate(0));
            if (t->seed.is_valid()) {
                // The tracker's counts include this box: the others are one fewer.
                const auto st = t->seed.status({});
                e.copies = std::max(0, std::max(st.num_complete, 0) + std::max(st.num_incomplete, 0) - 1);
            }
        }
        entries.push_back(std::move(e));
    }
    auto plan = plan_cache_evictions(std::move(entries), *options_.disk_quota, options_.cache);
    if (!plan.fits) {
        *refusal = {
            .status = 507,
            .body = api_error_body("disk quota " + format_bytes(*options_.disk_quota) +
                                   ": the titles playing now and this one need " +
                                   format_bytes(plan.used_after) + " even with every other title evicted")};
        return false;
    }
    for (const auto& id : plan.evict) {
        spdlog::info(
            "disk quota {}: evicting the {} title {} ('{}')", format_bytes(*options_.disk_quota),
            options_.cache == CachePolicy::popularity ? "least needed per byte" : "least recently watched",
            id, find(id)->saved.name);
        remove_title(id);
    }
    return true;
}

}  // namespace toast::client
