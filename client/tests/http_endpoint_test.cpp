// The player endpoint over a fake MediaSource: pieces held in memory, a real StreamWatcher in player mode
// behind on_player_read. The io_context runs on its own thread; the test thread is the player.
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "client/http/player_endpoint.hpp"
#include "test_support.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

constexpr std::uint64_t kPiece = 64 * 1024;
constexpr std::uint64_t kSize = 20 * kPiece + 1234;  // 21 pieces, the last one short

std::string title_bytes() {
    std::string s(kSize, '\0');
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<char>(x);
    }
    return s;
}

class FakeSource : public MediaSource {
  public:
    FakeSource()
        : data_(title_bytes()),
          geometry_(*TitleGeometry::make(Bytes(kSize), Bytes(kPiece), BitRate(8 * kPiece))),
          present_(geometry_.piece_count()),
          watcher_(geometry_, config(), std::chrono::steady_clock::now()) {}

    static StreamWatcherConfig config() {
        StreamWatcherConfig c;
        c.mode = WatcherMode::player;
        c.seek_threshold = Bytes(4 * kPiece);
        return c;
    }

    Bytes size() const override { return Bytes(kSize); }
    std::string content_type() const override { return "video/mp2t"; }
    Bytes available(ByteOffset offset, Bytes max) const override {
        std::uint64_t n = 0;
        auto at = offset.value();
        while (n < max.value() && at + n < kSize) {
            auto p = geometry_.piece_at(ByteOffset(at + n));
            if (!present_.has(p)) break;
            n = geometry_.piece_end(p).value() - at;
        }
        return Bytes(std::min(n, max.value()));
    }
    bool read(ByteOffset offset, std::span<char> out, std::string& error) override {
        if (fail_reads) {
            error = "disk gone";
            return false;
        }
        std::memcpy(out.data(), data_.data() + offset.value(), out.size());
        return true;
    }
    ReadKind on_player_read(ByteOffset offset, Bytes length, bool continuation) override {
        reads.emplace_back(offset.value(), length.value());
        continuations.push_back(continuation);
        auto kind = watcher_.on_player_read(offset, length, std::chrono::steady_clock::now(), continuation);
        kinds.push_back(kind);
        return kind;
    }

    void add(int piece) {
        present_.set(PieceIndex(piece));
        watcher_.on_piece_had(PieceIndex(piece), std::chrono::steady_clock::now());
    }
    void add_all() {
        for (int p = 0; p < geometry_.piece_count().value(); ++p)
            add(p);
    }

    const std::string& data() const { return data_; }
    StreamWatcher& watcher() { return watcher_; }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> reads;
    std::vector<ReadKind> kinds;
    std::vector<bool> continuations;
    bool fail_reads = false;

  private:
    std::string data_;
    TitleGeometry geometry_;
    PieceSet present_;
    StreamWatcher watcher_;
};

// The endpoint on an io_context of its own thread. Everything touching the source or the endpoint after
// start goes through on_io().
class Fixture {
  public:
    explicit Fixture(PlayerEndpointConfig config = make_config()) : endpoint_(io_, source_, config) {
        endpoint_.start();
        thread_ = std::thread([this] { io_.run(); });
    }
    static PlayerEndpointConfig make_config() {
        PlayerEndpointConfig c;
        c.file_name = "title.ts";
        return c;
    }

    template <class F>
    auto on_io(F f) {
        std::packaged_task<decltype(f())()> task(std::move(f));
        auto result = task.get_future();
        asio::post(io_, [&task] { task(); });
        return result.get();
    }
    void add(int piece) {
        on_io([&] {
            source_.add(piece);
            endpoint_.on_data_arrived();
        });
    }
    std::uint16_t port() const { return endpoint_.port(); }
    ~Fixture() {
        on_io([this] { endpoint_.stop(); });
        work_.reset();
        io_.stop();
        thread_.join();
    }
    PlayerEndpointStats stats() {
        return on_io([&] { return endpoint_.stats(); });
    }
    // The stats once `done` holds for them (a response can reach the test before the endpoint's write
    // completion runs), or as they are after 2 s.
    template <class Pred>
    PlayerEndpointStats stats_when(Pred done) {
        auto s = stats();
        for (int i = 0; i < 100 && !done(s); ++i) {
            std::this_thread::sleep_for(20ms);
            s = stats();
        }
        return s;
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
    FakeSource source_;
    PlayerEndpoint endpoint_;
    std::thread thread_;
};

}  // namespace

