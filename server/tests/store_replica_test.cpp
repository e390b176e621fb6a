// The block store's replicas under faults: offline disks, corrupt, missing and rotten replica files, and
// checksum verification across the open-file cache.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "server/io/block_store.hpp"
#include "server/io/verify.hpp"
#include "store_fixture.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using namespace toast::server::testing;
using Catch::Matchers::Contains;

TEST_CASE("with one disk offline rda and raid1 still serve every byte", "[server][store]") {
    for (const char* policy : {"rda", "raid1"}) {
        INFO("policy " << policy);
        StoreFixture fx(4, policy);
        auto media = fx.media("m.bin", 2 * 1024 * 1024 + 7, 3);
        auto ingested = fx.ingest("movie", media, 128 * 1024);
        const auto source = toast::testing::read_file(media);
        const auto lost = ingested.manifest.blocks[0].replicas[0].disk;  // a disk that holds this title
        MetricsRegistry metrics;
        BlockStore store(fx.config, metrics);
        DiskFault offline;
        offline.offline = true;
        REQUIRE(store.set_fault(lost, offline));
        CHECK(store.disk_status()[lost].fault.offline);
        auto t = store.find("movie");
        CHECK(read_bytes(store, t, 0, source.size()) == source);
        for (std::uint64_t b = 0; b < ingested.manifest.blocks.size(); ++b) {
            const auto n = std::min<std::uint64_t>(1000, source.size() - b * 128 * 1024);
            CHECK(read_bytes(store, t, b * 128 * 1024, n) == source.substr(b * 128 * 1024, n));
        }
        auto status = store.disk_status();
        CHECK(status[lost].reads == 0);
        CHECK(counter_value(metrics, "toast_replica_choices_total", disk_label(lost)) == 0);
    }
}

TEST_CASE("with one disk offline single-copy policies fail only the blocks on it", "[server][store]") {
    for (const char* policy : {"naive", "raid0", "random"}) {
        INFO("policy " << policy);
        // Disk 1 is offline from the start, through the config.
        StoreFixture fx(3, policy, {{"disks", {nullptr, {{"fault", {{"offline", true}}}}, nullptr}}});
        auto media = fx.media("m.bin", 20 * 64 * 1024, 4);
        auto ingested = fx.ingest("movie", media, 64 * 1024);
        const auto source = toast::testing::read_file(media);
        MetricsRegistry metrics;
        BlockStore store(fx.config, metrics);
        auto t = store.find("movie");
        REQUIRE(t);
        bool any_lost = false;
        for (std::uint64_t b = 0; b < 20; ++b) {
            auto r = read_now(store, t, b * 64 * 1024, 64 * 1024);
            if (ingested.manifest.blocks[b].replicas[0].disk == 1) {
                any_lost = true;
                CHECK(r.status == ReadStatus::unavailable);
                CHECK_THAT(r.message, Contains("title \"movie\" block " + std::to_string(b)) &&
                                          Contains("disk 1") && Contains("offline"));
                CHECK(r.segments.empty());
            } else {
                REQUIRE(r.status == ReadStatus::ok);
                CHECK(segment_bytes(r) == source.substr(b * 64 * 1024, 64 * 1024));
            }
        }
        if (any_lost) CHECK(read_now(store, t, 0, source.size()).status == ReadStatus::unavailable);
        if (std::string(policy) != "naive") CHECK(any_lost);  // 20 blocks over 3 disks always touch disk 1
    }
}

TEST_CASE("a corrupt replica is detected, the other one is used, and both are counted", "[server][store]") {
    StoreFixture fx(4, "rda");
    auto media = fx.media("m.bin", 4 * kBlock, 8);
    auto ingested = fx.ingest("movie", media, kBlock);
    const auto source = toast::testing::read_file(media);
    // On an idle array the chooser breaks the tie by block number: block 1 tries replicas[1] first.
    const auto& rep = ingested.manifest.blocks[1].replicas;
    const auto bad = rep[1].disk, good = rep[0].disk;
    flip_byte(fx.disk(bad) / rep[1].file, 70'000);  // chunk 1 of the block

    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    CHECK(read_bytes(store, t, kBlock, kBlock) == source.substr(kBlock, kBlock));
    CHECK(counter_value(metrics, "toast_disk_checksum_failures_total", disk_label(bad)) == 1);
    CHECK(counter_value(metrics, "toast_replica_fallbacks_total") == 1);
    CHECK(counter_value(metrics, "toast_disk_replica_failures_total",
                        {{"disk", std::to_string(bad)}, {"reason", "corrupt"}}) == 1);
    CHECK(counter_value(metrics, "toast_disk_reads_total", disk_label(good)) >= 1);

    auto report = verify_store(fx.config);
    REQUIRE(report.problems.size() == 1);
    CHECK_THAT(report.problems[0], Contains("block 1 replica on disk " + std::to_string(bad)) &&
                                       Contains("chunk 1 fails its CRC-32C"));
}

TEST_CASE("a missing replica file is replaced by the other replica", "[server][store]") {
    StoreFixture fx(4, "rda");
    auto media = fx.media("m.bin", 4 * kBlock, 9);
    auto ingested = fx.ingest("movie", media, kBlock);
    const auto& rep = ingested.manifest.blocks[2].replicas;  // block 2 tries replicas[0] first
    std::filesystem::remove(fx.disk(rep[0].disk) / rep[0].file);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    CHECK(read_bytes(store, t, 2 * kBlock, kBlock) ==
          toast::testing::read_file(media).substr(2 * kBlock, kBlock));
    CHECK(counter_value(metrics, "toast_replica_fallbacks_total") == 1);
    CHECK(counter_value(metrics, "toast_disk_replica_failures_total",
                        {{"disk", std::to_string(rep[0].disk)}, {"reason", "missing"}}) == 1);
}

TEST_CASE("a replica damaged after it was verified is checked again", "[server][store]") {
    StoreFixture fx(2, "rda");
    auto media = fx.media("m.bin", kBlock, 10);
    auto ingested = fx.ingest("movie", media, kBlock);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics);
    auto t = store.find("movie");
    CHECK(read_bytes(store, t, 0, kBlock) == toast::testing::read_file(media));
    // Damage both copies (new mtime): the remembered verification no longer applies.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& r : ingested.manifest.blocks[0].replicas)
        flip_byte(fx.disk(r.disk) / r.file, 10);
    auto r = read_now(store, t, 0, 100);
    CHECK(r.status == ReadStatus::unavailable);
    CHECK_THAT(r.message,
               Contains("title \"movie\" block 0") && (Contains("disks 0, 1") || Contains("disks 1, 0")));
    CHECK_THAT(r.message, Contains("fails its CRC-32C"));
}

