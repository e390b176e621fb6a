// Test doubles for the HTTP tests: a TitleStore made of maps (title bytes in memory or in a real file) and a
// DiskControl made of a vector. Reads complete on a separate thread, like the real disk workers.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/core/disk_control.hpp"
#include "server/core/title_store.hpp"
#include "server/io/open_file.hpp"

namespace toast::server::testing {

class FakeStore : public TitleStore {
  public:
    FakeStore() : worker_([this] { work(); }) {}
    ~FakeStore() override {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        worker_.join();
    }

    // A title whose bytes are served as MemorySegments (split in two to exercise several segments).
    void add(const std::string& name, std::string bytes, BitRate bitrate = BitRate(8'000'000)) {
        std::lock_guard lock(mutex_);
        auto info = make_info(name, bytes.size(), bitrate);
        memory_[name] = std::make_shared<const std::string>(std::move(bytes));
        titles_[name] = info;
    }
    // Gives title `name` a demand trace (a variable-bit-rate title's bytes per round), and a layout for
    // admission control to charge (every block on disk 0) if it has none.
    void set_trace(const std::string& name, DemandTrace trace) {
        std::lock_guard lock(mutex_);
        auto info = std::make_shared<TitleInfo>(*titles_.at(name));
        info->trace = std::make_shared<const DemandTrace>(std::move(trace));
        if (info->block_disks.empty())
            info->block_disks.assign((info->size + info->block_size - 1) / info->block_size, {0});
        titles_[name] = info;
    }
    // A title backed by a file, served as FileSegments (sendfile path).
    void add_file(const std::string& name, const std::filesystem::path& path,
                  BitRate bitrate = BitRate(8'000'000)) {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error("cannot open " + path.string());
        std::lock_guard lock(mutex_);
        files_[name] = std::make_shared<const OpenFile>(fd);
        titles_[name] = make_info(name, std::filesystem::file_size(path), bitrate);
    }
    // Gives title `name` a torrent: its file name inside, and the bytes torrent() answers (nullopt: no intact
    // copy).
    void set_torrent(const std::string& name, const std::string& file_name, std::optional<std::string> bytes,
                     const std::string& info_hash = "0123456789abcdef0123456789abcdef01234567") {
        std::lock_guard lock(mutex_);
        auto info = std::make_shared<TitleInfo>(*titles_.at(name));
        info->file_name = file_name;
        info->info_hash = info_hash;
        titles_[name] = info;
        torrents_[name] = std::move(bytes);
    }
    // Puts title `name` on a tier (its block size becomes `block_size`).
    void set_tier(const std::string& name, std::shared_ptr<const TitleTier> tier, std::uint64_t block_size) {
        std::lock_guard lock(mutex_);
        auto info = std::make_shared<TitleInfo>(*titles_.at(name));
        info->tier = std::move(tier);
        info->block_size = block_size;
        titles_[name] = info;
    }
    // Reads touching [first, last] answer `status` instead of bytes.
    void fail_range(const std::string& name, std::uint64_t first, std::uint64_t last, ReadStatus status) {
        std::lock_guard lock(mutex_);
        failures_.push_back({name, first, last, status});
    }
    void set_read_delay(std::chrono::milliseconds d) { delay_ms_ = d.count(); }

    std::shared_ptr<const TitleInfo> find(std::string_view name) const override {
        std::lock_guard lock(mutex_);
        finds_.emplace_back(name);
        auto it = titles_.find(std::string(name));
        return it == titles_.end() ? nullptr : it->second;
    }

    std::vector<std::shared_ptr<const TitleInfo>> titles() const override {
        std::lock_guard lock(mutex_);
        std::vector<std::shared_ptr<const TitleInfo>> out;
        for (const auto& [name, info] : titles_)
            out.push_back(info);
        return out;
    }

    std::optional<std::string> torrent(const TitleInfo& title) const override {
        std::lock_guard lock(mutex_);
        auto it = torrents_.find(title.name);
        return it == torrents_.end() ? std::nullopt : it->second;
    }

