#include "server/io/block_store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include <spdlog/spdlog.h>

#include "server/core/block_math.hpp"
#include "server/core/disk_model.hpp"
#include "server/core/disk_orders.hpp"
#include "server/io/disk_emulation.hpp"
#include "server/io/title_torrent.hpp"

namespace toast::server {

namespace {

constexpr const char* kDeadlinesHelp =
    "Reads with a deadline (paced streams, Toast-Deadline requests) by outcome";

// The config's emulated disk: the thesis's t_a + bytes / r_d, or the seek model when a full-stroke seek time
// is given; null for a real disk.
std::unique_ptr<DiskTimingModel> default_timing(const DiskConfig& dc) {
    if (!dc.emulation) return nullptr;
    const auto& em = *dc.emulation;
    if (em.full_seek.count() > 0)
        return std::make_unique<SeekTiming>(SeekModel{em.access_time, em.full_seek}, em.transfer_rate);
    return std::make_unique<AccessTransferTiming>(em.access_time, em.transfer_rate);
}

constexpr std::size_t kNoPiece = static_cast<std::size_t>(-1);

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

}  // namespace

struct BlockStore::Request {
    std::shared_ptr<const StoredTitle> title;
    std::optional<Clock::time_point> deadline;
    bool revalidate = false;
    std::vector<BlockPiece> pieces;
    std::vector<Segment> segments;
    std::vector<std::vector<std::uint32_t>> tried;  // disks already tried, per piece
    std::vector<std::string> reasons;               // why they failed, per piece
    std::vector<bool> io_failed;  // a replica failed with an unexpected I/O error, per piece
    std::atomic<std::size_t> remaining{0};
    std::atomic<bool> failed{false};
    std::mutex mutex;
    ReadStatus status = ReadStatus::ok;
    std::string message;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> unavailable_block;
    ReadHandler done;

    void fail(ReadStatus s, std::string why,
              std::optional<std::pair<std::uint64_t, std::uint64_t>> block = std::nullopt) {
        std::lock_guard lock(mutex);
        if (status == ReadStatus::ok) {
            status = s;
            message = std::move(why);
            unavailable_block = block;
        }
        failed = true;
    }
};

struct BlockStore::Disk {
    Disk(std::size_t i, const DiskConfig& c, ServiceModel m) : index(i), config(c), model(m) {}
    std::size_t index;
    DiskConfig config;
    std::unique_ptr<DiskQueue> queue;
    std::unique_ptr<EmulatedDisk> emulated;  // null: a real disk

    mutable std::mutex fault_mutex;
    DiskFault fault;  // copied into each read when it is queued
    std::atomic<bool> offline{false};

    std::atomic<std::uint64_t> bytes_read{0};
    std::atomic<std::uint64_t> reads{0};
    mutable std::mutex model_mutex;
    ServiceModel model;
    // Guarded by model_mutex: when the model last saw a read, and up to when it has been aged since.
    Clock::time_point last_observed;
    Clock::time_point aged_through;

