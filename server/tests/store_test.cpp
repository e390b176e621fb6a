#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "server/io/block_store.hpp"
#include "server/io/store_upkeep.hpp"
#include "server/io/verify.hpp"
#include "store_fixture.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using namespace toast::server::testing;
using Catch::Matchers::Contains;

TEST_CASE("every policy serves whole titles and random ranges byte-identical to the source",
          "[server][store]") {
    for (const char* policy : {"naive", "raid0", "raid1", "random", "rda"}) {
        INFO("policy " << policy);
        StoreFixture fx(4, policy);
        const std::uint64_t size = 3 * 1024 * 1024 + 12345;  // 13 blocks, the last short
        auto media = fx.media("movie.bin", size, 11);
        auto ingested = fx.ingest("movie", media, kBlock);
        CHECK(ingested.manifest.blocks.size() == 13);
        const auto source = toast::testing::read_file(media);

        MetricsRegistry metrics;
        BlockStore store(fx.config, metrics);
        TitleStore& titles = store;
        auto title = titles.find("movie");
        REQUIRE(title);
        CHECK(read_bytes(titles, title, 0, size) == source);
        std::mt19937_64 rng(99);
        for (int i = 0; i < 40; ++i) {
            const std::uint64_t offset = rng() % size;
            const std::uint64_t length = 1 + rng() % std::min<std::uint64_t>(size - offset, 3 * kBlock);
            REQUIRE(read_bytes(titles, title, offset, length) == source.substr(offset, length));
        }
        // Edges: the last byte, a range across one boundary, exactly one block.
        CHECK(read_bytes(titles, title, size - 1, 1) == source.substr(size - 1));
        CHECK(read_bytes(titles, title, kBlock - 3, 6) == source.substr(kBlock - 3, 6));
        CHECK(read_bytes(titles, title, kBlock, kBlock) == source.substr(kBlock, kBlock));
    }
}

TEST_CASE("a multi-block read comes back as one file segment per block, spread over the disks",
          "[server][store]") {
    StoreFixture fx(4, "rda");
    auto media = fx.media("m.bin", 2 * 1024 * 1024, 5);
    fx.ingest("movie", media, 64 * 1024);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto r = read_now(store, store.find("movie"), 0, 2 * 1024 * 1024);
    REQUIRE(r.status == ReadStatus::ok);
    REQUIRE(r.segments.size() == 32);
    for (const auto& s : r.segments) {
        REQUIRE(std::holds_alternative<FileSegment>(s));
        CHECK(std::get<FileSegment>(s).length == 64 * 1024);
    }
    CHECK(segment_bytes(r) == toast::testing::read_file(media));
    std::uint64_t total = 0;
    for (const auto& d : store.disk_status()) {
        CHECK(d.reads > 0);  // every disk served part of it
        CHECK(d.queue_depth == 0);
        total += d.reads;
    }
    CHECK(total == 32);
}