    void read(ReadRequest request, ReadHandler done) override {
        {
            std::lock_guard lock(mutex_);
            ++reads_;
            max_read_ = std::max(max_read_, request.length);
            queue_.push_back([this, request, done = std::move(done)] {
                done(do_read(*request.title, request.offset, request.length));
            });
        }
        cv_.notify_one();
    }

    // Wakes a read sleeping in its delay; it then fails with io_error.
    void interrupt_reads() override {
        {
            std::lock_guard lock(mutex_);
            ++interrupts_;
        }
        cv_.notify_all();
    }
    int interrupts() const {
        std::lock_guard lock(mutex_);
        return interrupts_;
    }

    std::vector<std::string> finds() const {
        std::lock_guard lock(mutex_);
        return finds_;
    }
    std::uint64_t reads() const {
        std::lock_guard lock(mutex_);
        return reads_;
    }
    std::uint64_t max_read() const {
        std::lock_guard lock(mutex_);
        return max_read_;
    }

  private:
    struct Failure {
        std::string name;
        std::uint64_t first, last;
        ReadStatus status;
    };

    static std::shared_ptr<const TitleInfo> make_info(const std::string& name, std::uint64_t size,
                                                      BitRate rate) {
        auto info = std::make_shared<TitleInfo>();
        info->name = name;
        info->size = size;
        info->bitrate = rate;
        info->block_size = 1 << 20;
        info->etag = "\"" + name + "-" + std::to_string(size) + "\"";
        info->last_modified = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
        info->file_name = name;
        return info;
    }

    ReadResult do_read(const TitleInfo& title, std::uint64_t offset, std::uint64_t length) {
        std::unique_lock lock(mutex_);
        ReadResult r;
        if (auto d = delay_ms_.load()) {
            const int seen = interrupts_;
            if (cv_.wait_for(lock, std::chrono::milliseconds(d), [&] { return interrupts_ != seen; })) {
                r.status = ReadStatus::io_error;
                r.message = "interrupted";
                return r;
            }
        }
        for (const auto& f : failures_) {
            if (f.name == title.name && offset <= f.last && offset + length > f.first) {
                r.status = f.status;
                r.message = "block of " + title.name + " is on an offline disk";
                return r;
            }
        }
        if (auto it = files_.find(title.name); it != files_.end()) {
            r.segments.push_back(FileSegment{it->second, offset, length});
            return r;
        }
        auto data = memory_.at(title.name);
        std::uint64_t half = length / 2;
        if (half > 0) r.segments.push_back(MemorySegment{data, offset, half});
        r.segments.push_back(MemorySegment{data, offset + half, length - half});
        return r;
    }

    void work() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(mutex_);
                cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (queue_.empty()) return;
                job = std::move(queue_.front());
                queue_.pop_front();
            }
            job();
        }
    }

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> queue_;
    bool stop_ = false;
    std::map<std::string, std::shared_ptr<const TitleInfo>> titles_;
    std::map<std::string, std::shared_ptr<const std::string>> memory_;
    std::map<std::string, std::shared_ptr<const OpenFile>> files_;
    std::map<std::string, std::optional<std::string>> torrents_;
    std::vector<Failure> failures_;
    mutable std::vector<std::string> finds_;
    std::uint64_t reads_ = 0;
    std::uint64_t max_read_ = 0;
    int interrupts_ = 0;
    std::atomic<long> delay_ms_{0};
    std::thread worker_;
};

class FakeDisks : public DiskControl {
  public:
    explicit FakeDisks(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            DiskStatus d;
            d.index = i;
            d.path = "/disk" + std::to_string(i);
            d.reads = 10 * i;
            status_.push_back(d);
        }
    }
    std::vector<DiskStatus> disk_status() const override {
        std::lock_guard lock(mutex_);
        return status_;
    }
    bool set_fault(std::size_t disk, const DiskFault& fault) override {
        std::lock_guard lock(mutex_);
        if (disk >= status_.size()) return false;
        status_[disk].fault = fault;
        return true;
    }

  private:
    mutable std::mutex mutex_;
    std::vector<DiskStatus> status_;
};

}  // namespace toast::server::testing