    Counter* bytes_counter = nullptr;
    Counter* reads_counter = nullptr;
    Histogram* latency = nullptr;
    Counter* checksum_failures = nullptr;
    Counter* choices = nullptr;
    Counter* replica_failures[4] = {};  // by Failure - 1
};

BlockStore::BlockStore(const ServerConfig& config, MetricsRegistry& metrics, BlockStoreOptions options)
    : config_(config),
      options_(std::move(options)),
      fallbacks_(
          &metrics.counter("toast_replica_fallbacks_total",
                           "Block reads moved to another replica after one was offline, missing or corrupt")),
      deadlines_met_(
          &metrics.counter("toast_store_read_deadlines_total", kDeadlinesHelp, Labels{{"result", "met"}})),
      deadlines_missed_(
          &metrics.counter("toast_store_read_deadlines_total", kDeadlinesHelp, Labels{{"result", "missed"}})),
      files_(disk_paths(config), options_.open_file_cache.value_or(config.open_files),
             &metrics.counter("toast_store_files_opened_total",
                              "Block files opened by reads (misses of the open-file cache)")),
      verifier_(&metrics.counter(
          "toast_store_chunks_verified_total",
          "64 KiB chunks read back and checked against their CRC-32C by reads (once per file version)")),
      catalogue_(disk_paths(config), {options_.rescan_interval, options_.miss_rescan_interval},
                 [this](const StoredTitle& version, bool) { on_version_released(version); }) {
    for (std::size_t i = 0; i < config_.disks.size(); ++i) {
        const auto& dc = config_.disks[i];
        // Prior service model: the emulated figures when configured, else a fast local disk (0.1 ms, 1 GB/s).
        ServiceModel prior =
            dc.emulation ? ServiceModel(seconds(dc.emulation->access_time),
                                        8.0 / static_cast<double>(dc.emulation->transfer_rate.value()))
                         : ServiceModel(1e-4, 1e-9);
        auto disk = std::make_unique<Disk>(i, dc, prior);
        disk->last_observed = disk->aged_through = Clock::now();
        disk->fault = dc.fault;
        disk->offline = dc.fault.offline;
        auto timing = options_.timing ? options_.timing(i, dc) : default_timing(dc);
        if (timing) disk->emulated = std::make_unique<EmulatedDisk>(std::move(timing));
        const Labels labels{{"disk", std::to_string(i)}};
        disk->bytes_counter = &metrics.counter("toast_disk_bytes_read_total",
                                               "Bytes read per disk, stutter bytes included", labels);
        disk->reads_counter =
            &metrics.counter("toast_disk_reads_total", "Block reads served per disk", labels);
        disk->latency = &metrics.histogram("toast_disk_read_seconds", "Block read latency, queueing included",
                                           latency_buckets(), labels);
        disk->checksum_failures = &metrics.counter("toast_disk_checksum_failures_total",
                                                   "Chunks whose CRC-32C did not match the manifest", labels);
        disk->choices = &metrics.counter("toast_replica_choices_total",
                                         "Block reads sent to each disk by the replica chooser", labels);
        const char* reasons[] = {"offline", "missing", "corrupt", "io"};
        for (int f = 0; f < 4; ++f) {
            disk->replica_failures[f] = &metrics.counter(
                "toast_disk_replica_failures_total", "Block reads a disk could not serve, by reason",
                Labels{{"disk", std::to_string(i)}, {"reason", reasons[f]}});
        }
        auto scheduler = options_.scheduler ? options_.scheduler(i, dc) : make_scheduler(config_.disk_order);
        disk->queue = std::make_unique<DiskQueue>(
            std::move(scheduler), dc.workers, interrupter_,
            &metrics.gauge("toast_disk_queue_depth", "Reads queued or in service per disk", labels));
        disks_.push_back(std::move(disk));
    }
}

BlockStore::~BlockStore() {
    // From here on nothing is queued (enqueue completes at once) and every wait is cut short; then each
    // queue runs what it still holds, which fails fast, and joins its workers. The queues themselves stay
    // until every worker is gone: a worker may look at another disk's load while it stops.
    stopping_ = true;
    interrupter_.interrupt();
    for (auto& disk : disks_)
        disk->queue->stop();
}

// ---- catalogue ----

std::size_t BlockStore::rescan() {
    return catalogue_.rescan();
}

std::vector<std::string> BlockStore::catalogue_problems() const {
    return catalogue_.problems();
}

std::shared_ptr<const TitleInfo> BlockStore::find(std::string_view name) const {
    return catalogue_.find(name);
}

std::vector<std::shared_ptr<const TitleInfo>> BlockStore::titles() const {
    return catalogue_.list();
}

std::optional<std::string> BlockStore::torrent(const TitleInfo& title) const {
    auto stored = catalogue_.resolve(title);
    if (!stored || !stored->manifest.torrent) return std::nullopt;
    const auto& record = *stored->manifest.torrent;
    for (std::size_t d = 0; d < config_.disks.size(); ++d) {
        const auto path = config_.disks[d].path / record.file;
        std::string problem;
        auto bytes = read_torrent_file(path, problem);
        if (bytes && torrent_info_hash(*bytes) != record.info_hash)
            problem = "its info-hash is not the manifest's";
        if (problem.empty()) return bytes;
        spdlog::warn("title {}: torrent copy on disk {} ({}): {}", title.name, d, path.string(), problem);
    }
    return std::nullopt;
}

// The last reader of a version is done: its files are closed and its checksum records forgotten (a new
// version has new file names).
void BlockStore::on_version_released(const StoredTitle& version) {
    for (const auto& block : version.manifest.blocks)
        for (const auto& r : block.replicas) {
            verifier_.forget(r.disk, r.file);
            files_.drop(r.disk, r.file);
        }
}

// ---- reads ----

std::vector<DiskLoad> BlockStore::load_snapshot() const {
    std::vector<DiskLoad> loads;
    loads.reserve(disks_.size());
    const auto now = Clock::now();
    const auto half_life = config_.service_model_half_life;
    const auto grace = half_life / 10;
    for (const auto& d : disks_) {
        DiskLoad l;
        l.online = !d->offline.load();
        l.outstanding_bytes = d->queue->outstanding_bytes();
        l.outstanding_ops = d->queue->outstanding_ops();
        std::lock_guard lock(d->model_mutex);
        // A disk without reads for longer than the grace period: its evidence fades toward the prior. Busy
        // disks are observed more often than that and keep their fitted model untouched.
        const auto from = std::max(d->aged_through, d->last_observed + grace);
        if (now > from) {
            d->model.age(seconds(now - from), seconds(half_life));
            d->aged_through = now;
        }
        l.seconds_per_byte = d->model.seconds_per_byte();
        l.access_seconds = d->model.access_seconds();
        loads.push_back(l);
    }
    return loads;
}

void BlockStore::read(ReadRequest read, ReadHandler done) {
    auto request = std::make_shared<Request>();
    request->done = std::move(done);
    request->deadline = read.deadline;
    request->revalidate = read.revalidate;
    if (read.title) request->title = catalogue_.resolve(*read.title);
    if (!request->title) {
        request->fail(ReadStatus::unavailable, "title \"" + (read.title ? read.title->name : std::string()) +
                                                   "\" is not in the store (re-ingested?)");
    } else if (const auto size = request->title->info.size;
               read.offset > size || read.length > size - read.offset) {
        request->fail(ReadStatus::io_error, "range at " + std::to_string(read.offset) + " of " +
                                                std::to_string(read.length) + " bytes lies outside title \"" +
                                                request->title->info.name + "\" of " + std::to_string(size) +
                                                " bytes");
    } else {
        request->pieces = split_range(read.offset, read.length, size, request->title->info.block_size);
    }
    const auto n = request->pieces.size();
    request->segments.resize(n);
    request->tried.resize(n);
    request->reasons.resize(n);
    request->io_failed.resize(n);
    if (n == 0) {
        // Nothing to read (or already failed): still complete on a store thread, as the interface promises.
        request->remaining = 1;
        enqueue(0, request, kNoPiece);
        return;
    }
    request->remaining = n;
    for (std::size_t i = 0; i < n; ++i)
        dispatch(request, i);
}

void BlockStore::interrupt_reads() {
    interrupter_.interrupt();
}

void BlockStore::dispatch(const std::shared_ptr<Request>& request, std::size_t piece) {
    const auto& p = request->pieces[piece];
    const auto& record = request->title->manifest.blocks[p.block];
    std::vector<std::uint32_t> candidates;
    std::uint64_t suspect = 0;
    {
        std::lock_guard lock(request->mutex);
        const auto& tried = request->tried[piece];
        for (const auto& r : record.replicas) {
            if (std::find(tried.begin(), tried.end(), r.disk) != tried.end()) continue;
            if (candidates.size() < 64 && verifier_.suspect(r.disk, r.file))
                suspect |= std::uint64_t{1} << candidates.size();
            candidates.push_back(r.disk);
        }
    }
    if (candidates.empty()) {
        std::string disks;
        for (const auto& r : record.replicas)
            disks += (disks.empty() ? "" : ", ") + std::to_string(r.disk);
        std::string reasons;
        bool io = false;
        {
            std::lock_guard lock(request->mutex);
            reasons = request->reasons[piece];
            io = request->io_failed[piece];
        }
        // Offline, missing or corrupt replicas make the block unavailable (503); anything else is an I/O
        // error.
        const auto& info = request->title->info;
        const auto first = static_cast<std::uint64_t>(p.block) * info.block_size;
        const auto last = std::min(first + info.block_size, info.size) - 1;
        request->fail(io ? ReadStatus::io_error : ReadStatus::unavailable,
                      "title \"" + info.name + "\" block " + std::to_string(p.block) +
                          ": no readable replica on disk" + (record.replicas.size() > 1 ? "s " : " ") +
                          disks + " (" + reasons + ")",
                      io ? std::nullopt : std::optional{std::pair{first, last}});
        finish_piece(request);
        return;
    }
    auto chosen = choose_replica(candidates, load_snapshot(), p.length, p.block, suspect);
    // All remaining replicas offline: queue on the first anyway; its worker reports it, still on a worker
    // thread.
    const auto disk = candidates[chosen.value_or(0)];
    disks_[disk]->choices->inc();
    enqueue(disk, request, piece);
}

void BlockStore::enqueue(std::size_t index, const std::shared_ptr<Request>& request, std::size_t piece) {
    auto& disk = *disks_[index];
    DiskFault fault;
    {
        std::lock_guard lock(disk.fault_mutex);
        fault = disk.fault;
    }
    std::uint64_t bytes = 0;
    std::uint64_t position = 0;
    if (piece != kNoPiece) {
        const auto& p = request->pieces[piece];
        const auto& m = request->title->manifest;
        bytes = p.length;
        position = disk_address(m.version, p.block, m.block_size, p.offset);
    }
    if (!stopping_) {
        auto work = [this, &disk, request, piece, fault](DiskQueue::Turn& turn) {
            serve(disk, turn, request, piece, fault);
        };
        if (disk.queue->push(bytes, position, request->deadline, std::move(work))) return;
    }
    // The store is shutting down and this disk's workers may be gone: complete here.
    request->fail(ReadStatus::io_error, "the block store is shutting down");
    finish_piece(request);
}

void BlockStore::serve(Disk& disk, DiskQueue::Turn& turn, const std::shared_ptr<Request>& request,
                       std::size_t piece, const DiskFault& fault) {
    if (piece == kNoPiece) {
        disk.queue->retire(turn);
        finish_piece(request);
        return;
    }
    auto start = Clock::now();
    // An emulated disk counts injected latency on its own clock (read_replica); a real one waits here.
    const bool interrupted = stopping_ || interrupter_.interrupted(turn.epoch) ||
                             (!fault.offline && !request->failed && !disk.emulated &&
                              !wait_added_latency(fault, interrupter_, turn.epoch));
    if (interrupted || request->failed) {
        // Another piece already failed the request, or we are shutting down: skip the disk work.
        if (interrupted) request->fail(ReadStatus::io_error, "read interrupted: the server is shutting down");
        disk.queue->retire(turn);
        finish_piece(request);
        return;
    }
    std::string detail;
    FileSegment segment;
    std::optional<Clock::time_point> finished;  // an emulated disk's end of the read on its own clock
    const Failure failure =
        read_replica(disk, turn, *request, piece, fault, detail, segment, start, finished);
    const auto wall_end = Clock::now();
    const auto end = finished.value_or(wall_end);
    disk.queue->retire(turn);
    if (failure != Failure::none) {
        on_replica_failed(disk, request, piece, failure, detail);
        return;
    }
    {
        std::lock_guard lock(disk.model_mutex);
        disk.model.observe(turn.request.bytes, seconds(end - start));
        disk.last_observed = disk.aged_through = end;
    }
    disk.latency->observe(seconds(wall_end - turn.request.arrival));
    {
        std::lock_guard lock(request->mutex);
        request->segments[piece] = std::move(segment);
    }
    finish_piece(request);
}

void BlockStore::on_replica_failed(Disk& disk, const std::shared_ptr<Request>& request, std::size_t piece,
                                   Failure failure, const std::string& detail) {
    disk.replica_failures[static_cast<int>(failure) - 1]->inc();
    const auto& p = request->pieces[piece];
    spdlog::warn("disk {}: title \"{}\" block {}: {}", disk.index, request->title->info.name, p.block,
                 detail);
    bool more = false;
    {
        std::lock_guard lock(request->mutex);
        request->tried[piece].push_back(static_cast<std::uint32_t>(disk.index));
        if (failure == Failure::io) request->io_failed[piece] = true;
        auto& r = request->reasons[piece];
        r += (r.empty() ? "" : "; ") + std::string("disk ") + std::to_string(disk.index) + " " + detail;
        more = request->tried[piece].size() < request->title->manifest.blocks[p.block].replicas.size();
    }
    // Another replica, if any is left; dispatch() reports the failure otherwise.
    if (more) fallbacks_->inc();
    dispatch(request, piece);
}

BlockStore::Failure BlockStore::read_replica(Disk& disk, const DiskQueue::Turn& turn, const Request& request,
                                             std::size_t piece, const DiskFault& fault, std::string& detail,
                                             FileSegment& out, Clock::time_point& started,
                                             std::optional<Clock::time_point>& finished) {
    const auto& manifest = request.title->manifest;
    const auto& p = request.pieces[piece];
    const auto& record = manifest.blocks[p.block];
    if (fault.offline) {
        detail = "offline";
        return Failure::offline;
    }
    const auto disk_no = static_cast<std::uint32_t>(disk.index);
    const auto replica = std::find_if(record.replicas.begin(), record.replicas.end(),
                                      [&](const BlockReplica& r) { return r.disk == disk_no; });
    if (replica == record.replicas.end()) {
        detail = "holds no replica of this block";
        return Failure::io;
    }
    int err = 0;
    auto cf = files_.get(disk_no, replica->file, err);
    if (!cf) {
        detail = replica->file + ": " + std::strerror(err);
        return err == ENOENT || err == ENOTDIR ? Failure::missing : Failure::io;
    }
    const auto expected = block_length(p.block, manifest.size, manifest.block_size);
    if (cf->identity.size != expected) {
        detail = replica->file + " has " + std::to_string(cf->identity.size) + " bytes, the manifest says " +
                 std::to_string(expected);
        return Failure::corrupt;
    }
    const int fd = cf->file->fd();
    auto checked =
        verifier_.verify(disk_no, replica->file, cf->identity, fd, record, expected, manifest.chunk_size,
                         p.offset, p.length, disk.checksum_failures, request.revalidate);
    if (checked.outcome != ChunkVerifier::Outcome::ok) {
        detail = std::move(checked.detail);
        return checked.outcome == ChunkVerifier::Outcome::corrupt ? Failure::corrupt : Failure::io;
    }
    const auto extra = read_stutter(fd, fault, p.offset, p.length, expected);
    if (disk.emulated) {
        // The service model learns the emulated disk's time, not the worker's: a worker that got the CPU late
        // must not make the disk look faster than it is, nor one that woke late slower (its oversleep is the
        // machine's, and admission control prices reads by this model).
        const auto on_disk = disk.emulated->serve(turn, p.length + extra, fault.added_latency, interrupter_);
        if (!on_disk) {
            detail = "read interrupted: the server is shutting down";
            return Failure::io;
        }
        started = on_disk->start;
        finished = on_disk->done;
    }
    disk.reads++;
    disk.bytes_read += p.length + extra;
    disk.reads_counter->inc();
    disk.bytes_counter->inc(p.length + extra);
    out.file = cf->file;
    out.offset = p.offset;
    out.length = p.length;
    return Failure::none;
}

void BlockStore::finish_piece(const std::shared_ptr<Request>& request) {
    if (--request->remaining != 0) return;
    ReadResult result;
    {
        std::lock_guard lock(request->mutex);
        result.status = request->status;
        result.message = request->message;
        result.unavailable_block = request->unavailable_block;
        if (result.status == ReadStatus::ok) result.segments = std::move(request->segments);
    }
    if (request->deadline && result.status == ReadStatus::ok) {
        const auto now = Clock::now();
        if (now > *request->deadline) {
            result.late = now - *request->deadline;
            deadlines_missed_->inc();
        } else {
            deadlines_met_->inc();
        }
    }
    auto done = std::move(request->done);
    done(std::move(result));
}

// ---- DiskControl ----

std::vector<DiskStatus> BlockStore::disk_status() const {
    std::vector<DiskStatus> out;
    for (const auto& d : disks_) {
        DiskStatus s;
        s.index = d->index;
        s.path = d->config.path.string();
        {
            std::lock_guard lock(d->fault_mutex);
            s.fault = d->fault;
        }
        s.queue_depth = d->queue->outstanding_ops();
        s.queued_bytes = d->queue->outstanding_bytes();
        {
            // Seconds to serve a 1 MB read on an idle disk: the chooser's view of this disk.
            std::lock_guard lock(d->model_mutex);
            s.service_seconds_per_mb = d->model.access_seconds() + 1e6 * d->model.seconds_per_byte();
            s.access_seconds = d->model.access_seconds();
            s.seconds_per_byte = d->model.seconds_per_byte();
        }
        s.bytes_read = d->bytes_read.load();
        s.reads = d->reads.load();
        out.push_back(std::move(s));
    }
    return out;
}

bool BlockStore::set_fault(std::size_t disk, const DiskFault& fault) {
    if (disk >= disks_.size()) return false;
    auto& d = *disks_[disk];
    std::lock_guard lock(d.fault_mutex);
    d.fault = fault;
    d.offline = fault.offline;
    return true;
}

}  // namespace toast::server
