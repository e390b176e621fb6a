#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>

#include <boost/asio/io_context.hpp>

#include "client/lt/http_fetcher.hpp"
#include "lt_range_server.hpp"

using namespace std::chrono_literals;
using toast::client::ByteOffset;
using toast::client::FetcherConfig;
using toast::client::FetchFault;
using toast::client::HttpFetcher;
using toast::client::PieceIndex;
using toast::client::PieceRequest;
using toast::client::UnavailableBytes;
using toast::client::testing::RangeServer;

namespace {

constexpr std::uint32_t kPiece = 16 * 1024;

std::vector<char> title_bytes(std::size_t size) {
    std::vector<char> out(size);
    std::mt19937_64 rng(42);
    for (auto& c : out)
        c = static_cast<char>(rng() & 0xff);
    return out;
}

PieceRequest piece(int i, std::size_t size) {
    auto offset = static_cast<std::uint64_t>(i) * kPiece;
    return {.piece = PieceIndex(i),
            .offset = offset,
            .length = static_cast<std::uint32_t>(std::min<std::uint64_t>(kPiece, size - offset))};
}

std::vector<toast::client::ServerUrl> urls(const std::vector<std::string>& texts) {
    std::vector<toast::client::ServerUrl> out;
    for (const auto& t : texts)
        out.push_back(*toast::client::parse_http_url(t));
    return out;
}

// Runs `io` until `done` or `limit` passes.
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        io.restart();
        io.run_for(20ms);
    }
    return done();
}

FetcherConfig fast_retries() {
    FetcherConfig c;
    c.timeout = 2s;
    c.retry_initial = 50ms;
    c.retry_max = 400ms;
    c.server_backoff = {50ms, 400ms};
    return c;
}

}  // namespace

TEST_CASE("the fetcher gets exactly each piece's bytes over kept-alive connections", "[client][fetcher]") {
    auto data = title_bytes(20 * kPiece + 1234);
    RangeServer server("/titles/t.bin", data);
    boost::asio::io_context io;
    std::map<PieceIndex, std::vector<char>> got;
    HttpFetcher fetcher(io, urls({server.url()}), fast_retries(),
                        [&](const PieceRequest& r, std::vector<char> bytes, std::size_t) {
                            got[r.piece] = std::move(bytes);
                        });
    for (int i = 0; i <= 20; ++i)
        REQUIRE(fetcher.fetch(piece(i, data.size())));
    REQUIRE(run_until(
        io, [&] { return got.size() == 21; }, 10s));
    for (int i = 0; i <= 20; ++i) {
        auto r = piece(i, data.size());
        std::vector<char> expected(data.begin() + static_cast<long>(r.offset),
                                   data.begin() + static_cast<long>(r.offset + r.length));
        CHECK(got[PieceIndex(i)] == expected);
    }
    CHECK(got[PieceIndex(20)].size() == 1234);
    CHECK(server.requests == 21);
    CHECK(server.connections <= 2);  // two connections per server, reused
    CHECK(fetcher.stats().failures == 0);
    CHECK(fetcher.stats().bytes_received == data.size());
}

TEST_CASE("the fetcher never has the same piece queued or in flight twice", "[client][fetcher]") {
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    boost::asio::io_context io;
    int delivered = 0;
    HttpFetcher fetcher(io, urls({server.url()}), fast_retries(),
                        [&](const PieceRequest&, std::vector<char>, std::size_t) { ++delivered; });
    CHECK(fetcher.fetch(piece(1, data.size())));
    CHECK_FALSE(fetcher.fetch(piece(1, data.size())));
    CHECK(fetcher.busy(PieceIndex(1)));
    REQUIRE(run_until(
        io, [&] { return delivered == 1; }, 5s));
    CHECK_FALSE(fetcher.busy(PieceIndex(1)));
    CHECK(fetcher.fetch(piece(1, data.size())));  // done: may be asked again
    REQUIRE(run_until(
        io, [&] { return delivered == 2; }, 5s));
    CHECK(server.requests == 2);
}

