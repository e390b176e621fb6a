#include "server/io/title_catalogue.hpp"

#include <atomic>

#include <spdlog/spdlog.h>

namespace toast::server {

namespace {

struct Version : StoredTitle {
    mutable std::atomic<bool> superseded{false};
};

}  // namespace

struct TitleCatalogue::Shared {
    std::mutex mutex;
    Release on_release;
    bool alive = true;

    void release(const Version& v) {
        std::lock_guard lock(mutex);
        if (alive && on_release) on_release(v, v.superseded.load());
    }
};

TitleCatalogue::TitleCatalogue(std::vector<std::filesystem::path> disks, Options options, Release on_release)
    : options_(options),
      disk_count_(static_cast<std::uint32_t>(disks.size())),
      catalogue_(std::move(disks)),
      shared_(std::make_shared<Shared>()) {
    shared_->on_release = std::move(on_release);
}

TitleCatalogue::~TitleCatalogue() {
    {
        std::lock_guard lock(mutex_);
        by_info_.clear();
        titles_.clear();  // releases the versions nobody else holds
    }
    std::lock_guard lock(shared_->mutex);
    shared_->alive = false;  // versions still held elsewhere are dropped without a release
}

std::shared_ptr<const StoredTitle> TitleCatalogue::publish(Manifest manifest) {
    auto* v = new Version;
    v->info.name = manifest.title;
    v->info.size = manifest.size;
    v->info.bitrate = manifest.bitrate;
    v->info.block_size = manifest.block_size;
    // On a tier every node has its own version (its own share of the blocks) of the same bytes, and the ETag
    // must be the same on all of them: a client moving between nodes must see one representation.
    v->info.etag = "\"" + (manifest.tier ? manifest.tier->content : manifest.version) + "\"";
    v->info.last_modified = std::chrono::system_clock::time_point(std::chrono::seconds(manifest.created));
    for (const auto& block : manifest.blocks) {
        auto& disks = v->info.block_disks.emplace_back();
        for (const auto& r : block.replicas)
            disks.push_back(r.disk);
        if (disks.empty())
            for (std::uint32_t d = 0; d < disk_count_; ++d)
                disks.push_back(d);
    }
    if (manifest.tier) {
        auto tier = std::make_shared<TitleTier>();
        tier->layout = manifest.tier->layout;
        tier->self = manifest.tier->self();
        for (std::uint64_t b = 0; b < manifest.blocks.size(); ++b)
            tier->holders.push_back(tier->layout.holders(manifest.title, b));
        v->info.tier = std::move(tier);
    }
    v->info.file_name = manifest.torrent ? manifest.torrent->name : manifest.title;
    if (manifest.torrent) v->info.info_hash = manifest.torrent->info_hash;
    if (manifest.trace) v->info.trace = std::make_shared<const DemandTrace>(*manifest.trace);
    v->manifest = std::move(manifest);
    std::shared_ptr<const StoredTitle> stored(v, [shared = shared_](const StoredTitle* p) {
        const auto* version = static_cast<const Version*>(p);
        shared->release(*version);
        delete version;
    });
    by_info_[&stored->info] = stored;
    return stored;
}

void TitleCatalogue::rescan_locked() {
    auto scan = catalogue_.scan();
    std::map<std::string, std::shared_ptr<const StoredTitle>, std::less<>> next;
    for (auto& [name, entry] : scan.titles) {
        auto old = titles_.find(name);
        if (old != titles_.end() && old->second->manifest.version == entry.manifest.version &&
            old->second->manifest.generation == entry.manifest.generation) {
            next.emplace(name, old->second);
            continue;
        }
        if (old != titles_.end() && entry.manifest.generation > old->second->manifest.generation) {
            static_cast<const Version&>(*old->second).superseded = true;
        }
        next.emplace(name, publish(std::move(entry.manifest)));
    }
    titles_ = std::move(next);
    std::erase_if(by_info_, [](const auto& kv) { return kv.second.expired(); });
    if (scan.problems != problems_) {
        for (const auto& p : scan.problems)
            spdlog::warn("catalogue: {}", p);
    }
    problems_ = std::move(scan.problems);
    last_scan_ = Clock::now();
    scanned_ = true;
}

std::size_t TitleCatalogue::rescan() {
    std::lock_guard lock(mutex_);
    rescan_locked();
    return titles_.size();
}

std::vector<std::string> TitleCatalogue::problems() const {
    std::lock_guard lock(mutex_);
    return problems_;
}

std::shared_ptr<const TitleInfo> TitleCatalogue::find(std::string_view name) {
    if (!is_valid_title_name(name)) return nullptr;  // cannot be a manifest key; no rescan for junk
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    if (!scanned_ || now - last_scan_ >= options_.rescan_interval) rescan_locked();
    auto it = titles_.find(name);
    if (it == titles_.end() && now - last_scan_ >= options_.miss_rescan_interval) {
        rescan_locked();
        it = titles_.find(name);
    }
    if (it == titles_.end()) return nullptr;
    // Aliasing pointer: the caller sees the TitleInfo, the control block keeps the whole version alive.
    return std::shared_ptr<const TitleInfo>(it->second, &it->second->info);
}

std::vector<std::shared_ptr<const TitleInfo>> TitleCatalogue::list() {
    std::lock_guard lock(mutex_);
    if (!scanned_ || Clock::now() - last_scan_ >= options_.rescan_interval) rescan_locked();
    std::vector<std::shared_ptr<const TitleInfo>> out;
    out.reserve(titles_.size());
    for (const auto& [name, stored] : titles_)
        out.emplace_back(stored, &stored->info);
    return out;
}

std::shared_ptr<const StoredTitle> TitleCatalogue::resolve(const TitleInfo& info) {
    std::lock_guard lock(mutex_);
    if (auto it = by_info_.find(&info); it != by_info_.end()) {
        if (auto stored = it->second.lock()) return stored;
    }
    auto cur = titles_.find(info.name);
    if (cur != titles_.end() && cur->second->info.etag == info.etag) return cur->second;
    return nullptr;
}

}  // namespace toast::server
