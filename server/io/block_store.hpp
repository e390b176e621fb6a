// The server's block store: titles laid out by their manifests over the configured disks, read through one
// queue per disk served by that disk's own worker threads. Implements the HTTP seam (TitleStore) and the
// admin seam (DiskControl).
//
// A read is split into one piece per block. Each piece goes to the replica whose disk should finish it first
// (choose_replica over a snapshot of queue contents and each disk's fitted ServiceModel; the model of a disk
// that has served no reads for a while fades toward its prior, config `service_model_half_life`, so a disk
// avoided as slow is tried again and re-measured). A replica that is
// offline, missing, the wrong size, unreadable or fails its checksum makes the piece move to the next replica
// (toast_replica_fallbacks_total); when none is left the whole read is `unavailable` with a message naming
// the title, the block and the disks tried.
//
// Checksums: every 64 KiB chunk has a CRC-32C in the manifest. A worker verifies the chunks a piece touches
// the first time they are read and records that in a VerifiedChunks ledger keyed by (disk, file) and the
// file's identity (inode, mtime, size). The ledger does not depend on the file being open: the open-file
// cache (config `open_files`) may evict and re-open a file without its chunks being hashed again. Every use
// fstat's the fd, so a replaced, truncated, rewritten or deleted file is re-opened or re-verified.
// Re-reading and re-hashing on every request would double the bytes each read moves and make the HTTP side
// lose to a plain sendfile server; `toast-server verify` re-checks everything. Verified pieces are returned
// as FileSegments (an fd from the cache, never one open() per read) so HTTP can sendfile(2) them. A title
// version that leaves the catalogue takes its ledger records and cached fds with it.
//
// Emulated disks (config `emulate`): the worker makes each read take t_a + bytes / r_d by sleeping for the
// remainder. Faults: `stutter_pct` really reads that % of extra bytes (after the piece, wrapping inside the
// file) and counts them in the emulated time; `added_latency` delays each read; `offline` fails every read.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/core/block_math.hpp"
#include "server/core/disk_control.hpp"
#include "server/core/manifest.hpp"
#include "server/core/replica_chooser.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "server/core/verified_chunks.hpp"
#include "server/io/catalogue.hpp"
#include "server/io/open_file.hpp"
#include "server/io/open_file_cache.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

struct BlockStoreOptions {
    std::chrono::milliseconds rescan_interval{1000};  // find() re-reads changed manifests at most this often
    std::chrono::milliseconds miss_rescan_interval{50};  // ... or this often when a name is not found
    std::optional<std::size_t> open_file_cache;  // open block files kept; default: the config's open_files
};

class BlockStore final : public TitleStore, public DiskControl {
  public:
    BlockStore(const ServerConfig& config, MetricsRegistry& metrics, BlockStoreOptions options = {});
    // Stops the workers; reads still queued complete with io_error.
    ~BlockStore() override;
    BlockStore(const BlockStore&) = delete;
    BlockStore& operator=(const BlockStore&) = delete;

    std::shared_ptr<const TitleInfo> find(std::string_view name) const override;
    void read(ReadRequest request, ReadHandler done) override;
    void interrupt_reads() override {}

    std::vector<DiskStatus> disk_status() const override;
    bool set_fault(std::size_t disk, const DiskFault& fault) override;

    // Re-reads the manifests now (find() does this by itself); returns the number of titles.
    std::size_t rescan();
    // Problems met by the last scan (unreadable manifests), for the start-up log.
    std::vector<std::string> catalogue_problems() const;

  private:
    struct StoredTitle {
        TitleInfo info;
        Manifest manifest;
    };
    struct Request;
    struct Job {
        std::shared_ptr<Request> request;
        std::size_t piece = 0;  // index into request->pieces; npos for an empty read
        DiskFault fault;
        std::uint64_t bytes = 0;
        std::chrono::steady_clock::time_point enqueued;
    };
    struct Disk;
    enum class Failure { none, offline, missing, corrupt, io };

    void rescan_locked() const;
    void dispatch(const std::shared_ptr<Request>& request, std::size_t piece);
    void enqueue(std::size_t disk, Job job);
    void worker_loop(Disk& disk);
    void process(Disk& disk, Job& job);
    Failure serve_piece(Disk& disk, const Job& job, std::chrono::steady_clock::time_point started,
                        std::string& detail, FileSegment& out);
    void finish_piece(const std::shared_ptr<Request>& request);
    std::vector<DiskLoad> load_snapshot() const;

    ServerConfig config_;
    BlockStoreOptions options_;
    std::vector<std::unique_ptr<Disk>> disks_;
    Counter* fallbacks_;
    Counter* chunks_verified_;

    mutable std::mutex catalogue_mutex_;
    mutable Catalogue catalogue_;
    mutable std::map<std::string, std::shared_ptr<const StoredTitle>, std::less<>> titles_;
    mutable std::unordered_map<const TitleInfo*, std::weak_ptr<const StoredTitle>> by_info_;
    mutable std::vector<std::string> problems_;
    mutable std::chrono::steady_clock::time_point last_scan_{};
    mutable bool scanned_ = false;

    // Both outlive any one title version; rescan_locked() forgets the files of versions that are gone.
    mutable std::unique_ptr<OpenFileCache> files_;
    mutable std::mutex verified_mutex_;
    mutable VerifiedChunks verified_;

    std::atomic<bool> stopping_{false};
};

}  // namespace toast::server
