// The real toast-server executable: ingest with every placement policy, serve, fetch ranges, fail disks.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <random>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <libtorrent/hasher.hpp>
#include <libtorrent/torrent_info.hpp>
#include <nlohmann/json.hpp>

#include "server/core/fd_budget.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
namespace tt = toast::testing;

namespace {

constexpr std::uint64_t kBlock = 64 * 1024;
constexpr std::size_t kDisks = 4;

// A store of four disk directories with one ingested title, and a running server over it.
class Deployment {
  public:
    explicit Deployment(const std::string& policy, nlohmann::json extra = nlohmann::json::object()) {
        for (std::size_t d = 0; d < kDisks; ++d)
            std::filesystem::create_directory(dir_ / ("disk" + std::to_string(d)));
        port_ = tt::free_tcp_port();
        nlohmann::json config = {{"listen", "127.0.0.1:" + std::to_string(port_)},
                                 {"disks", nlohmann::json::array()},
                                 {"policy", policy},
                                 {"block_size", "64KiB"},
                                 {"piece_size", "32KiB"}};
        for (std::size_t d = 0; d < kDisks; ++d) {
            nlohmann::json disk = {{"path", (dir_ / ("disk" + std::to_string(d))).string()}};
            if (extra.contains("offline_disk") && extra["offline_disk"] == d)
                disk["fault"] = {{"offline", true}};
            config["disks"].push_back(disk);
        }
        std::ofstream(dir_ / "config.json") << config.dump(2);
        // Not a multiple of the block or piece size, so the last block and piece are short.
        tt::write_random_file(dir_ / "source.bin", 40 * kBlock + 12345, 42);
        source_ = tt::read_file(dir_ / "source.bin");
        auto ingest = tt::run(TOAST_SERVER_BIN,
                              {"--config", config_path(), "ingest", "movie", (dir_ / "source.bin").string(),
                               "--torrent", torrent_path(), "--announce", "http://127.0.0.1:1/announce"});
        INFO(ingest.out << ingest.err);
        REQUIRE(ingest.exit_code == 0);
        start();
    }

    void start() {
        server_ = std::make_unique<tt::ChildProcess>(
            TOAST_SERVER_BIN, std::vector<std::string>{"--config", config_path(), "serve"}, dir_.path());
        REQUIRE(tt::wait_for_tcp_port(port_, 10s));
    }

    tt::HttpResponse range(std::uint64_t first, std::uint64_t last) {
        return tt::http_request(port_, "GET", "/titles/movie",
                                {{"Range", "bytes=" + std::to_string(first) + "-" + std::to_string(last)}});
    }

    void set_offline(std::size_t disk, bool offline) {
        auto body = std::string("{\"offline\":") + (offline ? "true" : "false") + "}";
        auto out = tt::raw_exchange(port_, "POST /admin/disks/" + std::to_string(disk) +
                                               "/fault HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
                                               "Content-Type: application/json\r\n"
                                               "Content-Length: " +
                                               std::to_string(body.size()) + "\r\n\r\n" + body);
        REQUIRE(out.rfind("HTTP/1.1 200 OK", 0) == 0);
    }

    std::size_t blocks() const { return (source_.size() + kBlock - 1) / kBlock; }
    std::pair<std::uint64_t, std::uint64_t> block_range(std::size_t b) const {
        return {b * kBlock, std::min<std::uint64_t>(source_.size(), (b + 1) * kBlock) - 1};
    }
    // For each block, fetch it: true when served byte-exactly, false when answered 503. Anything else fails.
    std::vector<bool> scan_blocks() {
        std::vector<bool> served;
        for (std::size_t b = 0; b < blocks(); ++b) {
            auto [first, last] = block_range(b);
            auto r = range(first, last);
            INFO("block " << b);
            if (r.status == 503) {
                CHECK_THAT(r.body, Contains("movie"));
                // The whole block is named, so that a client asks its peers for every piece in it.
                CHECK(r.header("toast-unavailable") ==
                      "bytes " + std::to_string(first) + "-" + std::to_string(last));
                served.push_back(false);
            } else {
                CHECK(r.status == 206);
                CHECK(r.body == source_.substr(first, last - first + 1));
                served.push_back(true);
            }
        }
        return served;
    }