TEST_CASE("HTTP errors are retried with backoff until the piece arrives", "[client][fetcher]") {
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    server.fail_first = 3;
    boost::asio::io_context io;
    std::vector<char> got;
    HttpFetcher fetcher(
        io, urls({server.url()}), fast_retries(),
        [&](const PieceRequest&, std::vector<char> bytes, std::size_t) { got = std::move(bytes); });
    auto start = std::chrono::steady_clock::now();
    REQUIRE(fetcher.fetch(piece(2, data.size())));
    REQUIRE(run_until(
        io, [&] { return !got.empty(); }, 5s));
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(std::vector<char>(data.begin() + 2 * kPiece, data.begin() + 3 * kPiece) == got);
    CHECK(fetcher.stats().failures == 3);
    CHECK(server.requests == 4);
    CHECK(took >= 50ms + 100ms + 200ms);  // three backoffs: 50, 100, 200 ms
}

TEST_CASE("malformed answers are rejected: wrong status or a body that is not the range",
          "[client][fetcher]") {
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    boost::asio::io_context io;
    int delivered = 0;
    // The wrong path gets 404 every time; the request is retried but never delivered.
    HttpFetcher fetcher(io, urls({"http://127.0.0.1:" + std::to_string(server.port()) + "/missing"}),
                        fast_retries(),
                        [&](const PieceRequest&, std::vector<char>, std::size_t) { ++delivered; });
    REQUIRE(fetcher.fetch(piece(0, data.size())));
    run_until(
        io, [&] { return fetcher.stats().failures >= 3; }, 5s);
    CHECK(fetcher.stats().failures >= 3);
    CHECK(delivered == 0);
    CHECK(fetcher.busy(PieceIndex(0)));
}

TEST_CASE("a piece the server refuses waits alone: the others keep coming, and another server is asked",
          "[client][fetcher]") {
    auto data = title_bytes(8 * kPiece);
    RangeServer server("/t", data);
    server.refuse_offset = static_cast<std::int64_t>(kPiece);  // piece 1: a block the server cannot read
    server.refuse_last = static_cast<std::int64_t>(2 * kPiece - 1);
    boost::asio::io_context io;
    std::map<PieceIndex, std::vector<char>> got;
    std::vector<std::pair<PieceIndex, FetchFault>> failed;
    std::vector<std::optional<UnavailableBytes>> lost_bytes;
    HttpFetcher fetcher(io, urls({server.url()}), fast_retries(),
                        [&](const PieceRequest& r, std::vector<char> bytes, std::size_t) {
                            got[r.piece] = std::move(bytes);
                        });
    fetcher.on_failed([&](const PieceRequest& r, FetchFault f, const std::optional<UnavailableBytes>& u) {
        failed.emplace_back(r.piece, f);
        lost_bytes.push_back(u);
    });
    for (int i = 0; i < 8; ++i)
        REQUIRE(fetcher.fetch(piece(i, data.size())));
    REQUIRE(run_until(
        io, [&] { return got.size() == 7 && failed.size() >= 2; }, 5s));
    CHECK_FALSE(got.count(PieceIndex(1)));
    for (const auto& [p, f] : failed) {
        CHECK(p == PieceIndex(1));
        CHECK(f == FetchFault::piece);
    }
    // Each refusal says which bytes the server lost.
    for (const auto& u : lost_bytes)
        CHECK(u == UnavailableBytes{ByteOffset(kPiece), ByteOffset(2 * kPiece - 1)});
    // The server was never backed off for it: still counted on.
    CHECK(fetcher.servers().reachable(std::chrono::steady_clock::now()));
    CHECK(fetcher.stats().refusals == fetcher.stats().failures);
    // A refusal is a whole answer on a kept-alive connection: no reconnect for it.
    CHECK(server.connections <= 2);
    server.refuse_offset = -1;  // the block is back
    REQUIRE(run_until(
        io, [&] { return got.size() == 8; }, 5s));
    CHECK(got[PieceIndex(1)] == std::vector<char>(data.begin() + kPiece, data.begin() + 2 * kPiece));

    // With a second server, the refused piece goes there at once.
    RangeServer lost("/t", data), whole("/t", data);
    lost.refuse_offset = static_cast<std::int64_t>(kPiece);
    lost.delay_ms = 0;
    whole.delay_ms = 100;  // slower: the first choice for every piece is the other one
    boost::asio::io_context io2;
    std::vector<char> one;
    FetcherConfig config = fast_retries();
    config.retry_initial = 2s;  // a wait on the refusing server would show
    HttpFetcher two(
        io2, urls({lost.url(), whole.url()}), config,
        [&](const PieceRequest&, std::vector<char> bytes, std::size_t) { one = std::move(bytes); });
    REQUIRE(two.fetch(piece(1, data.size())));
    auto start = std::chrono::steady_clock::now();
    REQUIRE(run_until(
        io2, [&] { return !one.empty(); }, 5s));
    CHECK(std::chrono::steady_clock::now() - start < 1500ms);  // a wait for the refusing one: 2 s or more
    CHECK(lost.requests == 1);
    CHECK(whole.requests == 1);
}

