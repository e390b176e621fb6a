#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "server/core/block_math.hpp"
#include "server/core/crc32c.hpp"
#include "server/core/manifest.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;

namespace {

Manifest sample_manifest() {
    Manifest m;
    m.title = "big.buck-bunny_1080p";
    m.size = 300 * 1024;  // 3 blocks of 128 KiB, the last 44 KiB
    m.bitrate = BitRate(6'000'000);
    m.block_size = 128 * 1024;
    m.policy = PlacementPolicy::rda;
    m.seed = 77;
    m.version = "00ff00ff00ff00ff";
    m.generation = 3;
    m.created = 1'700'000'000;
    for (std::uint64_t b = 0; b < 3; ++b) {
        BlockRecord r;
        r.replicas = {{static_cast<std::uint32_t>(b % 4), block_file_name(m.title, m.version, b)},
                      {static_cast<std::uint32_t>((b + 1) % 4), block_file_name(m.title, m.version, b)}};
        r.chunk_crcs = b < 2 ? std::vector<std::uint32_t>{0xdeadbeef, 0x00000001}
                             : std::vector<std::uint32_t>{0xffffffff};
        m.blocks.push_back(r);
    }
    m.torrent = TorrentRecord{torrent_file_path(m.title, m.version), m.title + ".ts",
                              "0123456789abcdef0123456789abcdef01234567"};
    return m;
}

}  // namespace