    std::filesystem::path disk(std::size_t d) const { return dir_ / ("disk" + std::to_string(d)); }
    std::string config_path() const { return (dir_ / "config.json").string(); }
    std::string torrent_path() const { return (dir_ / "movie.torrent").string(); }
    std::uint16_t port() const { return port_; }
    const std::string& source() const { return source_; }
    tt::ChildProcess& server() { return *server_; }

  private:
    tt::TempDir dir_;
    std::uint16_t port_ = 0;
    std::string source_;
    std::unique_ptr<tt::ChildProcess> server_;
};

}  // namespace

TEST_CASE("for every policy, random ranges are byte-identical to the source", "[server][integration]") {
    for (const char* policy : {"naive", "raid0", "raid1", "random", "rda"}) {
        DYNAMIC_SECTION(policy) {
            Deployment d(policy);
            const auto& src = d.source();
            std::mt19937_64 rng(7);
            for (int i = 0; i < 40; ++i) {
                std::uint64_t first = rng() % src.size();
                std::uint64_t len = 1 + rng() % (3 * kBlock);  // often spans several blocks
                std::uint64_t last = std::min<std::uint64_t>(src.size() - 1, first + len - 1);
                auto r = d.range(first, last);
                INFO(policy << " bytes " << first << "-" << last);
                REQUIRE(r.status == 206);
                CHECK(r.body == src.substr(first, last - first + 1));
            }
            auto whole = tt::http_request(d.port(), "GET", "/titles/movie");
            CHECK(whole.status == 200);
            CHECK(whole.body == src);
            CHECK(d.server().stop(SIGTERM, 10s) == std::optional<int>(0));
        }
    }
}

TEST_CASE("serve raises its soft descriptor limit for open files and connections and logs what it got",
          "[server][integration]") {
    rlimit saved{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
    struct Restore {
        rlimit limit;
        ~Restore() { ::setrlimit(RLIMIT_NOFILE, &limit); }
    } restore{saved};
    // The server inherits a soft limit of 256; the defaults want 4096 files + 1024 connections + a reserve.
    rlimit low = saved;
    low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 256);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    Deployment d("rda");
    const std::uint64_t hard = saved.rlim_max == RLIM_INFINITY ? UINT64_MAX : saved.rlim_max;
    const auto want = toast::server::wanted_nofile_limit(4096, 1024, low.rlim_cur, hard);
    const auto files = toast::server::open_file_budget(4096, 1024, want);

    std::ifstream limits("/proc/" + std::to_string(d.server().pid()) + "/limits");
    std::string line, soft;
    while (std::getline(limits, line))
        if (line.rfind("Max open files", 0) == 0) soft = line.substr(26, 21);
    CHECK_THAT(soft, Contains(std::to_string(want)));
    CHECK(d.range(0, 99).body == d.source().substr(0, 100));
    CHECK(d.server().stop(SIGTERM, 10s) == std::optional<int>(0));
    CHECK_THAT(d.server().stderr_text(), Contains("descriptor limit " + std::to_string(want)) &&
                                             Contains(std::to_string(files) + " open block files"));
}

TEST_CASE("with one disk offline in the config, rda and raid1 serve every byte", "[server][integration]") {
    for (const char* policy : {"rda", "raid1"}) {
        DYNAMIC_SECTION(policy) {
            Deployment d(policy, {{"offline_disk", 1}});
            auto served = d.scan_blocks();
            CHECK(std::count(served.begin(), served.end(), true) == static_cast<long>(d.blocks()));
            CHECK(tt::http_request(d.port(), "GET", "/titles/movie").body == d.source());
        }
    }
}