TEST_CASE("a 503 with Retry-After backs the whole server off for that long", "[client][fetcher]") {
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    server.busy_first = 1;
    boost::asio::io_context io;
    std::vector<char> got;
    std::vector<FetchFault> failed;
    HttpFetcher fetcher(
        io, urls({server.url()}), fast_retries(),
        [&](const PieceRequest&, std::vector<char> bytes, std::size_t) { got = std::move(bytes); });
    fetcher.on_failed([&](const PieceRequest&, FetchFault f, const std::optional<UnavailableBytes>& u) {
        failed.push_back(f);
        CHECK_FALSE(u);
    });
    auto start = std::chrono::steady_clock::now();
    REQUIRE(fetcher.fetch(piece(2, data.size())));
    REQUIRE(run_until(
        io, [&] { return !failed.empty(); }, 5s));
    CHECK(failed.front() == FetchFault::server);
    CHECK_FALSE(fetcher.servers().reachable(std::chrono::steady_clock::now()));
    REQUIRE(run_until(
        io, [&] { return !got.empty(); }, 5s));
    // Retry-After: 1 is longer than the fetcher's own backoff (50 ms).
    CHECK(std::chrono::steady_clock::now() - start >= 1s);
    CHECK(server.requests == 2);
}

TEST_CASE("the fetcher retries after the server comes back", "[client][fetcher]") {
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    auto url = server.url();
    server.stop();
    boost::asio::io_context io;
    std::vector<char> got;
    HttpFetcher fetcher(
        io, urls({url}), fast_retries(),
        [&](const PieceRequest&, std::vector<char> bytes, std::size_t) { got = std::move(bytes); });
    REQUIRE(fetcher.fetch(piece(3, data.size())));
    run_until(
        io, [] { return false; }, 600ms);
    CHECK(got.empty());
    CHECK(fetcher.stats().failures >= 2);
    server.start();
    REQUIRE(run_until(
        io, [&] { return !got.empty(); }, 5s));
    CHECK(std::vector<char>(data.begin() + 3 * kPiece, data.end()) == got);
}

TEST_CASE("a kept-alive connection the server dropped is replaced without a failure", "[client][fetcher]") {
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    boost::asio::io_context io;
    int delivered = 0;
    FetcherConfig config = fast_retries();
    config.connections_per_server = 1;
    HttpFetcher fetcher(io, urls({server.url()}), config,
                        [&](const PieceRequest&, std::vector<char>, std::size_t) { ++delivered; });
    REQUIRE(fetcher.fetch(piece(0, data.size())));
    REQUIRE(run_until(
        io, [&] { return delivered == 1; }, 5s));
    server.stop();  // closes the kept-alive connection
    server.start();
    REQUIRE(fetcher.fetch(piece(1, data.size())));
    REQUIRE(run_until(
        io, [&] { return delivered == 2; }, 5s));
    CHECK(fetcher.stats().failures == 0);
    CHECK(server.connections == 2);  // one before the restart, one after
}

