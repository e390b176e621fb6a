// The server's block store: titles laid out by their manifests over the configured disks, read through one
// queue per disk served by that disk's own worker threads. Implements the HTTP seam (TitleStore) and the
// admin seam (DiskControl). Its parts, one job each:
//   TitleCatalogue   which title versions exist; a version lives until its last reader is done
//   DiskQueue        a disk's queue, ordered by its DiskScheduler (config `disk_order`: fifo, cscan, edf)
//   ChunkVerifier    CRC-32C of each 64 KiB chunk, checked once per file version
//   disk_emulation   injected faults and emulated disk timing (DiskTimingModel)
//   OpenFileCache    block files kept open for sendfile
// and this class: splitting a read into one piece per block, choosing a replica for each piece, moving a
// piece to the next replica when one fails, and assembling the answer.
//
// Replica choice: each piece goes to the replica whose disk should finish it first (choose_replica over a
// snapshot of queue contents and each disk's fitted ServiceModel; the model of a disk that has served no
// reads for a while fades toward its prior, config `service_model_half_life`, so a disk avoided as slow is
// tried again and re-measured). A replica that is offline, missing, the wrong size, unreadable or fails its
// checksum makes the piece move to the next replica (toast_replica_fallbacks_total); when none is left the
// whole read is `unavailable` with a message naming the title, the block and the disks tried. A copy that
// failed its checksum is chosen again only when no other copy is online, until it passes a check.
//
// Verified pieces are returned as FileSegments (an fd from the cache, never one open() per read) so HTTP can
// sendfile(2) them. A version that leaves the store takes its checksum records and cached fds with it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/core/disk_control.hpp"
#include "server/core/disk_scheduler.hpp"
#include "server/core/disk_timing.hpp"
#include "server/core/replica_chooser.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "server/io/chunk_verifier.hpp"
#include "server/io/disk_queue.hpp"
#include "server/io/open_file_cache.hpp"
#include "server/io/title_catalogue.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

struct BlockStoreOptions {
    std::chrono::milliseconds rescan_interval{1000};  // find() re-reads changed manifests at most this often
    std::chrono::milliseconds miss_rescan_interval{50};  // ... or this often when a name is not found
    std::optional<std::size_t> open_file_cache{};  // open block files kept; default: the config's open_files
    // The order disk `index` serves its queue in; default: the config's `disk_order`.
    std::function<std::unique_ptr<DiskScheduler>(std::size_t index, const DiskConfig&)> scheduler{};
    // How long a read takes on disk `index`; null for a real disk (no waiting). Default: the config's
    // `emulate` as AccessTransferTiming (t_a + bytes / r_d) or, with `full_seek`, SeekTiming; else null.
    std::function<std::unique_ptr<DiskTimingModel>(std::size_t index, const DiskConfig&)> timing{};
};

class BlockStore final : public TitleStore, public DiskControl {
  public:
    BlockStore(const ServerConfig& config, MetricsRegistry& metrics, BlockStoreOptions options = {});
    // Stops the workers; reads still queued complete with io_error.
    ~BlockStore() override;
    BlockStore(const BlockStore&) = delete;
    BlockStore& operator=(const BlockStore&) = delete;

    std::shared_ptr<const TitleInfo> find(std::string_view name) const override;
    std::vector<std::shared_ptr<const TitleInfo>> titles() const override;
    std::optional<std::string> torrent(const TitleInfo& title) const override;
    void read(ReadRequest request, ReadHandler done) override;
    void interrupt_reads() override;

    std::vector<DiskStatus> disk_status() const override;
    bool set_fault(std::size_t disk, const DiskFault& fault) override;

    // Re-reads the manifests now (find() does this by itself); returns the number of titles.
    std::size_t rescan();
    // Problems met by the last scan (unreadable manifests), for the start-up log.
    std::vector<std::string> catalogue_problems() const;

  private:
    struct Request;
    struct Disk;
    enum class Failure { none, offline, missing, corrupt, io };

    void dispatch(const std::shared_ptr<Request>& request, std::size_t piece);
    void enqueue(std::size_t disk, const std::shared_ptr<Request>& request, std::size_t piece);
    void serve(Disk& disk, DiskQueue::Turn& turn, const std::shared_ptr<Request>& request, std::size_t piece,
               const DiskFault& fault);
    Failure read_replica(Disk& disk, const DiskQueue::Turn& turn, const Request& request, std::size_t piece,
                         const DiskFault& fault, std::string& detail, FileSegment& out,
                         std::chrono::steady_clock::time_point& started,
                         std::optional<std::chrono::steady_clock::time_point>& finished);
    void on_replica_failed(Disk& disk, const std::shared_ptr<Request>& request, std::size_t piece,
                           Failure failure, const std::string& detail);
    void finish_piece(const std::shared_ptr<Request>& request);
    void on_version_released(const StoredTitle& version);
    std::vector<DiskLoad> load_snapshot() const;

    ServerConfig config_;
    BlockStoreOptions options_;
    Counter* fallbacks_;
    Counter* deadlines_met_;     // reads with a deadline ready by it
    Counter* deadlines_missed_;  // ... and after it
    std::atomic<bool> stopping_{false};
    Interrupter interrupter_;
    // Outlive the disks' workers and the catalogue's versions, which use them.
    OpenFileCache files_;
    ChunkVerifier verifier_;
    std::vector<std::unique_ptr<Disk>> disks_;
    mutable TitleCatalogue catalogue_;
};

}  // namespace toast::server