TEST_CASE("with one disk offline in the config, raid0 answers 503 for its blocks only",
          "[server][integration]") {
    Deployment d("raid0", {{"offline_disk", 2}});
    auto served = d.scan_blocks();
    auto lost = std::count(served.begin(), served.end(), false);
    // Striping over four disks puts a quarter of the blocks on the offline one.
    CHECK(lost == static_cast<long>((d.blocks() + 1) / 4));
    // A few bytes inside a lost block: the answer names that whole block.
    const auto b = static_cast<std::size_t>(std::find(served.begin(), served.end(), false) - served.begin());
    REQUIRE(b < served.size());
    const auto [first, last] = d.block_range(b);
    const auto part = d.range(first + 100, first + 1099);
    CHECK(part.status == 503);
    CHECK(part.header("toast-unavailable") == "bytes " + std::to_string(first) + "-" + std::to_string(last));
    // The blocks it can read carry no such header.
    const auto good =
        static_cast<std::size_t>(std::find(served.begin(), served.end(), true) - served.begin());
    REQUIRE(good < served.size());
    const auto [gfirst, glast] = d.block_range(good);
    CHECK(d.range(gfirst, glast).header("toast-unavailable").empty());
    CHECK(d.server().stop(SIGTERM, 10s) == std::optional<int>(0));
    CHECK_THAT(d.server().stderr_text(), Contains("503") && Contains("movie"));
}

TEST_CASE(
    "taking disks offline through the admin endpoint: replicated policies lose nothing, single-copy "
    "policies lose exactly the blocks on that disk",
    "[server][integration][admin]") {
    for (const char* policy : {"naive", "raid0", "random", "rda", "raid1"}) {
        DYNAMIC_SECTION(policy) {
            Deployment d(policy);
            bool replicated = std::string(policy) == "rda" || std::string(policy) == "raid1";
            std::vector<int> lost_in(d.blocks(), 0);  // in how many single-disk outages each block was lost
            for (std::size_t disk = 0; disk < kDisks; ++disk) {
                d.set_offline(disk, true);
                auto served = d.scan_blocks();
                for (std::size_t b = 0; b < served.size(); ++b)
                    lost_in[b] += served[b] ? 0 : 1;
                d.set_offline(disk, false);
            }
            if (replicated) {
                CHECK(std::count(lost_in.begin(), lost_in.end(), 0) == static_cast<long>(d.blocks()));
            } else {
                // Each block has one copy, so exactly one outage loses it.
                CHECK(std::count(lost_in.begin(), lost_in.end(), 1) == static_cast<long>(d.blocks()));
            }
            // Everything is back.
            CHECK(tt::http_request(d.port(), "GET", "/titles/movie").body == d.source());
        }
    }
}

TEST_CASE("the torrent written by ingest verifies against the served bytes", "[server][integration]") {
    Deployment d("rda");
    lt::torrent_info ti(d.torrent_path());
    REQUIRE(ti.total_size() == static_cast<std::int64_t>(d.source().size()));
    REQUIRE(ti.num_pieces() > 10);
    auto served = tt::http_request(d.port(), "GET", "/titles/movie").body;
    REQUIRE(served.size() == d.source().size());
    int verified = 0;
    for (lt::piece_index_t p(0); p < ti.end_piece(); ++p) {
        auto offset =
            static_cast<std::size_t>(static_cast<int>(p)) * static_cast<std::size_t>(ti.piece_length());
        auto size = static_cast<std::size_t>(ti.piece_size(p));
        // Fetch each piece as a client would, by range, and hash it.
        auto r = d.range(offset, offset + size - 1);
        REQUIRE(r.status == 206);
        lt::hasher h(r.body.data(), static_cast<int>(r.body.size()));
        const auto digest = h.final();
        CHECK(digest == ti.hash_for_piece(p));
        verified += digest == ti.hash_for_piece(p);
    }
    CHECK(verified == ti.num_pieces());
    bool web_seed = false;
    for (const auto& ws : ti.web_seeds())
        web_seed = web_seed || ws.url.find("/titles/movie") != std::string::npos;
    CHECK(web_seed);
}