TEST_CASE("with two servers the fetcher moves to the live one and prefers the faster", "[client][fetcher]") {
    auto data = title_bytes(40 * kPiece);
    RangeServer slow("/t", data), fast("/t", data);
    slow.delay_ms = 150;
    boost::asio::io_context io;
    int delivered = 0;
    FetcherConfig config = fast_retries();
    config.connections_per_server = 1;
    HttpFetcher fetcher(io, urls({"http://127.0.0.1:1/t", slow.url(), fast.url()}), config,
                        [&](const PieceRequest&, std::vector<char>, std::size_t) { ++delivered; });
    // One at a time, so each choice is made with what has been measured so far.
    for (int i = 0; i < 20; ++i) {
        REQUIRE(fetcher.fetch(piece(i, data.size())));
        REQUIRE(run_until(
            io, [&] { return delivered == i + 1; }, 5s));
    }
    CHECK(fetcher.stats().failures >= 1);  // port 1 refuses
    CHECK(slow.requests <= 2);
    CHECK(fast.requests >= 17);
}

TEST_CASE("an exception thrown inside a completion handler never leaves the io_context",
          "[client][fetcher]") {
    // The caller's on_piece throwing (add_piece on a torrent that was removed throws) stands for anything
    // a handler calls that throws, such as the throwing set_option.
    auto data = title_bytes(4 * kPiece);
    RangeServer server("/t", data);
    boost::asio::io_context io;
    std::map<PieceIndex, std::vector<char>> got;
    HttpFetcher fetcher(io, urls({server.url()}), fast_retries(),
                        [&](const PieceRequest& r, std::vector<char> bytes, std::size_t) {
                            if (r.piece == PieceIndex(0)) throw std::runtime_error("torrent gone");
                            got[r.piece] = std::move(bytes);
                        });
    for (int i = 0; i < 4; ++i)
        REQUIRE(fetcher.fetch(piece(i, data.size())));
    bool ok = false;
    REQUIRE_NOTHROW(ok = run_until(
                        io, [&] { return got.size() == 3; }, 5s));
    CHECK(ok);
    CHECK(fetcher.stats().handler_errors == 1);
    CHECK(fetcher.stats().delivered == 4);
    CHECK_FALSE(fetcher.busy(PieceIndex(0)));
    CHECK(fetcher.in_flight() == 0);
    for (int i = 1; i < 4; ++i) {
        auto r = piece(i, data.size());
        CHECK(got[PieceIndex(i)] == std::vector<char>(data.begin() + static_cast<long>(r.offset),
                                                      data.begin() + static_cast<long>(r.offset + r.length)));
    }
}

TEST_CASE("a piece with a deadline carries Toast-Deadline: the milliseconds left when the request goes out",
          "[client][fetcher]") {
    using toast::client::deadline_header;
    const auto now = std::chrono::steady_clock::now();
    CHECK(deadline_header(now + 1500ms, now) == "1500");
    CHECK(deadline_header(now + 1500us, now) == "2");  // rounded up: never earlier than asked
    CHECK(deadline_header(now - 3s, now) == "0");      // already late: as soon as possible
    CHECK(deadline_header(now + 2h, now) == "600000");

    auto data = title_bytes(3 * kPiece);
    RangeServer server("/t", data);
    boost::asio::io_context io;
    int delivered = 0;
    HttpFetcher fetcher(io, urls({server.url()}), fast_retries(),
                        [&](const PieceRequest&, std::vector<char>, std::size_t) { ++delivered; });
    auto soon = piece(0, data.size());
    soon.deadline = std::chrono::steady_clock::now() + 5s;
    auto best_effort = piece(1, data.size());
    REQUIRE(fetcher.fetch(soon));
    REQUIRE(fetcher.fetch(best_effort));
    REQUIRE(run_until(
        io, [&] { return delivered == 2; }, 10s));
    auto seen = server.deadlines();
    REQUIRE(seen.size() == 2);
    std::sort(seen.begin(), seen.end());
    CHECK(seen[0].first == "bytes=0-16383");
    CHECK(std::stoi(seen[0].second) > 3000);  // sent within two seconds of asking
    CHECK(std::stoi(seen[0].second) <= 5000);
    CHECK(seen[1] == std::pair<std::string, std::string>{"bytes=16384-32767", ""});
}

