// StateSaver writes the state file on a thread of its own: the io thread goes on answering while a save is
// being written (an fsync on a busy disk), an interval that comes meanwhile is skipped, and the last save at
// a stop waits for the one being written and is the file that stays.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/post.hpp>

#include "test_support.hpp"
#include "tracker/io/state_file.hpp"
#include "tracker/io/state_saver.hpp"

using namespace toast::tracker;
using namespace std::chrono_literals;

namespace {

std::string escaped(char c) {
    std::string out;
    for (int i = 0; i < 20; ++i)
        out += std::string("%") + "0123456789ABCDEF"[(c >> 4) & 0xf] + "0123456789ABCDEF"[c & 0xf];
    return out;
}

std::string announce(char hash, int port) {
    return "/announce?info_hash=" + escaped(hash) +
           "&peer_id=-TT0001-100000000001&port=" + std::to_string(port) + "&uploaded=0&downloaded=0&left=5";
}

// A writer that holds every write until released, then writes for real.
struct HeldWriter {
    std::mutex m;
    std::condition_variable cv;
    bool released = false;
    std::vector<std::string> written;  // the bytes of each write, in order
    std::optional<std::string> operator()(const std::filesystem::path& path, std::string_view bytes) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return released; });
        written.emplace_back(bytes);
        return write_state_file(path, bytes);
    }
    void release() {
        {
            std::lock_guard lock(m);
            released = true;
        }
        cv.notify_all();
    }
    std::size_t writes() { return copy().size(); }
    std::vector<std::string> copy() {
        std::lock_guard lock(m);
        return written;
    }
};

bool has_line(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("the io thread answers while a save is being written, and the last save is the one that stays",
          "[tracker][state]") {
    toast::testing::TempDir dir;
    TrackerConfig c;
    c.rate_limit.per_second = 0;
    c.state_file = dir / "swarms.json";
    c.state_save_interval = 50ms;
    toast::MetricsRegistry metrics;
    TrackerService service(c, ServiceSecrets{SipKey{1, 2}, SipKey{3, 4}}, metrics);
    const auto from = *IpAddress::parse("127.0.0.1");
    REQUIRE(service.handle_http("GET", announce('a', 7001), from, std::chrono::steady_clock::now()).status ==
            200);

    boost::asio::io_context io;
    HeldWriter held;
    StateSaver saver(io, service, [&](const auto& p, auto b) { return held(p, b); });
    saver.start();
    // The first interval passes; its save is encoded and handed to the writer, which holds it.
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!saver.writing() && std::chrono::steady_clock::now() < until)
        io.run_for(10ms);
    REQUIRE(saver.writing());

    // Meanwhile the io thread answers: an announce, and the intervals that come are skipped.
    bool answered = false;
    boost::asio::post(io, [&] {
        answered =
            service.handle_http("GET", announce('b', 7002), from, std::chrono::steady_clock::now()).status ==
            200;
    });
    io.run_for(200ms);
    CHECK(answered);
    CHECK(saver.writing());
    CHECK(saver.skipped() >= 2);
    CHECK(held.writes() == 0);
    CHECK(has_line(service.metrics_text(), "toast_tracker_state_saves_total{result=\"ok\"} 0"));

    // Released, the held save is written and counted.
    held.release();
    while (saver.writing() && std::chrono::steady_clock::now() < until)
        io.run_for(10ms);
    CHECK_FALSE(saver.writing());
    const auto first = held.copy();
    REQUIRE(first.size() >= 1);
    CHECK(first[0].find("\"port\":7001") != std::string::npos);
    CHECK(first[0].find("\"port\":7002") == std::string::npos);  // encoded before that announce
    CHECK_FALSE(has_line(service.metrics_text(), "toast_tracker_state_saves_total{result=\"ok\"} 0"));

    // The last save has both swarms, and it is the file that stays.
    saver.stop();
    const auto last = held.copy().back();
    CHECK(last.find("\"port\":7001") != std::string::npos);
    CHECK(last.find("\"port\":7002") != std::string::npos);
    CHECK(toast::testing::read_file(dir / "swarms.json") == last);
}
