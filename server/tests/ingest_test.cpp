#include <catch2/catch.hpp>

#include <chrono>
#include <random>
#include <thread>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/hasher.hpp>
#include <libtorrent/torrent_info.hpp>

#include "server/io/block_store.hpp"
#include "server/io/catalogue.hpp"
#include "store_fixture.hpp"

using namespace toast;
using namespace toast::server;
using namespace toast::server::testing;
using Catch::Matchers::Contains;
namespace lt = libtorrent;

namespace {

const std::string kBin = TOAST_SERVER_BIN;

toast::testing::RunResult cli(const std::filesystem::path& config, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config.string()});
    return toast::testing::run(kBin, args, std::chrono::seconds(60));
}

lt::bdecode_node decode(const std::string& bytes) {
    lt::error_code ec;
    auto node =
        lt::bdecode(lt::span<char const>(bytes.data(), static_cast<std::ptrdiff_t>(bytes.size())), ec);
    REQUIRE_FALSE(ec);
    return node;
}

}  // namespace

TEST_CASE("ingest refuses bad arguments with a message naming them and writes nothing", "[server][ingest]") {
    StoreFixture fx(3, "rda");
    auto config = fx.write_config();
    auto media = fx.media("m.bin", 100'000, 1);
    const auto out = fx.path("out.torrent").string();
    struct Case {
        std::vector<std::string> args;
        int code;
        std::string message;
    };
    const std::vector<Case> cases{
        {{"ingest", "movie", fx.path("absent.bin").string(), "--torrent", out},
         1,
         "absent.bin: No such file"},
        {{"ingest", "../movie", media.string(), "--torrent", out}, 1, "invalid title name \"../movie\""},
        {{"ingest", ".movie", media.string(), "--torrent", out}, 1, "invalid title name \".movie\""},
        {{"ingest", "a/b", media.string(), "--torrent", out}, 1, "invalid title name \"a/b\""},
        {{"ingest", "movie", media.string(), "--torrent", out, "--bitrate", "fast"}, 2, "bad bitrate 'fast'"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--bitrate", "0"},
         2,
         "--bitrate 0 is outside [1.00 kbps, 100.00 Gbps]"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--bitrate", "101Gbps"},
         2,
         "--bitrate 101Gbps is outside [1.00 kbps, 100.00 Gbps]"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--policy", "raid5"},
         2,
         "unknown policy 'raid5'"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--policy", "raid1"},
         1,
         "raid1 needs an even number of disks, got 3"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--colour", "blue"},
         2,
         "unknown option '--colour'"},
        {{"ingest", "movie", media.string(), "--torrent"}, 2, "--torrent needs a value"},
        {{"ingest", "movie", "--torrent", out}, 2, "needs NAME and MEDIA_FILE"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--block-size", "1KiB"},
         1,
         "outside 4 KiB..256 MiB"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--piece-size", "100KiB"}, 1, "power of two"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--announce", "ftp://x"},
         1,
         "announce URL \"ftp://x\""},
        {{"ingest", "movie", media.string(), "--torrent", out, "--operator-peer", "vod.example:6881"},
         2,
         "bad operator peer 'vod.example:6881' (expected IP:PORT"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--operator-peer", "10.0.0.5:0"},
         2,
         "bad operator peer '10.0.0.5:0'"},
        {{"ingest", "movie", media.string(), "--torrent", out, "--operator-peer"},
         2,
         "--operator-peer needs a value"},
        {{"ingest", "movie", fx.path("").string(), "--torrent", out}, 1, "is not a regular file"},
        {{"ingest", "movie", media.string(), "--torrent", fx.path("no/such/dir/x.torrent").string()},
         1,
         "does not exist"},
        {{"frobnicate"}, 2, "unknown command 'frobnicate'"},
        {{"verify", "movie", "extra"}, 2, "at most one title"},
    };
    for (const auto& c : cases) {
        auto r = cli(config, c.args);
        INFO(c.args[0] << " ... " << c.message << "\nstderr: " << r.err);
        CHECK(r.exit_code == c.code);
        CHECK_THAT(r.err, Contains(c.message));
    }
    CHECK_FALSE(std::filesystem::exists(out));
    for (std::size_t d = 0; d < 3; ++d)
        CHECK_FALSE(std::filesystem::exists(fx.disk(d) / "manifests" / "movie.json"));
    // A bad config is reported by every command, naming the field.
    std::ofstream(fx.path("bad.json")) << R"({"disks":["/a","/b"],"policy":"raid7"})";
    auto bad = cli(fx.path("bad.json"), {"check"});
    CHECK(bad.exit_code == 1);
    CHECK_THAT(bad.err, Contains("'policy'") && Contains("raid7"));
    auto good = cli(config, {"check"});
    CHECK(good.exit_code == 0);
    CHECK_THAT(good.out, Contains("config OK: 3 disks, policy rda") && Contains("0 titles"));
    std::ofstream(fx.path("nodisk.json")) << R"({"disks":[")" << fx.path("missing").string() << R"(","/"]})";
    auto nodisk = cli(fx.path("nodisk.json"), {"check"});
    CHECK(nodisk.exit_code == 1);
    CHECK_THAT(nodisk.err, Contains("disk 0 (" + fx.path("missing").string() + ") is not a directory"));
    auto help = toast::testing::run(kBin, {"--help"});
    CHECK(help.exit_code == 0);
    for (const char* word : {"check", "ingest", "verify", "serve", "--announce", "--operator-peer",
                             "--block-size", "url-list", "toast"})
        CHECK_THAT(help.out, Contains(word));
}