TEST_CASE("titles are found only by their exact manifest name", "[server][store]") {
    StoreFixture fx(2, "rda");
    auto media = fx.media("m.bin", 100'000, 1);
    auto ingested = fx.ingest("movie", media, 64 * 1024);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    REQUIRE(t);
    CHECK(t->name == "movie");
    CHECK(t->size == 100'000);
    CHECK(t->bitrate == BitRate(6'000'000));
    CHECK(t->block_size == 64 * 1024);
    CHECK(t->etag == "\"" + ingested.manifest.version + "\"");
    CHECK(t->last_modified ==
          std::chrono::system_clock::time_point(std::chrono::seconds(ingested.manifest.created)));
    using namespace std::string_view_literals;
    for (auto other : {""sv, "Movie"sv, "movie.json"sv, "../movie"sv, "./movie"sv, "movie/"sv, ".movie"sv,
                       "manifests/movie"sv, "movie\0x"sv, "m%6fvie"sv})
        CHECK_FALSE(store.find(other));
}

TEST_CASE("a title ingested or replaced while the store is open is served without a restart",
          "[server][store]") {
    StoreFixture fx(3, "rda");
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics,
                     BlockStoreOptions{.rescan_interval = std::chrono::milliseconds(200),
                                       .miss_rescan_interval = std::chrono::milliseconds(20)});
    CHECK_FALSE(store.find("late"));
    auto first = fx.media("a.bin", 500'000, 1);
    fx.ingest("late", first, 64 * 1024);
    std::shared_ptr<const TitleInfo> t;
    for (int i = 0; i < 100 && !t; ++i) {  // a miss rescans after 20 ms
        t = store.find("late");
        if (!t) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(t);
    CHECK(read_bytes(store, t, 0, 500'000) == toast::testing::read_file(first));

    auto second = fx.media("b.bin", 700'000, 2);
    auto replaced = fx.ingest("late", second, 64 * 1024);
    CHECK(replaced.removed_versions >= 1);
    std::shared_ptr<const TitleInfo> t2;
    for (int i = 0; i < 100; ++i) {  // the periodic rescan (200 ms) picks up the new version
        t2 = store.find("late");
        if (t2 && t2->etag != t->etag) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(t2);
    CHECK(t2->etag == "\"" + replaced.manifest.version + "\"");
    CHECK(t2->size == 700'000);
    CHECK(read_bytes(store, t2, 0, 700'000) == toast::testing::read_file(second));
    // The old version's blocks are gone: a read through the stale TitleInfo ends cleanly, whatever it finds.
    auto stale = read_now(store, t, 0, 500'000);
    if (stale.status == ReadStatus::ok) CHECK(segment_bytes(stale) == toast::testing::read_file(first));
}

TEST_CASE("an emulated disk makes each read take at least t_a + bytes / r_d", "[server][store]") {
    // t_a = 20 ms, r_d = 80 Mbps (10 MB/s): a 256 KiB read takes >= 20 + 26.2 ms.
    nlohmann::json em = {{"emulate", {{"t_a", "20ms"}, {"r_d", "80Mbps"}}}};
    StoreFixture fx(2, "raid0", {{"disks", {em, em}}});
    auto media = fx.media("m.bin", 4 * kBlock, 12);
    fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    auto timed = [&](std::uint64_t offset, std::uint64_t length) {
        auto start = std::chrono::steady_clock::now();
        auto r = read_now(store, t, offset, length);
        REQUIRE(r.status == ReadStatus::ok);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const double base = 0.020 + 262144.0 * 8 / 80e6;
    const double plain = timed(0, kBlock);
    CHECK(plain >= base);
    CHECK(plain < base + 0.5);
    // Fail-stutter 100%: twice the bytes go through the emulated disk.
    DiskFault stutter;
    stutter.stutter_pct = 100;
    REQUIRE(store.set_fault(1, stutter));
    CHECK(timed(kBlock, kBlock) >= 0.020 + 2 * 262144.0 * 8 / 80e6);  // block 1 lives on disk 1
    // Added latency on top of the emulated time.
    DiskFault slow;
    slow.added_latency = std::chrono::milliseconds(30);
    REQUIRE(store.set_fault(0, slow));
    CHECK(timed(2 * kBlock, 1000) >= 0.030 + 0.020 + 1000.0 * 8 / 80e6);
    // Stutter bytes are really read and counted.
    CHECK(store.disk_status()[1].bytes_read == 2 * kBlock);
    CHECK(!store.set_fault(2, slow));
}

TEST_CASE("a read ready after its deadline says how late it was and is counted missed", "[server][store]") {
    // t_a = 100 ms: a read cannot be ready within 20 ms, and is within 10 s.
    nlohmann::json em = {{"emulate", {{"t_a", "100ms"}, {"r_d", "800Mbps"}}}};
    StoreFixture fx(1, "naive", {{"disks", {em}}});
    auto media = fx.media("m.bin", 2 * kBlock, 13);
    fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    auto read_due = [&](std::optional<std::chrono::milliseconds> in) {
        auto promise = std::make_shared<std::promise<ReadResult>>();
        auto future = promise->get_future();
        ReadRequest r;
        r.title = t;
        r.length = 1000;
        if (in) r.deadline = std::chrono::steady_clock::now() + *in;
        store.read(r, [promise](ReadResult res) { promise->set_value(std::move(res)); });
        REQUIRE(future.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
        return future.get();
    };
    const auto late = read_due(20ms);
    REQUIRE(late.status == ReadStatus::ok);
    CHECK(late.late >= 70ms);
    CHECK(late.late < 5s);
    const auto on_time = read_due(10s);
    CHECK(on_time.late == std::chrono::nanoseconds(0));
    const auto best_effort = read_due(std::nullopt);
    CHECK(best_effort.late == std::chrono::nanoseconds(0));
    const auto text = metrics.render();
    CHECK_THAT(text, Contains("toast_store_read_deadlines_total{result=\"missed\"} 1"));
    CHECK_THAT(text, Contains("toast_store_read_deadlines_total{result=\"met\"} 1"));
}

TEST_CASE("the store learns to avoid a stuttering disk", "[server][store]") {
    // A mirrored pair of emulated disks (2 ms, 80 Mbps); disk 0 reads 1000% extra with every request, so a
    // 64 KiB read takes 74 ms there against 8.5 ms on disk 1: a gap far above scheduling noise, even on a
    // loaded machine in a sanitizer build (200% extra, 21.7 ms, was not).
    nlohmann::json em = {{"emulate", {{"t_a", "2ms"}, {"r_d", "80Mbps"}}}};
    StoreFixture fx(2, "raid1", {{"disks", {em, em}}});
    auto media = fx.media("m.bin", 2 * kBlock, 13);
    fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    DiskFault stutter;
    stutter.stutter_pct = 1000;
    store.set_fault(0, stutter);
    auto t = store.find("movie");
    for (int i = 0; i < 30; ++i)
        read_bytes(store, t, (i % 2) * kBlock + 4096, 64 * 1024);
    const auto slow = counter_value(metrics, "toast_replica_choices_total", disk_label(0));
    const auto fast = counter_value(metrics, "toast_replica_choices_total", disk_label(1));
    CHECK(slow + fast == 30);
    CHECK(slow <= 3);  // at most a few reads before its service model shows the stutter
    auto status = store.disk_status();
    CHECK(status[0].service_seconds_per_mb > status[1].service_seconds_per_mb);
}

TEST_CASE("reads outside a title or of an unknown title fail cleanly on a worker thread", "[server][store]") {
    StoreFixture fx(2, "rda");
    auto media = fx.media("m.bin", 100'000, 14);
    fx.ingest("movie", media, 64 * 1024);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    auto outside = read_now(store, t, 99'000, 2'000);
    CHECK(outside.status == ReadStatus::io_error);
    CHECK_THAT(outside.message, Contains("outside title \"movie\" of 100000 bytes"));
    auto stranger = std::make_shared<TitleInfo>();
    stranger->name = "ghost";
    stranger->size = 10;
    stranger->bitrate = BitRate(1);
    stranger->block_size = 64;
    stranger->etag = "\"x\"";
    auto ghost = read_now(store, stranger, 0, 10);
    CHECK(ghost.status == ReadStatus::unavailable);
    CHECK_THAT(ghost.message, Contains("ghost"));
    auto empty = read_now(store, t, 5, 0);
    CHECK(empty.status == ReadStatus::ok);
    CHECK(empty.segments.empty());
    // The handler runs on a disk worker, never on the caller's thread.
    std::promise<std::thread::id> where;
    store.read(ReadRequest{.title = t, .offset = 0, .length = 10},
               [&](ReadResult) { where.set_value(std::this_thread::get_id()); });
    auto f = where.get_future();
    REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(f.get() != std::this_thread::get_id());
}

TEST_CASE("disk metrics count reads and bytes and return the queue gauge to zero", "[server][store]") {
    StoreFixture fx(2, "raid0");
    auto media = fx.media("m.bin", 4 * kBlock, 15);
    fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    read_bytes(store, t, 0, 4 * kBlock);
    const auto text = metrics.render();
    CHECK_THAT(text, Contains("toast_disk_reads_total{disk=\"0\"} 2") &&
                         Contains("toast_disk_reads_total{disk=\"1\"} 2"));
    CHECK_THAT(text, Contains("toast_disk_bytes_read_total{disk=\"0\"} 524288"));
    CHECK_THAT(text, Contains("toast_disk_queue_depth{disk=\"0\"} 0"));
    CHECK_THAT(text, Contains("toast_disk_read_seconds_count{disk=\"1\"} 2"));
    CHECK_THAT(text, Contains("toast_replica_choices_total{disk=\"1\"} 2"));
    CHECK_THAT(text, Contains("toast_replica_fallbacks_total 0"));
}

TEST_CASE("the catalogue survives lost and stale manifest copies, and cleanup repairs them",
          "[server][store]") {
    StoreFixture fx(3, "rda");
    auto media = fx.media("m.bin", 300'000, 16);
    fx.ingest("movie", media, 64 * 1024);
    auto current = fx.ingest("movie", media, 64 * 1024);  // generation 2
    // Disk 0 loses its copy; disk 1 holds an older generation (as after a crash between the per-disk
    // renames).
    std::filesystem::remove(fx.disk(0) / "manifests" / "movie.json");
    auto older = current.manifest;
    older.generation = 1;
    older.version = "0000000000000001";
    std::ofstream(fx.disk(1) / "manifests" / "movie.json") << manifest_to_json(older).dump();
    // Leftovers of a crashed ingest: an unreferenced version directory and temporary files.
    std::filesystem::create_directories(fx.disk(2) / "blocks" / "movie@00000000deadbeef");
    std::ofstream(fx.disk(2) / "blocks" / "movie@00000000deadbeef" / "000000.blk") << "x";
    std::ofstream(fx.disk(1) / "manifests" / ".movie.json.tmp.1.0") << "{";
    std::ofstream(fx.disk(0) / "manifests" / "junk.json") << "not json";

    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    REQUIRE(t);
    CHECK(t->etag == "\"" + current.manifest.version + "\"");  // the highest generation wins
    CHECK(read_bytes(store, t, 0, 300'000) == toast::testing::read_file(media));
    REQUIRE(store.catalogue_problems().size() == 1);
    CHECK_THAT(store.catalogue_problems()[0], Contains("junk.json") && Contains("not valid JSON"));

    auto before = verify_store(fx.config);
    CHECK(before.notes.size() == 2);  // disk 0 has no copy, disk 1 an older one
    auto report = clean_up_store(fx.config);
    CHECK(report.repaired_manifests == 2);
    CHECK(report.orphan_versions == 1);
    CHECK(report.temporary_files == 1);
    CHECK_FALSE(std::filesystem::exists(fx.disk(2) / "blocks" / "movie@00000000deadbeef"));
    auto after = verify_store(fx.config);
    CHECK(after.notes.empty());
    CHECK(after.problems.size() == 1);  // junk.json is reported, never deleted
    CHECK(after.replicas == 10);
}

TEST_CASE("a disk avoided for stuttering is tried again after a while and used again once it recovers",
          "[server][store]") {
    // A mirrored pair like the test above, but slower per byte (2 ms, 20 Mbps: 28 ms per 64 KiB read, 80 ms
    // with the stutter), so that a 52 ms gap stays far above the sleep overshoot of a loaded machine; and a
    // short service_model_half_life (100 ms) so that an idle second is ten half-lives. Reads are one at a
    // time: disk 1's queue never grows, so only the fading of disk 0's slow estimate can bring reads back.
    nlohmann::json em = {{"emulate", {{"t_a", "2ms"}, {"r_d", "20Mbps"}}}};
    auto run = [&](const char* half_life, bool recover, int reads_after) {
        StoreFixture fx(2, "raid1", {{"disks", {em, em}}, {"service_model_half_life", half_life}});
        auto media = fx.media("m.bin", 2 * kBlock, 13);
        fx.ingest("movie", media, kBlock);
        MetricsRegistry metrics;
        BlockStore store(fx.config, metrics);
        DiskFault stutter;
        stutter.stutter_pct = 1000;
        store.set_fault(0, stutter);
        auto t = store.find("movie");
        auto slow_reads = [&] {
            return counter_value(metrics, "toast_replica_choices_total", disk_label(0));
        };
        for (int i = 0; i < 30; ++i)
            read_bytes(store, t, (i % 2) * kBlock + 4096, 64 * 1024);
        const auto learned = slow_reads();
        CHECK(learned <= 4);
        if (recover) store.set_fault(0, DiskFault{});
        std::this_thread::sleep_for(std::chrono::seconds(1));
        for (int i = 0; i < reads_after; ++i)
            read_bytes(store, t, (i % 2) * kBlock + 4096, 64 * 1024);
        return slow_reads() - learned;
    };
    SECTION("still stuttering: one read re-measures it, then it is avoided again") {
        const auto tried = run("100ms", false, 20);
        CHECK(tried >= 1);
        CHECK(tried <= 3);
    }
    SECTION("recovered: it takes a fair share of the reads again") {
        CHECK(run("100ms", true, 60) >= 10);
    }
    SECTION("without the fading (a half-life of an hour) a recovered disk stays unused") {
        CHECK(run("1h", true, 60) == 0);
    }
}

TEST_CASE("interrupt_reads cuts a read sleeping in a 40 s latency fault short, later reads are served",
          "[server][store]") {
    StoreFixture fx(
        2, "rda",
        {{"disks", {{{"fault", {{"added_latency", "40s"}}}}, {{"fault", {{"added_latency", "40s"}}}}}}});
    auto media = fx.media("m.bin", 2 * kBlock, 3);
    fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    auto promise = std::make_shared<std::promise<ReadResult>>();
    auto future = promise->get_future();
    const auto t0 = std::chrono::steady_clock::now();
    store.read(ReadRequest{.title = t, .offset = 0, .length = 100},
               [promise](ReadResult r) { promise->set_value(std::move(r)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    store.interrupt_reads();
    REQUIRE(future.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    auto r = future.get();
    CHECK(r.status == ReadStatus::io_error);
    CHECK_THAT(r.message, Contains("interrupted"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    // The interruption is not sticky.
    store.set_fault(0, DiskFault{});
    store.set_fault(1, DiskFault{});
    CHECK(read_bytes(store, t, 0, 100) == toast::testing::read_file(media).substr(0, 100));
}

TEST_CASE("a disk scheduler plugged in through the options orders each disk's queue by deadline",
          "[server][store]") {
    // One disk whose single worker is held by a slow first read (emulated: 300 ms), so the next reads
    // queue behind it; the scheduler serves them by deadline, not by arrival.
    struct DeadlineFirst final : DiskScheduler {
        std::vector<DiskRequest> queue;
        void push(const DiskRequest& r) override { queue.push_back(r); }
        std::uint64_t pop(std::chrono::steady_clock::time_point, std::uint64_t) override {
            auto best = std::min_element(queue.begin(), queue.end(), [](const auto& a, const auto& b) {
                return a.deadline.value_or(std::chrono::steady_clock::time_point::max()) <
                       b.deadline.value_or(std::chrono::steady_clock::time_point::max());
            });
            auto id = best->id;
            queue.erase(best);
            return id;
        }
        std::size_t size() const override { return queue.size(); }
    };
    StoreFixture fx(1, "naive", {{"disks", {{{"emulate", {{"t_a", "300ms"}, {"r_d", "1Gbps"}}}}}}});
    auto media = fx.media("m.bin", 4 * kBlock, 5);
    fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStoreOptions options;
    int made = 0;
    options.scheduler = [&](std::size_t, const DiskConfig&) {
        ++made;
        return std::make_unique<DeadlineFirst>();
    };
    BlockStore store(fx.config, metrics, options);
    CHECK(made == 1);
    auto t = store.find("movie");
    std::mutex mutex;
    std::vector<int> order;
    std::vector<std::future<void>> done;
    auto issue = [&](int tag, std::uint64_t block,
                     std::optional<std::chrono::steady_clock::time_point> deadline) {
        auto p = std::make_shared<std::promise<void>>();
        done.push_back(p->get_future());
        store.read(ReadRequest{.title = t, .offset = block * kBlock, .length = 10, .deadline = deadline},
                   [&, tag, p](ReadResult r) {
                       CHECK(r.status == ReadStatus::ok);
                       std::lock_guard lock(mutex);
                       order.push_back(tag);
                       p->set_value();
                   });
    };
    const auto now = std::chrono::steady_clock::now();
    issue(0, 0, std::nullopt);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the worker has taken read 0
    issue(1, 1, std::nullopt);
    issue(2, 2, now + std::chrono::seconds(9));
    issue(3, 3, now + std::chrono::seconds(1));
    for (auto& f : done)
        REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(order == std::vector<int>{0, 3, 2, 1});
}