TEST_CASE("after a Toast-Late answer the fetcher asks the other server", "[client][fetcher]") {
    auto data = title_bytes(6 * kPiece);
    RangeServer behind("/t", data);
    RangeServer on_time("/t", data);
    behind.late_first = 1;
    boost::asio::io_context io;
    std::map<PieceIndex, std::size_t> from;
    auto config = fast_retries();
    config.server_backoff.max = 10s;  // how long a late server is passed over: longer than the test
    HttpFetcher fetcher(
        io, urls({behind.url(), on_time.url()}), config,
        [&](const PieceRequest& r, std::vector<char>, std::size_t server) { from[r.piece] = server; });
    // One at a time, so each choice sees the previous answer.
    for (int i = 0; i < 4; ++i) {
        REQUIRE(fetcher.fetch(piece(i, data.size())));
        REQUIRE(run_until(
            io, [&] { return from.count(PieceIndex(i)) == 1; }, 10s));
    }
    CHECK(from[PieceIndex(0)] == 0u);  // the first URL first; its answer is late
    CHECK(from[PieceIndex(1)] == 1u);
    CHECK(from[PieceIndex(2)] == 1u);
    CHECK(from[PieceIndex(3)] == 1u);
    CHECK(fetcher.stats().late_answers == 1);
    CHECK(fetcher.stats().failures == 0);
    CHECK(fetcher.stats().delivered == 4);
}

TEST_CASE("an abandoned piece is called back: queued it is dropped, in flight its connection is closed",
          "[client][fetcher]") {
    auto data = title_bytes(8 * kPiece);
    RangeServer server("/t", data);
    server.delay_ms = 600;  // every answer waits: the requests are in flight when abandoned
    boost::asio::io_context io;
    std::vector<PieceIndex> delivered;
    FetcherConfig config = fast_retries();
    config.connections_per_server = 1;
    HttpFetcher fetcher(
        io, urls({server.url()}), config, [&](const PieceRequest& r, std::vector<char> bytes, std::size_t) {
            auto expected = piece(r.piece.value(), data.size());
            CHECK(bytes ==
                  std::vector<char>(data.begin() + static_cast<long>(expected.offset),
                                    data.begin() + static_cast<long>(expected.offset + expected.length)));
            delivered.push_back(r.piece);
        });
    CHECK_FALSE(fetcher.abandon(PieceIndex(0)));  // neither queued nor in flight
    REQUIRE(fetcher.fetch(piece(0, data.size())));
    REQUIRE(fetcher.fetch(piece(1, data.size())));  // one connection: queued behind piece 0
    REQUIRE(run_until(
        io, [&] { return server.requests == 1; }, 5s));
    CHECK(fetcher.in_flight() == 1);
    CHECK(fetcher.queued() == 1);

    auto queued = fetcher.abandon(PieceIndex(1));
    REQUIRE(queued);
    CHECK(*queued == 0);
    CHECK(fetcher.queued() == 0);
    REQUIRE(fetcher.fetch(piece(1, data.size())));  // asked again: queued again

    auto in_flight = fetcher.abandon(PieceIndex(0));
    REQUIRE(in_flight);
    CHECK(*in_flight == 0);  // the server had not answered yet
    CHECK_FALSE(fetcher.busy(PieceIndex(0)));
    CHECK(fetcher.stats().abandoned == 1);

    // Piece 1 goes out on a new connection; the answer for piece 0 the server still sends goes nowhere:
    // no callback, no failure, no retry.
    REQUIRE(run_until(
        io, [&] { return !delivered.empty(); }, 5s));
    run_until(
        io, [] { return false; }, 700ms);
    REQUIRE(delivered.size() == 1);
    CHECK(delivered[0] == PieceIndex(1));
    CHECK(server.requests == 2);
    CHECK(server.connections == 2);
    CHECK(fetcher.stats().failures == 0);
    CHECK(fetcher.stats().delivered == 1);
    CHECK_FALSE(fetcher.busy(PieceIndex(1)));
}