TEST_CASE(
    "ingest writes a reproducible v1 torrent with a web seed and the bitrate outside the info dictionary",
    "[server][ingest]") {
    StoreFixture fx(4, "rda");
    auto config = fx.write_config();
    auto media = fx.media("m.bin", 1'000'000, 2);
    const auto a = fx.path("a.torrent").string(), b = fx.path("b.torrent").string();
    std::vector<std::string> args{"ingest",
                                  "movie",
                                  media.string(),
                                  "--bitrate",
                                  "6Mbps",
                                  "--announce",
                                  "http://tracker.test/announce",
                                  "--announce",
                                  "udp://tracker2.test:6969",
                                  "--piece-size",
                                  "64KiB",
                                  "--block-size",
                                  "128KiB",
                                  "--torrent"};
    auto first = args, second = args;
    first.push_back(a);
    second.push_back(b);
    auto r1 = cli(config, first);
    REQUIRE(r1.exit_code == 0);
    auto r2 = cli(config, second);  // a re-ingest: new version, same torrent
    REQUIRE(r2.exit_code == 0);
    CHECK_THAT(r2.out, Contains("replaced the previous version"));
    const auto bytes = toast::testing::read_file(a);
    CHECK(bytes == toast::testing::read_file(b));

    auto root = decode(bytes);
    CHECK_FALSE(root.dict_find("creation date"));
    CHECK_FALSE(root.dict_find("created by"));
    auto toast_dict = root.dict_find_dict("toast");
    REQUIRE(toast_dict);
    CHECK(toast_dict.dict_find_int_value("bitrate") == 6'000'000);
    CHECK(toast_dict.dict_find_int_value("average_bitrate") == 6'000'000);  // random bytes: constant rate
    CHECK(toast_dict.dict_find_int_value("peak_bitrate") == 6'000'000);
    CHECK(toast_dict.dict_find_string_value("title") == "movie");
    CHECK_FALSE(root.dict_find_dict("toast").dict_find("operator_peers"));  // none named
    auto url_list = root.dict_find("url-list");
    REQUIRE(url_list);
    const std::string seed = url_list.type() == lt::bdecode_node::string_t
                                 ? std::string(url_list.string_value())
                                 : std::string(url_list.list_string_value_at(0));
    CHECK(seed == "http://vod.test:8080/titles/movie");
    auto info = root.dict_find_dict("info");
    CHECK_FALSE(info.dict_find("toast"));
    CHECK(info.dict_find_string_value("name") == "movie");
    CHECK(info.dict_find_int_value("length") == 1'000'000);
    CHECK(info.dict_find_int_value("piece length") == 64 * 1024);
    CHECK_FALSE(info.dict_find("meta version"));  // v1 only

    lt::torrent_info ti(bytes.data(), static_cast<int>(bytes.size()));
    CHECK(ti.num_pieces() == 16);
    REQUIRE(ti.trackers().size() == 2);
    CHECK(ti.trackers()[0].url == "http://tracker.test/announce");
    CHECK(ti.trackers()[1].url == "udp://tracker2.test:6969");
    CHECK(ti.trackers()[1].tier == 1);
    std::ostringstream hash;
    hash << ti.info_hashes().v1;
    CHECK_THAT(r1.out, Contains("info-hash " + hash.str()));
}