TEST_CASE("an empty file is ingested without a torrent and served as a zero-length representation",
          "[server][integration]") {
    toast::testing::TempDir dir;
    const auto port = tt::free_tcp_port();
    nlohmann::json config = {{"listen", "127.0.0.1:" + std::to_string(port)},
                             {"disks", nlohmann::json::array()},
                             {"policy", "rda"}};
    for (std::size_t d = 0; d < kDisks; ++d) {
        std::filesystem::create_directory(dir / ("disk" + std::to_string(d)));
        config["disks"].push_back((dir / ("disk" + std::to_string(d))).string());
    }
    std::ofstream(dir / "config.json") << config.dump();
    std::ofstream(dir / "empty.bin").flush();
    std::ofstream(dir / "empty.torrent") << "a torrent of an older version";
    const auto config_path = (dir / "config.json").string();
    auto ingest =
        tt::run(TOAST_SERVER_BIN, {"--config", config_path, "ingest", "empty", (dir / "empty.bin").string(),
                                   "--torrent", (dir / "empty.torrent").string()});
    INFO(ingest.out << ingest.err);
    REQUIRE(ingest.exit_code == 0);
    CHECK_THAT(ingest.out, Contains("0 bytes") && Contains("served over HTTP only"));
    CHECK_FALSE(std::filesystem::exists(dir / "empty.torrent"));
    auto verify = tt::run(TOAST_SERVER_BIN, {"--config", config_path, "verify", "empty"});
    CHECK(verify.exit_code == 0);

    tt::ChildProcess server(TOAST_SERVER_BIN, std::vector<std::string>{"--config", config_path, "serve"},
                            dir.path());
    REQUIRE(tt::wait_for_tcp_port(port, 10s));
    // RFC 9110: the whole representation is 200 with Content-Length 0; no range of it is satisfiable (416
    // with bytes */0), so a suffix range is 416 too; HEAD has the same head.
    auto whole = tt::raw_exchange(port, "GET /titles/empty HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    CHECK(whole.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK_THAT(whole, Contains("Content-Length: 0\r\n") && Contains("Accept-Ranges: bytes\r\n"));
    CHECK(whole.substr(whole.find("\r\n\r\n") + 4).empty());
    auto head = tt::http_request(port, "HEAD", "/titles/empty");
    CHECK(head.status == 200);
    CHECK(head.header("content-length") == "0");
    for (const char* range : {"bytes=0-", "bytes=0-0", "bytes=-1"}) {
        auto r = tt::http_request(port, "GET", "/titles/empty", {{"Range", range}});
        INFO(range);
        CHECK(r.status == 416);
        CHECK(r.header("content-range") == "bytes */0");
    }
    // The connection stays usable after a zero-length body: two requests pipelined on one connection.
    auto two = tt::raw_exchange(port,
                                "GET /titles/empty HTTP/1.1\r\nHost: t\r\n\r\n"
                                "GET /titles/empty HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    CHECK(two.find("HTTP/1.1 200 OK", 1) != std::string::npos);
    auto stream = tt::http_request(port, "GET", "/stream/empty");
    CHECK(stream.status == 200);
    CHECK(stream.body.empty());
}

TEST_CASE("junk, oversized headers and traversal get 4xx and the real server keeps serving",
          "[server][integration]") {
    Deployment d("rda");
    auto junk = tt::raw_exchange(d.port(), std::string("\x00\x01\x02garbage\r\n\r\n", 14));
    CHECK(junk.rfind("HTTP/1.1 400", 0) == 0);
    auto big = tt::raw_exchange(
        d.port(), "GET /titles/movie HTTP/1.1\r\nHost: t\r\nX: " + std::string(20000, 'a') + "\r\n\r\n");
    CHECK(big.rfind("HTTP/1.1 431", 0) == 0);
    for (const char* t : {"/titles/..%2f..%2fconfig.json", "/titles/../config.json", "/titles/%2e%2e",
                          "/titles/..%2fdisk0", "/titles/movie%00", "/titles/.manifest"}) {
        INFO(t);
        auto r = tt::http_request(d.port(), "GET", t);
        CHECK(r.status >= 400);
        CHECK(r.status < 500);
        CHECK(r.body.find("\"disks\"") == std::string::npos);
    }
    CHECK(tt::http_request(d.port(), "GET", "/titles/nope").status == 404);
    auto r = d.range(0, 99);
    CHECK(r.body == d.source().substr(0, 100));
    CHECK(d.server().running());
}

TEST_CASE("SIGTERM closes idle keep-alive connections and the server exits 0 promptly",
          "[server][integration]") {
    Deployment d("rda");
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::socket sock(ioc);
    sock.connect({boost::asio::ip::make_address("127.0.0.1"), d.port()});
    boost::asio::write(sock, boost::asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")));
    char buf[4096];
    auto n = sock.read_some(boost::asio::buffer(buf));
    CHECK(std::string(buf, n).rfind("HTTP/1.1 200 OK", 0) == 0);
    auto t0 = std::chrono::steady_clock::now();
    CHECK(d.server().stop(SIGTERM, 10s) == std::optional<int>(0));
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);
    CHECK_THAT(d.server().stderr_text(), Contains("shutting down"));
    boost::system::error_code ec;
    sock.read_some(boost::asio::buffer(buf), ec);
    CHECK(ec == boost::asio::error::eof);
}

TEST_CASE(
    "a replica that rots after the server verified it is found when a client asks with no-cache, and "
    "is not trusted again",
    "[server][integration][verify]") {
    Deployment d("rda");
    auto manifest = nlohmann::json::parse(tt::read_file(d.disk(0) / "manifests" / "movie.json"));
    const auto& replicas = manifest["blocks"][0]["replicas"];
    REQUIRE(replicas.size() == 2);
    const auto a = replicas[0]["disk"].get<std::size_t>();
    const auto b = replicas[1]["disk"].get<std::size_t>();
    const auto rotten = d.disk(a) / replicas[0]["file"].get<std::string>();
    const auto want = d.source().substr(0, 1000);

    // Both replicas of block 0 are read, and so verified, once each.
    d.set_offline(b, true);
    REQUIRE(d.range(0, 999).body == want);
    d.set_offline(b, false);
    d.set_offline(a, true);
    REQUIRE(d.range(0, 999).body == want);
    d.set_offline(a, false);

    // Bit rot on a's copy: same inode, size and modification time, so nothing about the file says it changed.
    const auto mtime = std::filesystem::last_write_time(rotten);
    {
        std::fstream f(rotten, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(500);
        f.put(static_cast<char>(~want[500]));
    }
    std::filesystem::last_write_time(rotten, mtime);

    auto no_cache = [&](const std::string& header) {
        return tt::http_request(d.port(), "GET", "/titles/movie",
                                {{"Range", "bytes=0-999"}, {header, "no-cache"}});
    };
    // Only a can serve: re-checked, it is corrupt, and there is no other copy.
    d.set_offline(b, true);
    auto refused = no_cache("Cache-Control");
    CHECK(refused.status == 503);
    // The failure is remembered: a plain request re-checks a's copy too instead of trusting the old check.
    CHECK(d.range(0, 999).status == 503);
    d.set_offline(b, false);
    // With b back, both a revalidating and a plain request get the intact bytes.
    auto good = no_cache("Pragma");
    CHECK(good.status == 206);
    CHECK(good.body == want);
    CHECK(d.range(0, 999).body == want);
    auto metrics = tt::http_request(d.port(), "GET", "/metrics").body;
    const auto name = "toast_disk_checksum_failures_total{disk=\"" + std::to_string(a) + "\"} ";
    const auto at = metrics.find(name);
    REQUIRE(at != std::string::npos);
    // Found twice: by the revalidating request and by the plain one after it.
    CHECK(std::stoi(metrics.substr(at + name.size())) == 2);
    CHECK(d.server().stop(SIGTERM, 10s) == std::optional<int>(0));
}
