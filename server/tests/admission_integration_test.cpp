// Admission control through the real toast-server executable: a small configured capacity admits exactly the
// paced streams that fit, answers the others 503 with Retry-After, and the admitted ones keep their rate.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <future>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
namespace tt = toast::testing;

namespace {

struct Timed {
    tt::HttpResponse response;
    std::chrono::steady_clock::duration took{};
};

Timed timed_stream(std::uint16_t port) {
    const auto t0 = std::chrono::steady_clock::now();
    Timed t;
    t.response = tt::http_request(port, "GET", "/stream/movie", {}, 30s);
    t.took = std::chrono::steady_clock::now() - t0;
    return t;
}

}  // namespace

TEST_CASE("admission control admits the streams that fit, refuses the rest with 503 and Retry-After",
          "[server][integration][admission]") {
    tt::TempDir dir;
    const auto port = tt::free_tcp_port();
    // 1 Mbit/s title, 0.5 s rounds: 62,500 bytes a round; 6 rounds of title. The network reserves at most
    // 3 rounds' worth per round, and a stream sends 2 in its first round (the initial buffer and the first
    // slice) and 1 in each later one: a second stream fits one round after the first, a third nowhere within
    // the 1 s start latency while both run.
    nlohmann::json config = {
        {"listen", "127.0.0.1:" + std::to_string(port)},
        {"disks", nlohmann::json::array()},
        {"policy", "rda"},
        {"time_slice", "500ms"},
        {"block_size", "64KiB"},
        {"piece_size", "16KiB"},
        {"admission", {{"network", "3Mbps"}, {"start_latency", "1s"}, {"start_policy", "greedy"}}}};
    for (int d = 0; d < 2; ++d) {
        std::filesystem::create_directory(dir / ("disk" + std::to_string(d)));
        config["disks"].push_back({{"path", (dir / ("disk" + std::to_string(d))).string()}});
    }
    std::ofstream(dir / "config.json") << config.dump(2);
    tt::write_random_file(dir / "movie.bin", 6 * 62'500, 11);
    const auto source = tt::read_file(dir / "movie.bin");
    const auto config_path = (dir / "config.json").string();
    auto ingest =
        tt::run(TOAST_SERVER_BIN, {"--config", config_path, "ingest", "movie", (dir / "movie.bin").string(),
                                   "--bitrate", "1Mbps", "--torrent", (dir / "movie.torrent").string(),
                                   "--announce", "http://127.0.0.1:1/announce"});
    INFO(ingest.out << ingest.err);
    REQUIRE(ingest.exit_code == 0);
    tt::ChildProcess server(TOAST_SERVER_BIN, {"--config", config_path, "serve"}, dir.path());
    REQUIRE(tt::wait_for_tcp_port(port, 10s));

    std::vector<std::future<Timed>> viewers;
    for (int i = 0; i < 4; ++i)
        viewers.push_back(std::async(std::launch::async, timed_stream, port));
    int admitted = 0;
    int refused = 0;
    for (auto& v : viewers) {
        const auto t = v.get();
        if (t.response.status == 200) {
            ++admitted;
            CHECK(t.response.body == source);
            // Paced, not refused late or starved: the initial buffer, then a round per round (2.5 s), after
            // at most the 1 s start latency; a loaded machine may add a little.
            CHECK(t.took >= 2s);
            CHECK(t.took < 6s);
        } else {
            ++refused;
            CHECK(t.response.status == 503);
            CHECK_THAT(t.response.body, Contains("admission control") && Contains("network"));
            const auto retry = t.response.header("retry-after");
            REQUIRE_FALSE(retry.empty());
            CHECK(std::stoi(retry) >= 1);
            CHECK(std::stoi(retry) <= 5);
        }
    }
    CHECK(admitted == 2);
    CHECK(refused == 2);

    const auto metrics = tt::http_request(port, "GET", "/metrics").body;
    CHECK_THAT(metrics, Contains("toast_admission_decisions_total{result=\"admitted\"} 2"));
    CHECK_THAT(metrics, Contains("toast_admission_decisions_total{result=\"refused_network\"} 2"));
    CHECK_THAT(metrics, Contains("toast_admission_active_streams 0"));
    // The finished streams gave their reservations back: the next viewer is admitted.
    const auto again = timed_stream(port);
    CHECK(again.response.status == 200);
    CHECK(again.response.body == source);
}