TEST_CASE("disks are known by identity: reordering them in the config after ingest keeps every title",
          "[server][ingest]") {
    StoreFixture fx(3, "rda");
    auto config = fx.write_config();
    auto media = fx.media("m.bin", 300'000, 7);
    auto in = cli(config, {"ingest", "movie", media.string(), "--torrent", fx.path("m.torrent").string(),
                           "--block-size", "16KiB"});
    INFO(in.err);
    REQUIRE(in.exit_code == 0);
    std::vector<std::string> ids;
    for (std::size_t d = 0; d < 3; ++d) {
        ids.push_back(read_disk_id(fx.disk(d)));
        CHECK(ids.back().size() == 32);
    }
    CHECK(ids[0] != ids[1]);

    // The same disks, listed in another order.
    auto j = fx.json();
    j["disks"] = {fx.disk(2).string(), fx.disk(0).string(), fx.disk(1).string()};
    std::ofstream(fx.path("reordered.json")) << j.dump();
    auto verify = cli(fx.path("reordered.json"), {"verify"});
    INFO(verify.out << verify.err);
    CHECK(verify.exit_code == 0);
    auto check = cli(fx.path("reordered.json"), {"check"});
    CHECK(check.exit_code == 0);
    CHECK_THAT(check.out, Contains("disk 0 (" + fx.disk(2).string() + "): identity " + ids[2]) &&
                              Contains("1 titles") && !Contains("warning"));
    {
        MetricsRegistry metrics;
        BlockStore store(load_server_config(j), metrics);
        auto t = store.find("movie");
        REQUIRE(t);
        CHECK(read_bytes(store, t, 0, t->size) == toast::testing::read_file(media));
    }

    // A disk whose identity is not the one the manifests name is reported, and the title is not served from
    // a wrong disk; its blocks are kept.
    std::ofstream(disk_id_path(fx.disk(1))) << "0123456789abcdef\n";
    auto mismatch = cli(fx.path("reordered.json"), {"check"});
    CHECK_THAT(mismatch.out, Contains("warning: manifest") && Contains("identity " + ids[1]) &&
                                 Contains("no disk in 'disks' has that identity") && Contains("0 titles"));
    // Two disks with one identity: one directory listed twice, or a copy.
    std::ofstream(disk_id_path(fx.disk(1))) << ids[0] << "\n";
    auto twice = cli(fx.path("reordered.json"), {"check"});
    CHECK(twice.exit_code == 1);
    CHECK_THAT(twice.out, Contains("have the same identity " + ids[0]));
    std::ofstream(disk_id_path(fx.disk(1))) << ids[1] << "\n";
    CHECK(cli(fx.path("reordered.json"), {"verify"}).exit_code == 0);
}

TEST_CASE("the torrent's piece hashes match the bytes the store serves", "[server][ingest]") {
    for (const char* policy : {"rda", "raid0"}) {
        INFO("policy " << policy);
        StoreFixture fx(4, policy);
        auto config = fx.write_config();
        // Blocks of 96 KiB do not line up with 64 KiB pieces, so pieces straddle blocks and disks.
        auto media = fx.media("m.bin", 3 * 1024 * 1024 + 999, 3);
        const auto out = fx.path("movie.torrent").string();
        auto r = cli(config, {"ingest", "movie", media.string(), "--torrent", out, "--piece-size", "64KiB",
                              "--block-size", "96KiB"});
        REQUIRE(r.exit_code == 0);
        lt::torrent_info ti(out);
        MetricsRegistry metrics;
        BlockStore store(fx.config, metrics);
        auto t = store.find("movie");
        REQUIRE(t);
        REQUIRE(static_cast<std::uint64_t>(ti.total_size()) == t->size);
        for (lt::piece_index_t p(0); p < ti.end_piece(); ++p) {
            const auto offset = static_cast<std::uint64_t>(static_cast<int>(p)) * 64 * 1024;
            auto bytes = read_bytes(store, t, offset, static_cast<std::uint64_t>(ti.piece_size(p)));
            lt::hasher h(bytes.data(), static_cast<int>(bytes.size()));
            REQUIRE(h.final() == ti.hash_for_piece(p));
        }
    }
}

TEST_CASE("verify reports missing and corrupt replicas and exits 1, and 0 when clean", "[server][ingest]") {
    StoreFixture fx(4, "rda");
    auto config = fx.write_config();
    auto ingested = fx.ingest("movie", fx.media("m.bin", 1'000'000, 4), 256 * 1024);
    fx.ingest("other", fx.media("o.bin", 300'000, 5), 256 * 1024);
    auto clean = cli(config, {"verify"});
    CHECK(clean.exit_code == 0);
    CHECK_THAT(clean.out, Contains("2 titles, 6 blocks, 12 replicas") && Contains("clean"));

    const auto& b1 = ingested.manifest.blocks[1].replicas[0];
    const auto& b3 = ingested.manifest.blocks[3].replicas[1];
    std::filesystem::remove(fx.disk(b1.disk) / b1.file);
    flip_byte(fx.disk(b3.disk) / b3.file, 5);
    auto dirty = cli(config, {"verify"});
    CHECK(dirty.exit_code == 1);
    CHECK_THAT(dirty.out, Contains("title \"movie\" block 1 replica on disk " + std::to_string(b1.disk)) &&
                              Contains("missing"));
    CHECK_THAT(dirty.out, Contains("title \"movie\" block 3 replica on disk " + std::to_string(b3.disk)) &&
                              Contains("chunk 0 fails its CRC-32C"));
    CHECK_THAT(dirty.out, Contains("2 problems"));
    CHECK(cli(config, {"verify", "other"}).exit_code == 0);  // only the named title is checked
    auto unknown = cli(config, {"verify", "nothing"});
    CHECK(unknown.exit_code == 1);
    CHECK_THAT(unknown.out, Contains("no title named \"nothing\""));
}

TEST_CASE("a killed ingest leaves the old title intact, readable and verifiable", "[server][ingest]") {
    StoreFixture fx(4, "rda");
    auto config = fx.write_config();
    std::filesystem::create_directories(fx.path("logs"));
    const std::uint64_t size = 24 * 1024 * 1024;
    const std::filesystem::path media[2] = {fx.media("a.bin", size, 21), fx.media("b.bin", size, 22)};
    const std::string content[2] = {toast::testing::read_file(media[0]), toast::testing::read_file(media[1])};
    const auto out = fx.path("movie.torrent").string();
    auto ingest_args = [&](int which) {
        return std::vector<std::string>{"--config", config.string(),       "ingest",
                                        "movie",    media[which].string(), "--torrent",
                                        out,        "--block-size",        "256KiB"};
    };
    REQUIRE(toast::testing::run(kBin, ingest_args(0)).exit_code == 0);
    // Time one complete ingest to know the window to kill in; it also makes b.bin current.
    auto start = std::chrono::steady_clock::now();
    REQUIRE(toast::testing::run(kBin, ingest_args(1)).exit_code == 0);
    const auto full = std::chrono::steady_clock::now() - start;
    int current = 1;

    std::mt19937_64 rng(2024);
    int killed_midway = 0;
    // Kill windows are drawn over 90% of the timed ingest. The timing may have come from a slow moment of a
    // loaded machine: a kill that finds the ingest already finished shrinks the window, and a few extra
    // attempts (bounded) make up for kills that came too late.
    auto window = std::chrono::duration_cast<std::chrono::microseconds>(full * 0.9);
    for (int attempt = 0; attempt < 16 && (attempt < 8 || killed_midway < 3); ++attempt) {
        const int next = 1 - current;
        const auto delay = window * static_cast<double>(rng() % 1000) / 1000.0;
        {
            toast::testing::ChildProcess child(kBin, ingest_args(next), fx.path("logs"));
            std::this_thread::sleep_for(delay);
            if (child.running()) {
                ++killed_midway;
            } else {
                window = window * 3 / 4;
            }
            child.kill_hard();  // SIGKILL: no cleanup runs
        }
        INFO("attempt " << attempt << ", killed after " << delay.count() << " us");
        auto verify = cli(config, {"verify"});
        INFO(verify.out);
        CHECK(verify.exit_code == 0);

        MetricsRegistry metrics;
        BlockStore store(fx.config, metrics);
        auto t = store.find("movie");
        REQUIRE(t);
        REQUIRE(t->size == size);
        const auto bytes = read_bytes(store, t, 0, size);
        const bool old_version = bytes == content[current];
        const bool new_version = bytes == content[next];
        REQUIRE((old_version || new_version));
        if (new_version) current = next;  // the kill came after the commit point
    }
    // Uniform kill times over (at most) 90% of a full ingest: most land mid-ingest (kill_hard only signals a
    // live child).
    CHECK(killed_midway >= 3);
    // The next ingest cleans up what the killed ones left: one version directory per disk, no temporaries.
    REQUIRE(toast::testing::run(kBin, ingest_args(1 - current)).exit_code == 0);
    for (std::size_t d = 0; d < 4; ++d) {
        std::size_t versions = 0;
        for (const auto& e : std::filesystem::directory_iterator(fx.disk(d) / "blocks"))
            versions += e.path().filename().string().rfind("movie@", 0) == 0 ? 1 : 0;
        CHECK(versions <= 1);
        for (const auto& e : std::filesystem::directory_iterator(fx.disk(d) / "manifests"))
            CHECK(e.path().filename().string() == "movie.json");
        std::size_t torrents = 0;
        for (const auto& e : std::filesystem::directory_iterator(fx.disk(d) / "torrents")) {
            CHECK(e.path().filename().string().rfind("movie@", 0) == 0);
            ++torrents;
        }
        CHECK(torrents == 1);
    }
    for (const auto& e : std::filesystem::directory_iterator(fx.path("")))
        CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
    CHECK(cli(config, {"verify"}).exit_code == 0);
}

TEST_CASE("ingest keeps the torrent in the store, its file named after the title's container",
          "[server][ingest]") {
    StoreFixture fx(3, "rda");
    auto config = fx.write_config();
    // A transport stream: 188-byte packets, each starting with the sync byte 0x47.
    std::string ts;
    for (int i = 0; i < 4000; ++i)
        ts += '\x47' + std::string(187, static_cast<char>(i));
    std::ofstream(fx.path("capture.bin"), std::ios::binary) << ts;
    const auto out = fx.path("clip.torrent").string();
    // The packets carry no timestamps, so there is no demand trace to read.
    auto r = cli(config, {"ingest", "clip", fx.path("capture.bin").string(), "--torrent", out, "--no-trace"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("torrent " + out + " (file clip.ts, info-hash "));
    const auto bytes = toast::testing::read_file(out);
    auto root = decode(bytes);
    CHECK(root.dict_find_dict("info").dict_find_string_value("name") == "clip.ts");
    CHECK(root.dict_find_dict("toast").dict_find_string_value("title") ==
          "clip");                                                          // the title keeps its name
    CHECK_FALSE(root.dict_find_dict("toast").dict_find("operator_peers"));  // none named
    auto url_list = root.dict_find("url-list");
    REQUIRE(url_list);
    CHECK((url_list.type() == lt::bdecode_node::string_t
               ? std::string(url_list.string_value())
               : std::string(url_list.list_string_value_at(0))) == "http://vod.test:8080/titles/clip");

    // Every disk holds the same copy, named in the manifest with the file name and the info-hash.
    auto manifest = nlohmann::json::parse(toast::testing::read_file(fx.disk(0) / "manifests" / "clip.json"));
    const auto version = manifest["version"].get<std::string>();
    CHECK(manifest["torrent"]["file"] == "torrents/clip@" + version + ".torrent");
    CHECK(manifest["torrent"]["name"] == "clip.ts");
    lt::torrent_info ti(bytes.data(), static_cast<int>(bytes.size()));
    std::ostringstream hash;
    hash << ti.info_hashes().v1;
    CHECK(manifest["torrent"]["info_hash"] == hash.str());
    for (std::size_t d = 0; d < 3; ++d)
        CHECK(toast::testing::read_file(fx.disk(d) / "torrents" / ("clip@" + version + ".torrent")) == bytes);

    // The source's extension names the container when the bytes do not; a name that has it keeps it; no
    // --torrent is needed, the store keeps the torrent.
    auto mp4 = fx.media("film.MP4", 200'000, 9);
    auto r2 = cli(config, {"ingest", "film", mp4.string()});
    REQUIRE(r2.exit_code == 0);
    CHECK_THAT(r2.out, Contains("torrent /torrents/film.torrent (file film.mp4, info-hash "));
    auto r3 = cli(config, {"ingest", "movie.ts", fx.path("capture.bin").string(), "--no-trace"});
    REQUIRE(r3.exit_code == 0);
    CHECK_THAT(r3.out, Contains("(file movie.ts, info-hash"));
    auto r4 = cli(config, {"ingest", "noise", fx.media("noise.bin", 50'000, 10).string()});
    REQUIRE(r4.exit_code == 0);
    CHECK_THAT(r4.out, Contains("(file noise, info-hash"));
    CHECK(cli(config, {"verify"}).exit_code == 0);

    // A re-ingest replaces the torrent with the new version's; an orphan a crash left is removed.
    std::ofstream(fx.disk(1) / "torrents" / "clip@0000000000000000.torrent") << "left by a crash";
    REQUIRE(cli(config, {"ingest", "clip", fx.path("capture.bin").string(), "--no-trace"}).exit_code == 0);
    for (std::size_t d = 0; d < 3; ++d) {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(fx.disk(d) / "torrents"))
            if (e.path().filename().string().rfind("clip@", 0) == 0) names.push_back(e.path().filename());
        REQUIRE(names.size() == 1);
        CHECK(names[0] != "clip@" + version + ".torrent");
    }
}

TEST_CASE("verify checks every disk's copy of the torrent against the manifest", "[server][ingest]") {
    StoreFixture fx(2, "rda");
    auto config = fx.write_config();
    auto ingested = fx.ingest("movie", fx.media("m.bin", 300'000, 4), 128 * 1024);
    REQUIRE(ingested.manifest.torrent);
    const auto file = ingested.manifest.torrent->file;
    CHECK(cli(config, {"verify"}).exit_code == 0);
    std::filesystem::remove(fx.disk(0) / file);
    flip_byte(fx.disk(1) / file, 40);
    auto r = cli(config, {"verify"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out,
               Contains("title \"movie\" torrent on disk 0 (" + (fx.disk(0) / file).string() + "): missing"));
    CHECK_THAT(r.out, Contains("title \"movie\" torrent on disk 1") && Contains("corrupt"));
    CHECK_THAT(r.out, Contains("2 problems"));
}

TEST_CASE("ingest names the operator's peers in the torrent, as clients read them", "[server][ingest]") {
    StoreFixture fx(2, "rda");
    auto config = fx.write_config();
    auto media = fx.media("m.bin", 100'000, 4);
    const auto out = fx.path("m.torrent").string();
    auto r = cli(config, {"ingest", "movie", media.string(), "--torrent", out, "--operator-peer",
                          "192.0.2.7:6881", "--operator-peer", "[2001:db8::7]:7000"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto root = decode(toast::testing::read_file(out));
    auto peers = root.dict_find_dict("toast").dict_find_list("operator_peers");
    REQUIRE(peers);
    REQUIRE(peers.list_size() == 2);
    CHECK(peers.list_string_value_at(0) == "192.0.2.7:6881");
    CHECK(peers.list_string_value_at(1) == "[2001:db8::7]:7000");
    // Outside the info dictionary: the title ingested again without them has the same info-hash.
    auto plain = cli(config, {"ingest", "movie", media.string(), "--torrent", fx.path("p.torrent").string()});
    REQUIRE(plain.exit_code == 0);
    auto hash_of = [](const std::string& bytes) {
        lt::torrent_info ti(bytes.data(), static_cast<int>(bytes.size()));
        std::ostringstream hash;
        hash << ti.info_hashes().v1;
        return hash.str();
    };
    CHECK(hash_of(toast::testing::read_file(out)) ==
          hash_of(toast::testing::read_file(fx.path("p.torrent"))));
}