TEST_CASE("the endpoint serves the whole title byte-exact with 200", "[client][http][endpoint]") {
    Fixture f;
    f.on_io([&] { f.source_.add_all(); });
    CHECK(f.endpoint_.url() == "http://127.0.0.1:" + std::to_string(f.port()) + "/title.ts");
    auto r = testing::http_request(f.port(), "GET", "/title.ts");
    CHECK(r.status == 200);
    CHECK(r.header("content-length") == std::to_string(kSize));
    CHECK(r.header("accept-ranges") == "bytes");
    CHECK(r.header("content-type") == "video/mp2t");
    CHECK(r.body == f.source_.data());
    auto s = f.stats_when([](const PlayerEndpointStats& x) { return x.bytes_sent == kSize; });
    CHECK(s.bytes_sent == kSize);
    CHECK(s.requests == 1);
    CHECK(s.waits == 0);
    CHECK(s.first_byte.has_value());
}

TEST_CASE("ranges are answered with 206 and exact bytes, past the end with 416", "[client][http][endpoint]") {
    Fixture f;
    f.on_io([&] { f.source_.add_all(); });
    auto r = testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=70000-200000"}});
    CHECK(r.status == 206);
    CHECK(r.header("content-range") == "bytes 70000-200000/" + std::to_string(kSize));
    CHECK(r.body == f.source_.data().substr(70000, 130001));
    auto tail = testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=-100"}});
    CHECK(tail.status == 206);
    CHECK(tail.body == f.source_.data().substr(kSize - 100));
    auto past = testing::http_request(f.port(), "GET", "/title.ts",
                                      {{"Range", "bytes=" + std::to_string(kSize) + "-"}});
    CHECK(past.status == 416);
    CHECK(past.header("content-range") == "bytes */" + std::to_string(kSize));
    auto missing = testing::http_request(f.port(), "GET", "/other.ts");
    CHECK(missing.status == 404);
    auto post = testing::http_request(f.port(), "POST", "/title.ts");
    CHECK(post.status == 405);
    CHECK(post.header("allow") == "GET, HEAD");
    CHECK(f.stats().errors == 3);
}

TEST_CASE("HEAD answers the headers at once, even when no byte is present", "[client][http][endpoint]") {
    Fixture f;
    auto r = testing::http_request(f.port(), "HEAD", "/title.ts", {}, 2s);
    CHECK(r.status == 200);
    CHECK(r.header("content-length") == std::to_string(kSize));
    CHECK(r.body.empty());
    auto ranged = testing::http_request(f.port(), "HEAD", "/title.ts", {{"Range", "bytes=10-19"}}, 2s);
    CHECK(ranged.status == 206);
    CHECK(ranged.header("content-length") == "10");
    CHECK(ranged.header("content-range") == "bytes 10-19/" + std::to_string(kSize));
    CHECK(f.stats().waits == 0);
    CHECK(f.on_io([&] { return f.source_.reads.size(); }) == 0);
}

TEST_CASE("a read of missing bytes waits, makes the piece urgent, and completes exactly when it arrives",
          "[client][http][endpoint]") {
    Fixture f;
    f.add(0);
    f.add(1);
    auto pending = std::async(std::launch::async, [&] {
        return testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=100000-300000"}}, 10s);
    });
    // Piece 1 is served, then the read of piece 2 waits: nothing may be answered before it is present.
    REQUIRE(testing::wait_for_tcp_port(f.port(), 2s));
    bool waiting = false;
    for (int i = 0; i < 100 && !waiting; ++i) {
        std::this_thread::sleep_for(20ms);
        waiting = f.stats().waits == 1;
    }
    REQUIRE(waiting);
    CHECK(pending.wait_for(200ms) == std::future_status::timeout);
    CHECK(f.on_io([&] { return f.source_.watcher().blocked_reads(); }) ==
          std::vector<PieceIndex>{PieceIndex(2)});
    f.add(2);
    f.add(3);
    f.add(4);
    REQUIRE(pending.wait_for(5s) == std::future_status::ready);
    auto r = pending.get();
    CHECK(r.status == 206);
    CHECK(r.body == f.source_.data().substr(100000, 200001));
    CHECK(f.on_io([&] { return f.source_.watcher().blocked_reads(); }).empty());
}