TEST_CASE("a manifest survives a JSON round trip unchanged", "[server][manifest]") {
    auto m = sample_manifest();
    auto text = manifest_to_json(m).dump();
    auto parsed = parse_manifest(nlohmann::json::parse(text), 4);
    INFO(parsed.error);
    REQUIRE(parsed.manifest);
    CHECK(*parsed.manifest == m);
    CHECK(parsed.manifest->blocks[0].replicas[0].file ==
          "blocks/big.buck-bunny_1080p@00ff00ff00ff00ff/000000.blk");
    CHECK(text.find("\"crc32c\":\"deadbeef00000001\"") != std::string::npos);
    CHECK(parsed.manifest->torrent->file == "torrents/big.buck-bunny_1080p@00ff00ff00ff00ff.torrent");
    // Manifests written before the store kept torrents have none, and still load.
    auto older = manifest_to_json(m);
    older.erase("torrent");
    auto old_parsed = parse_manifest(older, 4);
    REQUIRE(old_parsed.manifest);
    CHECK_FALSE(old_parsed.manifest->torrent);
    CHECK(text.find("trace") == std::string::npos);  // a constant-rate title has none

    m.trace = DemandTrace{std::chrono::seconds(5), {200 * 1024, 0, 100 * 1024}};
    auto with_trace = parse_manifest(manifest_to_json(m), 4);
    INFO(with_trace.error);
    REQUIRE(with_trace.manifest);
    CHECK(*with_trace.manifest == m);
    CHECK(manifest_to_json(m)["trace"]["round_ns"] == 5'000'000'000ll);
}

TEST_CASE("replicas follow their disks' identities to the disks' positions in the config now",
          "[server][manifest]") {
    auto m = sample_manifest();  // block b on disks b%4 and (b+1)%4
    m.disk_ids = {"a0", "a1", "a2", "a3"};
    auto parsed = parse_manifest(manifest_to_json(m), 4);
    INFO(parsed.error);
    REQUIRE(parsed.manifest);
    CHECK(parsed.manifest->disk_ids == m.disk_ids);

    // The config lists the same disks in reverse order.
    auto reordered = m;
    CHECK(remap_disks(reordered, {"a3", "a2", "a1", "a0"}) == "");
    CHECK(reordered.blocks[0].replicas[0].disk == 3);
    CHECK(reordered.blocks[0].replicas[1].disk == 2);
    CHECK(reordered.blocks[2].replicas[0].disk == 1);
    CHECK(reordered.blocks[2].replicas[1].disk == 0);
    CHECK(reordered.disk_ids == std::vector<std::string>{"a3", "a2", "a1", "a0"});

    // A disk that cannot be read keeps its position: its replicas fail there and the others serve.
    auto dead = m;
    CHECK(remap_disks(dead, {"a0", "", "a2", "a3"}) == "");
    CHECK(dead.blocks[0].replicas[1].disk == 1);

    // A disk replaced by another one (a different identity where the old disk was) is reported.
    auto replaced = m;
    CHECK(remap_disks(replaced, {"a0", "b1", "a2", "a3"}) ==
          "its replicas on the disk with identity a1 (disk 1 at ingest) have no configured disk: no disk in "
          "'disks' has that identity");
    auto fewer = m;
    CHECK_FALSE(remap_disks(fewer, {"a0", "a1", "a2"}).empty());

    // Manifests from before identities keep positions.
    auto old = sample_manifest();
    CHECK(remap_disks(old, {"a3", "a2", "a1", "a0"}) == "");
    CHECK(old == sample_manifest());

    auto bad = manifest_to_json(m);
    bad["disk_ids"] = {"a0", "A1"};
    CHECK_THAT(parse_manifest(bad, 4).error, Contains("'disk_ids'"));
    bad["disk_ids"] = {"a0", "a1"};
    CHECK_THAT(parse_manifest(bad, 4).error, Contains("'disk_ids' has 2 entries"));
}

TEST_CASE("manifests that would mislead a reader are refused with the reason", "[server][manifest]") {
    auto broken = [](auto mutate) {
        auto j = manifest_to_json(sample_manifest());
        mutate(j);
        auto r = parse_manifest(j, 4);
        CHECK_FALSE(r.manifest);
        return r.error;
    };
    CHECK_THAT(broken([](auto& j) { j["title"] = "../etc"; }), Contains("invalid 'title'"));
    CHECK_THAT(broken([](auto& j) { j["blocks"][1]["replicas"][0]["disk"] = 4; }),
               Contains("blocks[1] names disk 4 but only 4 disks"));
    CHECK_THAT(broken([](auto& j) { j["blocks"][0]["replicas"][1]["disk"] = 0; }),
               Contains("lists disk 0 twice"));
    CHECK_THAT(broken([](auto& j) { j["blocks"][0]["replicas"][0]["file"] = "../../etc/passwd"; }),
               Contains("unsafe file"));
    CHECK_THAT(broken([](auto& j) { j["blocks"][0]["replicas"][0]["file"] = "/etc/passwd"; }),
               Contains("unsafe file"));
    CHECK_THAT(broken([](auto& j) { j["blocks"][2]["crc32c"] = "deadbeef00000001"; }),
               Contains("blocks[2].crc32c must hold 1 checksums"));
    CHECK_THAT(broken([](auto& j) { j["blocks"][2]["crc32c"] = "zzzzzzzz"; }), Contains("blocks[2].crc32c"));
    CHECK_THAT(broken([](auto& j) { j["size"] = 1024 * 1024; }), Contains("'blocks' has 3 entries"));
    CHECK_THAT(broken([](auto& j) { j["policy"] = "raid5"; }), Contains("unknown 'policy' \"raid5\""));
    CHECK_THAT(broken([](auto& j) { j.erase("version"); }), Contains("missing field 'version'"));
    CHECK_THAT(broken([](auto& j) { j["version"] = "a/b"; }), Contains("invalid 'version'"));
    CHECK_THAT(broken([](auto& j) { j["block_size"] = 0; }), Contains("'block_size' must be greater than 0"));
    CHECK_THAT(broken([](auto& j) { j["format"] = 2; }), Contains("unsupported 'format'"));
    CHECK_THAT(broken([](auto& j) { j["torrent"]["file"] = "../x.torrent"; }),
               Contains("torrent has an unsafe file"));
    CHECK_THAT(broken([](auto& j) { j["torrent"]["name"] = "a/b.ts"; }), Contains("invalid torrent 'name'"));
    CHECK_THAT(broken([](auto& j) { j["torrent"]["name"] = ".ts"; }), Contains("invalid torrent 'name'"));
    CHECK_THAT(broken([](auto& j) { j["torrent"]["info_hash"] = "ABCDEF"; }), Contains("40 lowercase hex"));
    CHECK_THAT(broken([](auto& j) { j["torrent"] = "x"; }), Contains("'torrent' must be an object"));
    CHECK_FALSE(parse_manifest(nlohmann::json::array(), 4).manifest);
    auto traced = [](auto& j) { j["trace"] = {{"round_ns", 1000}, {"bytes", {300 * 1024}}}; };
    CHECK_THAT(broken([&](auto& j) {
                   traced(j);
                   j["trace"]["bytes"] = {1, 2};
               }),
               Contains("'trace.bytes' sums to 3, 'size' is 307200"));
    CHECK_THAT(broken([&](auto& j) {
                   traced(j);
                   j["trace"]["round_ns"] = 0;
               }),
               Contains("'trace.round_ns' must be greater than 0"));
    CHECK_THAT(broken([&](auto& j) {
                   traced(j);
                   j["trace"]["bytes"] = {-5};
               }),
               Contains("non-negative integers"));
}

TEST_CASE("title names are plain keys and never path syntax", "[server][manifest]") {
    for (const char* good : {"movie", "a", "Big_Buck.Bunny-1080p", "x.torrent", "0"})
        CHECK(is_valid_title_name(good));
    for (const char* bad : {"", ".hidden", "..", "../x", "a/b", "a\\b", "a b", "caf\xc3\xa9", "a%2fb", "a@b"})
        CHECK_FALSE(is_valid_title_name(bad));
    CHECK(is_valid_title_name(std::string(128, 'a')));
    CHECK_FALSE(is_valid_title_name(std::string(129, 'a')));
    CHECK(is_safe_relative_path("blocks/a@b/000001.blk"));
    for (const char* bad : {"", "/abs", "a//b", "a/../b", "./a", "a/", ".x/y", "a/b c"})
        CHECK_FALSE(is_safe_relative_path(bad));
}

TEST_CASE("byte ranges split at block boundaries", "[server][manifest]") {
    CHECK(block_count(0, 100) == 0);
    CHECK(block_count(100, 100) == 1);
    CHECK(block_count(101, 100) == 2);
    CHECK(block_length(1, 250, 100) == 100);
    CHECK(block_length(2, 250, 100) == 50);
    CHECK(block_length(3, 250, 100) == 0);
    CHECK(split_range(0, 250, 250, 100) == std::vector<BlockPiece>{{0, 0, 100}, {1, 0, 100}, {2, 0, 50}});
    CHECK(split_range(150, 10, 250, 100) == std::vector<BlockPiece>{{1, 50, 10}});
    CHECK(split_range(99, 2, 250, 100) == std::vector<BlockPiece>{{0, 99, 1}, {1, 0, 1}});
    CHECK(split_range(240, 1000, 250, 100) == std::vector<BlockPiece>{{2, 40, 10}});  // clipped to size
    CHECK(split_range(250, 1, 250, 100).empty());
    CHECK(split_range(10, UINT64_MAX, 250, 100).size() == 3);  // no overflow
}

TEST_CASE("crc32c matches the standard check value on both code paths", "[server][manifest]") {
    const std::string check = "123456789";
    CHECK(crc32c(check.data(), check.size()) == 0xE3069283u);
    CHECK(crc32c_portable(check.data(), check.size()) == 0xE3069283u);
    CHECK(crc32c(nullptr, 0) == 0);
    // Continuing a checksum equals checksumming the whole.
    CHECK(crc32c(check.data() + 4, 5, crc32c(check.data(), 4)) == 0xE3069283u);
    std::mt19937_64 rng(3);
    std::string data(70000, '\0');
    for (auto& c : data)
        c = static_cast<char>(rng());
    for (std::size_t off : {0, 1, 3, 7}) {
        for (std::size_t len : {0, 1, 7, 8, 9, 63, 4096, 65536}) {
            CHECK(crc32c(data.data() + off, len) == crc32c_portable(data.data() + off, len));
        }
    }
}
