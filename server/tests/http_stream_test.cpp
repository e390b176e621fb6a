// Paced /stream over the wire: pacing by bitrate and by demand trace, byte counters while a body is sent, and
// admission control by trace or by peak rate.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>

#include <future>
#include <thread>
#include <vector>

#include "http_fixture.hpp"

using namespace toast;
using namespace toast::server;
using namespace toast::server::testing;
using namespace std::chrono_literals;
namespace beast = boost::beast;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// A /stream GET on its own connection, read to the end: what arrived, and after each read how much had
// arrived and when (since the request was sent).
struct StreamRead {
    std::string received;
    std::vector<std::pair<std::size_t, std::chrono::steady_clock::duration>> arrivals;

    std::size_t body_start() const {
        const auto head = received.find("\r\n\r\n");
        REQUIRE(head != std::string::npos);
        return head + 4;
    }
    std::string body() const { return received.substr(body_start()); }
};

StreamRead read_stream(std::uint16_t port, const std::string& title, std::chrono::seconds limit) {
    asio::io_context ioc;
    tcp::socket sock(ioc);
    sock.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    const auto t0 = std::chrono::steady_clock::now();
    asio::write(sock,
                asio::buffer("GET /stream/" + title + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
    StreamRead r;
    char buf[65536];
    beast::error_code ec;
    while (!ec && std::chrono::steady_clock::now() - t0 < limit) {
        const auto n = sock.read_some(asio::buffer(buf), ec);
        r.received.append(buf, n);
        r.arrivals.emplace_back(r.received.size(), std::chrono::steady_clock::now() - t0);
    }
    return r;
}

}  // namespace

TEST_CASE("/stream paces the title at its bitrate, one slice per time slice", "[server][http][pacing]") {
    Server s([](ServerConfig& c) { c.time_slice = 200ms; });
    // 100 kB per 200 ms slice: 500 kB = the initial buffer and the first slice at once, then three slices
    // at ~200, ~400 and ~600 ms.
    const auto bytes = pattern(500'000, 3);
    s.store.add("paced", bytes, BitRate(4'000'000));
    const auto r = read_stream(s.port(), "paced", 5s);
    CHECK(r.body() == bytes);
    // When did the body pass each slice boundary?
    auto time_past = [&](std::size_t body_bytes) {
        for (auto& [n, t] : r.arrivals)
            if (n > r.body_start() + body_bytes) return t;
        return std::chrono::steady_clock::duration::max();
    };
    CHECK(time_past(100'000) < 150ms);  // the first paced slice follows the initial buffer at once
    CHECK(time_past(200'000) >= 180ms);
    CHECK(time_past(300'000) >= 380ms);
    CHECK(time_past(400'000) >= 580ms);
    CHECK(r.arrivals.back().second < 1500ms);
    // A /titles GET of the same bytes goes at full speed.
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(toast::testing::http_request(s.port(), "GET", "/titles/paced").body.size() == 500'000);
    CHECK(std::chrono::steady_clock::now() - t0 < 400ms);
}

TEST_CASE("toast_http_bytes_sent_total advances while a paced body is being sent", "[server][http][pacing]") {
    Server s([](ServerConfig& c) { c.time_slice = 200ms; });
    // 100 kB slices: the first 200 kB at once, then 100 kB every 200 ms until 1 MB (about 1.6 s).
    const auto bytes = pattern(1'000'000, 5);
    s.store.add("paced", bytes, BitRate(4'000'000));
    asio::io_context ioc;
    tcp::socket sock(ioc);
    sock.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.port()));
    asio::write(sock, asio::buffer(
                          std::string("GET /stream/paced HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")));
    std::string received;
    char buf[65536];
    beast::error_code ec;
    const auto t0 = std::chrono::steady_clock::now();
    while (!ec && received.size() < 250'000 && std::chrono::steady_clock::now() - t0 < 5s)
        received.append(buf, sock.read_some(asio::buffer(buf), ec));
    REQUIRE(received.size() >= 250'000);
    const auto series = "toast_http_bytes_sent_total{title=\"paced\"}";
    const auto during = metric(toast::testing::http_request(s.port(), "GET", "/metrics").body, series);
    const auto head = received.find("\r\n\r\n") + 4;
    CHECK(during >= static_cast<double>(received.size() - head));
    CHECK(during < 1'000'000);
    while (!ec && std::chrono::steady_clock::now() - t0 < 10s)
        received.append(buf, sock.read_some(asio::buffer(buf), ec));
    CHECK(received.substr(head) == bytes);
    CHECK(metric(toast::testing::http_request(s.port(), "GET", "/metrics").body, series) == 1'000'000);
}

TEST_CASE("/stream of a title with a demand trace sends each round's bytes of the trace, one round apart",
          "[server][http][pacing]") {
    Server s([](ServerConfig& c) { c.time_slice = 400ms; });
    // Rounds of 400 ms: 250,000, 50,000, 20,000, 200,000, 80,000 bytes. The title's 4 Mbps bitrate would
    // send 200,000 a round: pacing by the bitrate pauses at 400,000, by the trace at 300,000, 320,000, ...
    const std::vector<std::uint64_t> rounds{250'000, 50'000, 20'000, 200'000, 80'000};
    const auto bytes = pattern(600'000, 9);
    s.store.add("vbr", bytes, BitRate(4'000'000));
    s.store.set_trace("vbr", DemandTrace{400ms, rounds});
    const auto r = read_stream(s.port(), "vbr", 10s);
    CHECK(r.body() == bytes);
    // Where the body stood whenever nothing arrived for at least half a round: the pacer's pauses.
    std::vector<std::uint64_t> paused_at;
    for (std::size_t i = 1; i < r.arrivals.size(); ++i) {
        const auto& [before, at] = r.arrivals[i - 1];
        if (r.arrivals[i].second - at >= 200ms && before >= r.body_start())
            paused_at.push_back(before - r.body_start());
    }
    CHECK(paused_at == std::vector<std::uint64_t>{300'000, 320'000, 520'000});
    const auto took = r.arrivals.back().second;
    // Three rounds after the first two, each 400 ms: about 1.2 s (a loaded machine may add to it).
    CHECK(took >= 1100ms);
    CHECK(took < 4s);
}

TEST_CASE("with admission control an empty title's /stream is answered at once, with nothing reserved",
          "[server][http][admission]") {
    Server s([](ServerConfig& c) { c.admission.enabled = true; });
    s.store.add("empty", "", BitRate(4'000'000));
    const auto r = toast::testing::http_request(s.port(), "GET", "/stream/empty");
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    const auto metrics = toast::testing::http_request(s.port(), "GET", "/metrics").body;
    CHECK(metric(metrics, "toast_admission_decisions_total{result=\"admitted\"}") == 0);
    CHECK(metric(metrics, "toast_admission_active_streams") == 0);
}

TEST_CASE("admission by a title's demand trace admits streams that reserving its peak rate refuses",
          "[server][http][admission]") {
    // 500 ms rounds of 10, 10, 10, 10 and 90 kB: a stream sends 20, 10, 10 and 90 kB in its four rounds, or,
    // reserved at its peak, 180 kB in its first round (the initial buffer and the first slice) and 90 kB in
    // each later one. The network carries 200 kB a round, and a stream may start up to two rounds late (a
    // first stream that finds too little left of the current round starts in the next). By the trace a
    // second stream fits beside the first (their 90 kB rounds meet 10 kB ones or each other: 180 kB);
    // reserved at the peak it fits in no round while the first one runs.
    for (const bool peak : {false, true}) {
        INFO((peak ? "peak" : "trace"));
        Server s([&](ServerConfig& c) {
            c.disks.resize(2);  // the ledger charges the fixture's two disks (their reads cost no time)
            c.time_slice = 500ms;
            c.admission.enabled = true;
            c.admission.network = BitRate(3'200'000);
            c.admission.start_latency = 1s;
            c.admission.reserve_peak = peak;
        });
        const auto bytes = pattern(130'000, 4);
        s.store.add("vbr", bytes, BitRate(416'000));
        s.store.set_trace("vbr", DemandTrace{500ms, {10'000, 10'000, 10'000, 10'000, 90'000}});
        std::vector<std::future<toast::testing::HttpResponse>> viewers;
        for (int i = 0; i < 2; ++i) {
            viewers.push_back(std::async(std::launch::async, [&] {
                return toast::testing::http_request(s.port(), "GET", "/stream/vbr", {}, 15s);
            }));
            std::this_thread::sleep_for(100ms);  // the first asks first
        }
        std::vector<int> statuses;
        for (auto& v : viewers) {
            const auto r = v.get();
            statuses.push_back(r.status);
            if (r.status == 200) CHECK(r.body == bytes);
        }
        CHECK(statuses == (peak ? std::vector<int>{200, 503} : std::vector<int>{200, 200}));
        const auto metrics = toast::testing::http_request(s.port(), "GET", "/metrics").body;
        CHECK(metric(metrics, "toast_admission_decisions_total{result=\"admitted\"}") == (peak ? 1 : 2));
        CHECK(metric(metrics, "toast_admission_decisions_total{result=\"refused_network\"}") ==
              (peak ? 1 : 0));
    }
}
