// The store's view of which title versions exist: the winning manifest per name (Catalogue), re-read when
// asked for (at most every `rescan_interval`, or every `miss_rescan_interval` while asked for a name it does
// not know), published as immutable StoredTitle versions.
//
// A version lives as long as anyone holds it, not as long as it is current: a request that found version A
// keeps reading A's blocks after a re-ingest published B. When the last holder lets go, `on_release` runs (on
// the thread that let go) with the version and whether a newer version of the name had replaced it.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/core/manifest.hpp"
#include "server/core/title_store.hpp"
#include "server/io/catalogue.hpp"

namespace toast::server {

struct StoredTitle {
    TitleInfo info;
    Manifest manifest;
};

class TitleCatalogue {
  public:
    struct Options {
        std::chrono::milliseconds rescan_interval{1000};
        std::chrono::milliseconds miss_rescan_interval{50};
    };
    using Release = std::function<void(const StoredTitle& version, bool superseded)>;

    TitleCatalogue(std::vector<std::filesystem::path> disks, Options options, Release on_release);
    ~TitleCatalogue();
    TitleCatalogue(const TitleCatalogue&) = delete;
    TitleCatalogue& operator=(const TitleCatalogue&) = delete;

    // The current version of `name` (rescanning as the options allow), or nullptr. The returned pointer
    // holds the whole version.
    std::shared_ptr<const TitleInfo> find(std::string_view name);
    // Every title's current version (rescanning as the options allow).
    std::vector<std::shared_ptr<const TitleInfo>> list();
    // The version a TitleInfo from find() belongs to; for a TitleInfo made elsewhere, the current version if
    // it carries the same ETag; else nullptr.
    std::shared_ptr<const StoredTitle> resolve(const TitleInfo& info);
    // Re-reads the manifests now; returns the number of titles.
    std::size_t rescan();
    // Problems met by the last scan (unreadable manifests).
    std::vector<std::string> problems() const;

  private:
    using Clock = std::chrono::steady_clock;
    void rescan_locked();
    std::shared_ptr<const StoredTitle> publish(Manifest manifest);

    Options options_;
    std::uint32_t disk_count_;
    Release on_release_;
    mutable std::mutex mutex_;
    Catalogue catalogue_;
    std::map<std::string, std::shared_ptr<const StoredTitle>, std::less<>> titles_;
    std::unordered_map<const TitleInfo*, std::weak_ptr<const StoredTitle>> by_info_;
    std::vector<std::string> problems_;
    Clock::time_point last_scan_{};
    bool scanned_ = false;
    // Shared with every version's deleter: set when a newer version replaces it, cleared to stop releases
    // from reaching a destroyed catalogue.
    struct Shared;
    std::shared_ptr<Shared> shared_;
};

}  // namespace toast::server
