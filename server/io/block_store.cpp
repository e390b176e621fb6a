#include "server/io/block_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

#include "server/core/crc32c.hpp"

namespace toast::server {

namespace {

constexpr std::size_t kNoPiece = static_cast<std::size_t>(-1);

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

// Reads exactly `size` bytes at `offset`; false with errno set on error, errno 0 on a short file.
bool pread_all(int fd, char* buf, std::size_t size, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < size) {
        auto n = ::pread(fd, buf + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) {
            errno = 0;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

std::vector<char>& scratch(std::size_t size) {
    thread_local std::vector<char> buffer;
    if (buffer.size() < size) buffer.resize(size);
    return buffer;
}

const char* failure_name(int failure) {
    switch (failure) {
        case 1:
            return "offline";
        case 2:
            return "missing";
        case 3:
            return "corrupt";
        default:
            return "io";
    }
}

}  // namespace

struct BlockStore::Request {
    std::shared_ptr<const StoredTitle> title;
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
    ReadHandler done;

    void fail(ReadStatus s, std::string why) {
        std::lock_guard lock(mutex);
        if (status == ReadStatus::ok) {
            status = s;
            message = std::move(why);
        }
        failed = true;
    }
};

struct BlockStore::Disk {
    Disk(std::size_t i, const DiskConfig& c, ServiceModel m) : index(i), config(c), model(m) {}
    std::size_t index;
    DiskConfig config;

    std::mutex mutex;
    std::condition_variable cv;
    std::deque<Job> queue;
    bool stop = false;
    DiskFault fault;  // guarded by mutex; copied into each job at enqueue
    std::atomic<bool> offline{false};

    std::atomic<std::uint64_t> outstanding_bytes{0};
    std::atomic<std::uint64_t> outstanding_ops{0};
    std::atomic<std::uint64_t> bytes_read{0};
    std::atomic<std::uint64_t> reads{0};
    mutable std::mutex model_mutex;
    ServiceModel model;
    // Guarded by model_mutex: when the model last saw a read, and up to when it has been aged since.
    std::chrono::steady_clock::time_point last_observed;
    std::chrono::steady_clock::time_point aged_through;

    Gauge* queue_gauge = nullptr;
    Counter* bytes_counter = nullptr;
    Counter* reads_counter = nullptr;
    Histogram* latency = nullptr;
    Counter* checksum_failures = nullptr;
    Counter* choices = nullptr;
    Counter* replica_failures[4] = {};

    std::vector<std::thread> threads;
};

BlockStore::BlockStore(const ServerConfig& config, MetricsRegistry& metrics, BlockStoreOptions options)
    : config_(config), options_(options), catalogue_([&] {
          std::vector<std::filesystem::path> paths;
          for (const auto& d : config.disks)
              paths.push_back(d.path);
          return paths;
      }()) {
    fallbacks_ =
        &metrics.counter("toast_replica_fallbacks_total",
                         "Block reads moved to another replica after one was offline, missing or corrupt");
    chunks_verified_ = &metrics.counter(
        "toast_store_chunks_verified_total",
        "64 KiB chunks read back and checked against their CRC-32C by reads (once per file version)");
    {
        std::vector<std::filesystem::path> roots;
        for (const auto& d : config_.disks)
            roots.push_back(d.path);
        files_ = std::make_unique<OpenFileCache>(
            std::move(roots), options_.open_file_cache.value_or(config_.open_files),
            &metrics.counter("toast_store_files_opened_total",
                             "Block files opened by reads (misses of the open-file cache)"));
    }
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
        const Labels labels{{"disk", std::to_string(i)}};
        disk->queue_gauge =
            &metrics.gauge("toast_disk_queue_depth", "Reads queued or in service per disk", labels);
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
        for (int f = 1; f <= 4; ++f) {
            const char* name = f == 4 ? "io" : failure_name(f);
            disk->replica_failures[f - 1] = &metrics.counter(
                "toast_disk_replica_failures_total", "Block reads a disk could not serve, by reason",
                Labels{{"disk", std::to_string(i)}, {"reason", name}});
        }
        disks_.push_back(std::move(disk));
    }
    for (auto& disk : disks_) {
        for (unsigned w = 0; w < std::max(1u, disk->config.workers); ++w)
            disk->threads.emplace_back([this, d = disk.get()] { worker_loop(*d); });
    }
}

BlockStore::~BlockStore() {
    stopping_ = true;
    for (auto& disk : disks_) {
        {
            std::lock_guard lock(disk->mutex);
            disk->stop = true;
        }
        disk->cv.notify_all();
    }
    for (auto& disk : disks_)
        for (auto& t : disk->threads)
            t.join();
}

// ---- catalogue ----

void BlockStore::rescan_locked() const {
    auto scan = catalogue_.scan();
    std::map<std::string, std::shared_ptr<const StoredTitle>, std::less<>> next;
    for (auto& [name, entry] : scan.titles) {
        auto old = titles_.find(name);
        if (old != titles_.end() && old->second->manifest.version == entry.manifest.version &&
            old->second->manifest.generation == entry.manifest.generation) {
            next.emplace(name, old->second);
            continue;
        }
        auto stored = std::make_shared<StoredTitle>();
        const auto& m = entry.manifest;
        stored->info.name = m.title;
        stored->info.size = m.size;
        stored->info.bitrate = m.bitrate;
        stored->info.block_size = m.block_size;
        stored->info.etag = "\"" + m.version + "\"";
        stored->info.last_modified = std::chrono::system_clock::time_point(std::chrono::seconds(m.created));
        stored->manifest = std::move(entry.manifest);
        by_info_[&stored->info] = stored;
        next.emplace(name, std::move(stored));
    }
    // Versions that left the catalogue: their files are deleted or about to be; close them and forget their
    // checksums (a new version has new file names).
    for (const auto& [name, old] : titles_) {
        auto kept = next.find(name);
        if (kept != next.end() && kept->second == old) continue;
        std::lock_guard lock(verified_mutex_);
        for (const auto& block : old->manifest.blocks)
            for (const auto& r : block.replicas) {
                verified_.forget(r.disk, r.file);
                files_->drop(r.disk, r.file);
            }
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

std::size_t BlockStore::rescan() {
    std::lock_guard lock(catalogue_mutex_);
    rescan_locked();
    return titles_.size();
}

std::vector<std::string> BlockStore::catalogue_problems() const {
    std::lock_guard lock(catalogue_mutex_);
    return problems_;
}

std::shared_ptr<const TitleInfo> BlockStore::find(std::string_view name) const {
    if (!is_valid_title_name(name)) return nullptr;  // cannot be a manifest key; no rescan for junk
    std::lock_guard lock(catalogue_mutex_);
    const auto now = Clock::now();
    if (!scanned_ || now - last_scan_ >= options_.rescan_interval) rescan_locked();
    auto it = titles_.find(name);
    if (it == titles_.end() && now - last_scan_ >= options_.miss_rescan_interval) {
        rescan_locked();
        it = titles_.find(name);
    }
    if (it == titles_.end()) return nullptr;
    // Aliasing pointer: the caller sees the TitleInfo, the control block keeps the whole manifest alive.
    return std::shared_ptr<const TitleInfo>(it->second, &it->second->info);
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
        l.outstanding_bytes = d->outstanding_bytes.load();
        l.outstanding_ops = d->outstanding_ops.load();
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
    const auto& title = read.title;
    const auto offset = read.offset;
    const auto length = read.length;
    auto request = std::make_shared<Request>();
    request->done = std::move(done);
    {
        std::lock_guard lock(catalogue_mutex_);
        if (title) {
            auto it = by_info_.find(title.get());
            if (it != by_info_.end()) request->title = it->second.lock();
            if (!request->title) {
                // A TitleInfo this store did not hand out: accept it if it names the current version.
                auto cur = titles_.find(title->name);
                if (cur != titles_.end() && cur->second->info.etag == title->etag)
                    request->title = cur->second;
            }
        }
    }
    if (!request->title) {
        request->fail(ReadStatus::unavailable, "title \"" + (title ? title->name : std::string()) +
                                                   "\" is not in the store (re-ingested?)");
    } else if (offset > request->title->info.size || length > request->title->info.size - offset) {
        request->fail(ReadStatus::io_error, "range at " + std::to_string(offset) + " of " +
                                                std::to_string(length) + " bytes lies outside title \"" +
                                                request->title->info.name + "\" of " +
                                                std::to_string(request->title->info.size) + " bytes");
    } else {
        request->pieces =
            split_range(offset, length, request->title->info.size, request->title->info.block_size);
    }
    const auto n = request->pieces.size();
    request->segments.resize(n);
    request->tried.resize(n);
    request->reasons.resize(n);
    request->io_failed.resize(n);
    if (n == 0) {
        // Nothing to read (or already failed): still complete on a worker thread, as the interface promises.
        request->remaining = 1;
        Job job;
        job.request = request;
        job.piece = kNoPiece;
        enqueue(0, std::move(job));
        return;
    }
    request->remaining = n;
    for (std::size_t i = 0; i < n; ++i)
        dispatch(request, i);
}

void BlockStore::dispatch(const std::shared_ptr<Request>& request, std::size_t piece) {
    const auto& p = request->pieces[piece];
    const auto& record = request->title->manifest.blocks[p.block];
    std::vector<std::uint32_t> candidates;
    {
        std::lock_guard lock(request->mutex);
        const auto& tried = request->tried[piece];
        for (const auto& r : record.replicas)
            if (std::find(tried.begin(), tried.end(), r.disk) == tried.end()) candidates.push_back(r.disk);
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
        request->fail(io ? ReadStatus::io_error : ReadStatus::unavailable,
                      "title \"" + request->title->info.name + "\" block " + std::to_string(p.block) +
                          ": no readable replica on disk" + (record.replicas.size() > 1 ? "s " : " ") +
                          disks + " (" + reasons + ")");
        finish_piece(request);
        return;
    }
    auto chosen = choose_replica(candidates, load_snapshot(), p.length, p.block);
    // All remaining replicas offline: queue on the first anyway; its worker reports it, still on a worker
    // thread.
    const auto disk = candidates[chosen.value_or(0)];
    disks_[disk]->choices->inc();
    Job job;
    job.request = request;
    job.piece = piece;
    job.bytes = p.length;
    enqueue(disk, std::move(job));
}

void BlockStore::enqueue(std::size_t index, Job job) {
    auto& disk = *disks_[index];
    job.enqueued = Clock::now();
    {
        std::unique_lock lock(disk.mutex);
        if (!disk.stop) {
            job.fault = disk.fault;
            disk.outstanding_bytes += job.bytes;
            disk.queue_gauge->set(static_cast<double>(++disk.outstanding_ops));
            disk.queue.push_back(std::move(job));
            lock.unlock();
            disk.cv.notify_one();
            return;
        }
    }
    // The store is shutting down and this disk's workers may be gone: complete here.
    job.request->fail(ReadStatus::io_error, "the block store is shutting down");
    finish_piece(job.request);
}

void BlockStore::worker_loop(Disk& disk) {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(disk.mutex);
            disk.cv.wait(lock, [&] { return disk.stop || !disk.queue.empty(); });
            if (disk.queue.empty()) return;  // stop requested and nothing left
            job = std::move(disk.queue.front());
            disk.queue.pop_front();
        }
        process(disk, job);
    }
}

void BlockStore::process(Disk& disk, Job& job) {
    auto request = job.request;
    auto retire = [&] {
        disk.outstanding_bytes -= job.bytes;
        disk.queue_gauge->set(static_cast<double>(--disk.outstanding_ops));
    };
    if (job.piece == kNoPiece) {
        retire();
        finish_piece(request);
        return;
    }
    if (stopping_ || request->failed) {
        // Another piece already failed the request (or we are stopping): skip the disk work.
        if (stopping_) request->fail(ReadStatus::io_error, "the block store is shutting down");
        retire();
        finish_piece(request);
        return;
    }
    const auto start = Clock::now();
    if (job.fault.added_latency.count() > 0 && !job.fault.offline)
        std::this_thread::sleep_for(job.fault.added_latency);
    std::string detail;
    FileSegment segment;
    const Failure failure = serve_piece(disk, job, Clock::now(), detail, segment);
    const auto end = Clock::now();
    retire();
    if (failure == Failure::none) {
        {
            std::lock_guard lock(disk.model_mutex);
            disk.model.observe(job.bytes, seconds(end - start));
            disk.last_observed = disk.aged_through = end;
        }
        disk.latency->observe(seconds(end - job.enqueued));
        {
            std::lock_guard lock(request->mutex);
            request->segments[job.piece] = std::move(segment);
        }
        finish_piece(request);
        return;
    }
    disk.replica_failures[static_cast<int>(failure) - 1]->inc();
    const auto& p = request->pieces[job.piece];
    spdlog::warn("disk {}: title \"{}\" block {}: {}", disk.index, request->title->info.name, p.block,
                 detail);
    bool more = false;
    {
        std::lock_guard lock(request->mutex);
        request->tried[job.piece].push_back(static_cast<std::uint32_t>(disk.index));
        if (failure == Failure::io) request->io_failed[job.piece] = true;
        auto& r = request->reasons[job.piece];
        r += (r.empty() ? "" : "; ") + std::string("disk ") + std::to_string(disk.index) + " " + detail;
        more = request->tried[job.piece].size() < request->title->manifest.blocks[p.block].replicas.size();
    }
    // Another replica, if any is left; dispatch() reports the failure otherwise.
    if (more) fallbacks_->inc();
    dispatch(request, job.piece);
}

BlockStore::Failure BlockStore::serve_piece(Disk& disk, const Job& job, Clock::time_point started,
                                            std::string& detail, FileSegment& out) {
    const auto& request = *job.request;
    const auto& manifest = request.title->manifest;
    const auto& p = request.pieces[job.piece];
    const auto& record = manifest.blocks[p.block];
    if (job.fault.offline) {
        detail = "offline";
        return Failure::offline;
    }
    const BlockReplica* replica = nullptr;
    for (const auto& r : record.replicas)
        if (r.disk == disk.index) replica = &r;
    if (!replica) {
        detail = "holds no replica of this block";
        return Failure::io;
    }
    int err = 0;
    auto cf = files_->get(static_cast<std::uint32_t>(disk.index), replica->file, err);
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

    // Verify the chunks this piece touches that were never verified in this version of the file.
    const auto chunk = manifest.chunk_size;
    const auto chunks = record.chunk_crcs.size();
    const auto disk_no = static_cast<std::uint32_t>(disk.index);
    thread_local std::vector<std::uint64_t> todo;
    todo.clear();
    {
        std::lock_guard lock(verified_mutex_);
        verified_.unverified(disk_no, replica->file, cf->identity, p.offset / chunk,
                             (p.offset + p.length - 1) / chunk, chunks, todo);
    }
    for (auto c : todo) {
        const auto len = static_cast<std::size_t>(std::min(chunk, expected - c * chunk));
        auto& buf = scratch(len);
        if (!pread_all(fd, buf.data(), len, c * chunk)) {
            detail = replica->file + ": " + (errno ? std::strerror(errno) : "shorter than expected");
            return Failure::io;
        }
        chunks_verified_->inc();
        if (crc32c(buf.data(), len) != record.chunk_crcs[c]) {
            disk.checksum_failures->inc();
            detail = replica->file + ": chunk " + std::to_string(c) + " fails its CRC-32C";
            return Failure::corrupt;
        }
        std::lock_guard lock(verified_mutex_);
        verified_.mark(disk_no, replica->file, cf->identity, c, chunks);
    }

    // Fail-stutter: really read stutter_pct % more, continuing after the piece and wrapping inside the file.
    std::uint64_t extra = 0;
    if (job.fault.stutter_pct > 0) {
        extra = static_cast<std::uint64_t>(
            std::llround(static_cast<double>(p.length) * job.fault.stutter_pct / 100.0));
        std::uint64_t pos = (p.offset + p.length) % expected;
        std::uint64_t left = extra;
        auto& buf = scratch(256 * 1024);
        while (left > 0) {
            const auto n =
                static_cast<std::size_t>(std::min<std::uint64_t>({left, buf.size(), expected - pos}));
            if (!pread_all(fd, buf.data(), n, pos)) break;
            left -= n;
            pos = (pos + n) % expected;
        }
    }

    // Emulated disk: the read takes t_a + (bytes + stutter) / r_d in all, however fast the real one was.
    if (disk.config.emulation) {
        const auto& em = *disk.config.emulation;
        const auto target = em.access_time + duration_of(Bytes(p.length + extra), em.transfer_rate);
        std::this_thread::sleep_until(started + target);
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
        if (result.status == ReadStatus::ok) result.segments = std::move(request->segments);
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
            std::lock_guard lock(d->mutex);
            s.fault = d->fault;
        }
        s.queue_depth = d->outstanding_ops.load();
        {
            // Seconds to serve a 1 MB read on an idle disk: the chooser's view of this disk.
            std::lock_guard lock(d->model_mutex);
            s.service_seconds_per_mb = d->model.access_seconds() + 1e6 * d->model.seconds_per_byte();
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
    std::lock_guard lock(d.mutex);
    d.fault = fault;
    d.offline = fault.offline;
    return true;
}

}  // namespace toast::server