TEST_CASE("a block file evicted from the open-file cache is not verified again when re-opened",
          "[server][store]") {
    // 24 blocks of 128 KiB on one copy each (raid0 over 2 disks), and room for only 2 open files: every
    // pass over the title opens every file again.
    StoreFixture fx(2, "raid0");
    const std::uint64_t block = 128 * 1024;
    auto media = fx.media("m.bin", 24 * block, 21);
    fx.ingest("movie", media, block);
    const auto source = toast::testing::read_file(media);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics,
                     BlockStoreOptions{.rescan_interval = std::chrono::seconds(1),
                                       .miss_rescan_interval = std::chrono::milliseconds(50),
                                       .open_file_cache = 2});
    auto t = store.find("movie");
    REQUIRE(t);
    auto pass = [&] {
        for (std::uint64_t b = 0; b < 24; ++b)
            REQUIRE(read_bytes(store, t, b * block, block) == source.substr(b * block, block));
    };
    pass();
    CHECK(counter_value(metrics, "toast_store_chunks_verified_total") == 24 * 2);  // two 64 KiB chunks each
    CHECK(counter_value(metrics, "toast_store_files_opened_total") == 24);
    pass();
    CHECK(counter_value(metrics, "toast_store_files_opened_total") == 48);     // all evicted and re-opened...
    CHECK(counter_value(metrics, "toast_store_chunks_verified_total") == 48);  // ...but none hashed again
    // A read of half a chunk of a fresh file verifies just that chunk; the rest of the file stays unchecked.
    auto other = fx.media("o.bin", 2 * block, 22);
    fx.ingest("other", other, block);
    std::shared_ptr<const TitleInfo> o;
    for (int i = 0; i < 100 && !o; ++i) {
        o = store.find("other");
        if (!o) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(o);
    CHECK(read_bytes(store, o, 1000, 30'000) == toast::testing::read_file(other).substr(1000, 30'000));
    CHECK(counter_value(metrics, "toast_store_chunks_verified_total") == 49);
}

TEST_CASE("a block file rewritten after it was verified and evicted is found corrupt", "[server][store]") {
    StoreFixture fx(2, "raid0");
    const std::uint64_t block = 128 * 1024;
    auto media = fx.media("m.bin", 8 * block, 23);
    auto ingested = fx.ingest("movie", media, block);
    const auto source = toast::testing::read_file(media);
    MetricsRegistry metrics;
    BlockStore store(fx.config, metrics,
                     BlockStoreOptions{.rescan_interval = std::chrono::seconds(1),
                                       .miss_rescan_interval = std::chrono::milliseconds(50),
                                       .open_file_cache = 2});
    auto t = store.find("movie");
    for (std::uint64_t b = 0; b < 8; ++b)
        REQUIRE(read_bytes(store, t, b * block, block) == source.substr(b * block, block));
    const auto verified = counter_value(metrics, "toast_store_chunks_verified_total");
    CHECK(verified == 16);

    // Block 0's file is closed by now (the cache holds blocks 6 and 7). Rewrite it in place (same inode, new
    // mtime) and replace block 7's file, which is still open, by a renamed copy with a flipped byte.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto& r0 = ingested.manifest.blocks[0].replicas[0];
    flip_byte(fx.disk(r0.disk) / r0.file, 70'000);  // chunk 1
    const auto& r7 = ingested.manifest.blocks[7].replicas[0];
    const auto f7 = fx.disk(r7.disk) / r7.file;
    auto copy = f7;
    copy += ".new";
    std::filesystem::copy_file(f7, copy);
    flip_byte(copy, 5);  // chunk 0
    std::filesystem::rename(copy, f7);

    auto r = read_now(store, t, 0, block);
    CHECK(r.status == ReadStatus::unavailable);
    CHECK_THAT(r.message, Contains("block 0") && Contains("chunk 1 fails its CRC-32C"));
    auto r2 = read_now(store, t, 7 * block, 100);
    CHECK(r2.status == ReadStatus::unavailable);
    CHECK_THAT(r2.message, Contains("block 7") && Contains("chunk 0 fails its CRC-32C"));
    CHECK(counter_value(metrics, "toast_disk_checksum_failures_total", disk_label(0)) +
              counter_value(metrics, "toast_disk_checksum_failures_total", disk_label(1)) ==
          2);
    // Untouched blocks are still served from what was verified before.
    CHECK(read_bytes(store, t, 3 * block, block) == source.substr(3 * block, block));
}