TEST_CASE("a read still missing after the wait timeout gets 503 before the header, a close after it",
          "[client][http][endpoint]") {
    auto config = Fixture::make_config();
    config.wait_timeout = 300ms;
    Fixture f(config);
    auto before = std::chrono::steady_clock::now();
    auto r = testing::http_request(f.port(), "GET", "/title.ts", {}, 5s);
    auto took = std::chrono::steady_clock::now() - before;
    CHECK(r.status == 503);
    CHECK(r.header("retry-after") == "1");
    CHECK(r.body.find("byte 0 did not arrive within 300 ms") != std::string::npos);
    CHECK(took >= 300ms);
    CHECK(took < 3s);

    f.add(0);
    auto raw = testing::raw_exchange(f.port(), "GET /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n", 5s);
    auto split = raw.find("\r\n\r\n");
    REQUIRE(split != std::string::npos);
    CHECK(raw.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    // The first piece, then nothing: a short body, never filler bytes.
    CHECK(raw.substr(split + 4) == f.source_.data().substr(0, kPiece));
    CHECK(f.stats().wait_timeouts == 2);
}

TEST_CASE("keep-alive connections answer pipelined requests in order", "[client][http][endpoint]") {
    Fixture f;
    f.on_io([&] { f.source_.add_all(); });
    auto raw = testing::raw_exchange(
        f.port(),
        "GET /title.ts HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-9\r\n\r\n"
        "HEAD /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n"
        "GET /title.ts HTTP/1.1\r\nHost: localhost\r\nRange: bytes=20-29\r\nConnection: close\r\n\r\n",
        5s);
    auto first = raw.find("HTTP/1.1 206");
    auto second = raw.find("HTTP/1.1 200", first + 1);
    auto third = raw.find("HTTP/1.1 206", second + 1);
    REQUIRE(first == 0);
    REQUIRE(second != std::string::npos);
    REQUIRE(third != std::string::npos);
    CHECK(raw.substr(raw.find("\r\n\r\n") + 4, 10) == f.source_.data().substr(0, 10));
    CHECK(raw.substr(raw.size() - 10) == f.source_.data().substr(20, 10));
    CHECK(f.stats().requests == 3);
}

TEST_CASE("malformed and oversized requests get 400 and 431", "[client][http][endpoint]") {
    Fixture f;
    auto bad = testing::raw_exchange(f.port(), "GARBAGE\r\n\r\n", 5s);
    CHECK(bad.rfind("HTTP/1.1 400 Bad Request", 0) == 0);
    auto big = testing::raw_exchange(
        f.port(),
        "GET /title.ts HTTP/1.1\r\nHost: localhost\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n", 5s);
    CHECK(big.rfind("HTTP/1.1 431", 0) == 0);
}

TEST_CASE("player reads drive the StreamWatcher: sequential reads, then a far read is a seek",
          "[client][http][endpoint]") {
    Fixture f;
    f.on_io([&] { f.source_.add_all(); });
    auto a = testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=0-199999"}});
    CHECK(a.status == 206);
    auto b = testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=200000-299999"}});
    CHECK(b.status == 206);
    CHECK(f.stats().seek_latencies.empty());
    auto c = testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=1200000-"}});
    CHECK(c.body == f.source_.data().substr(1200000));
    auto kinds = f.on_io([&] { return f.source_.kinds; });
    REQUIRE(kinds.size() >= 3);
    CHECK(kinds.front() == ReadKind::first);
    CHECK(std::count(kinds.begin(), kinds.end(), ReadKind::seek) == 1);
    CHECK(f.on_io([&] { return f.source_.watcher().seeks(); }) == 1);
    auto expected = 200000 + 100000 + (kSize - 1200000);
    auto s = f.stats_when([&](const PlayerEndpointStats& x) { return x.bytes_sent == expected; });
    CHECK(s.bytes_sent == expected);
    CHECK(s.seek_latencies.size() == 1);
    CHECK(s.first_byte.has_value());
    // Every byte sent was reported as a read, in chunks no larger than the configured size.
    auto reads = f.on_io([&] { return f.source_.reads; });
    std::uint64_t total = 0;
    for (auto [off, len] : reads) {
        CHECK(len <= Fixture::make_config().chunk_size);
        total += len;
    }
    CHECK(total == s.bytes_sent);
    // Three requests: the first read of each is not a continuation, every later one is.
    auto cont = f.on_io([&] { return f.source_.continuations; });
    CHECK(std::count(cont.begin(), cont.end(), false) == 3);
    CHECK_FALSE(cont.front());
}

TEST_CASE("a seek to missing bytes measures seek-to-data from the request to the first byte",
          "[client][http][endpoint]") {
    Fixture f;
    f.add(0);
    auto a = testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=0-1000"}});
    CHECK(a.status == 206);
    auto pending = std::async(std::launch::async, [&] {
        return testing::http_request(f.port(), "GET", "/title.ts", {{"Range", "bytes=1000000-1000099"}}, 10s);
    });
    bool waiting = false;
    for (int i = 0; i < 100 && !waiting; ++i) {
        std::this_thread::sleep_for(20ms);
        waiting = f.stats().waits == 1;
    }
    REQUIRE(waiting);
    std::this_thread::sleep_for(150ms);
    CHECK(f.on_io([&] { return f.source_.watcher().state(); }) == PlaybackState::seeking);
    f.add(15);  // 1000000 / 65536 = piece 15
    auto r = pending.get();
    CHECK(r.body == f.source_.data().substr(1000000, 100));
    auto s = f.stats();
    REQUIRE(s.seek_latencies.size() == 1);
    CHECK(s.seek_latencies[0] >= 150ms);
    CHECK(s.seek_latencies[0] < 5s);
    CHECK(f.on_io([&] { return f.source_.watcher().playhead_piece(); }) == PieceIndex(15));
}

TEST_CASE("a failed read closes the connection instead of sending anything", "[client][http][endpoint]") {
    Fixture f;
    f.on_io([&] {
        f.source_.add_all();
        f.source_.fail_reads = true;
    });
    auto raw = testing::raw_exchange(f.port(), "GET /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n", 5s);
    CHECK(raw.empty());
}

TEST_CASE("connections beyond the limit get 503, and stop closes the rest", "[client][http][endpoint]") {
    auto config = Fixture::make_config();
    config.max_connections = 1;
    Fixture f(config);
    auto waiting = std::async(std::launch::async, [&] {
        return testing::raw_exchange(f.port(), "GET /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n", 10s);
    });
    bool held = false;
    for (int i = 0; i < 100 && !held; ++i) {
        std::this_thread::sleep_for(20ms);
        held = f.stats().waits == 1;
    }
    REQUIRE(held);
    auto second = testing::raw_exchange(f.port(), "GET /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n", 5s);
    CHECK(second.rfind("HTTP/1.1 503", 0) == 0);
    CHECK(second.find("too many connections") != std::string::npos);
    f.on_io([&] { f.endpoint_.stop(); });
    REQUIRE(waiting.wait_for(5s) == std::future_status::ready);
    CHECK(waiting.get().empty());
    CHECK(f.on_io([&] { return f.endpoint_.connections(); }) == 0);
}

TEST_CASE("an address that cannot be bound is a clear error", "[client][http][endpoint]") {
    asio::io_context io;
    FakeSource source;
    PlayerEndpointConfig c;
    c.listen = Endpoint{"not-an-ip", 0};
    PlayerEndpoint e(io, source, c);
    CHECK_THROWS_WITH(e.start(), Catch::Contains("'not-an-ip' is not an IP address"));
    PlayerEndpointConfig d;
    d.listen = Endpoint{"192.0.2.1", 1};
    PlayerEndpoint g(io, source, d);
    CHECK_THROWS_WITH(g.start(), Catch::Contains("cannot serve the player on 192.0.2.1:1"));
}

TEST_CASE("a Host that does not name the endpoint gets 421, broken framing 400, a POST with a body 405",
          "[client][http][endpoint]") {
    Fixture f;
    f.on_io([&] { f.source_.add_all(); });
    auto ask = [&](const std::string& head) { return testing::raw_exchange(f.port(), head, 5s); };
    auto rebound =
        ask("GET /title.ts HTTP/1.1\r\nHost: evil.example:" + std::to_string(f.port()) + "\r\n\r\n");
    CHECK(rebound.rfind("HTTP/1.1 421 Misdirected Request\r\n", 0) == 0);
    CHECK(rebound.find("Connection: close") != std::string::npos);
    CHECK(rebound.find(f.source_.data().substr(0, 64)) == std::string::npos);
    CHECK(ask("GET /title.ts HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK(ask("GET /title.ts HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n")
              .rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK(ask("GET /title.ts HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n")
              .rfind("HTTP/1.1 400 ", 0) == 0);
    // A body is not read: the answer is 405 with Allow, and the connection closes (a body left in the
    // stream would be read as the next request).
    auto post = ask("POST /title.ts HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello");
    CHECK(post.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0) == 0);
    CHECK(post.find("Allow: GET, HEAD\r\n") != std::string::npos);
    CHECK(post.find("Connection: close") != std::string::npos);
    auto chunked =
        ask("POST /title.ts HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: "
            "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    CHECK(chunked.rfind("HTTP/1.1 405 ", 0) == 0);
    // HTTP/1.0 without Host, and the bound address with its port, are served.
    CHECK(ask("GET /title.ts HTTP/1.0\r\nRange: bytes=0-3\r\n\r\n").rfind("HTTP/1.1 206 ", 0) == 0);
    auto own = ask("GET /title.ts HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(f.port()) +
                   "\r\nRange: bytes=0-3\r\nConnection: close\r\n\r\n");
    CHECK(own.rfind("HTTP/1.1 206 ", 0) == 0);
}

namespace {

// A connection that sends a request and never reads: its receive buffer is kept small so the endpoint's
// writes stall.
std::unique_ptr<asio::ip::tcp::socket> connect_and_never_read(asio::io_context& io, std::uint16_t port,
                                                              const std::string& request) {
    auto s = std::make_unique<asio::ip::tcp::socket>(io);
    s->open(asio::ip::tcp::v4());
    s->set_option(asio::socket_base::receive_buffer_size(4096));
    s->connect({asio::ip::make_address("127.0.0.1"), port});
    asio::write(*s, asio::buffer(request));
    return s;
}

}  // namespace

TEST_CASE("connections that ask and never read cannot lock the player out", "[client][http][endpoint]") {
    auto config = Fixture::make_config();
    config.stalled_after = 300ms;
    Fixture f(config);
    f.on_io([&] { f.source_.add_all(); });
    asio::io_context client_io;
    std::vector<std::unique_ptr<asio::ip::tcp::socket>> hogs;
    for (std::size_t i = 0; i < config.max_connections; ++i)
        hogs.push_back(
            connect_and_never_read(client_io, f.port(), "GET /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    REQUIRE(f.stats_when([&](const PlayerEndpointStats& s) {
                 return s.requests == config.max_connections;
             }).requests == config.max_connections);
    std::this_thread::sleep_for(400ms);
    auto r = testing::http_request(f.port(), "GET", "/title.ts", {}, 10s);
    CHECK(r.status == 200);
    CHECK(r.body == f.source_.data());
    auto s = f.stats();
    CHECK(s.evicted >= 1);
}

TEST_CASE("a write the reader does not take within write_timeout closes the connection",
          "[client][http][endpoint]") {
    auto config = Fixture::make_config();
    config.write_timeout = 500ms;
    config.send_buffer = 4096;
    Fixture f(config);
    f.on_io([&] { f.source_.add_all(); });
    asio::io_context client_io;
    auto hog =
        connect_and_never_read(client_io, f.port(), "GET /title.ts HTTP/1.1\r\nHost: localhost\r\n\r\n");
    auto s = f.stats_when([](const PlayerEndpointStats& x) { return x.write_timeouts == 1; });
    CHECK(s.write_timeouts == 1);
    CHECK(s.bytes_sent < kSize);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = f.on_io([&] { return f.endpoint_.connections(); }) == 0;
        if (!gone) std::this_thread::sleep_for(20ms);
    }
    CHECK(gone);
}
