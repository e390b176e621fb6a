// toast-client end to end with the operator's seed beside the VoD server: a viewer asks it for pieces only
// when the other boxes cannot deliver them in time (core/operator_tier.hpp).
#include <catch2/catch.hpp>

#include <csignal>
#include <memory>

#include "client/core/stats.hpp"
#include "swarm_fixture.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using toast::client::StatsRecord;
using toast::client::testing::read_stats;
using toast::testing::ChildProcess;

namespace {

constexpr std::uint64_t kTitle = 8 * 1024 * 1024;
constexpr const char* kBitrate = "3355443";  // bytes per second: 8 MiB plays for 20 s
constexpr const char* kTwice = "6710886";

StatsRecord summary_of(const std::filesystem::path& path) {
    auto lines = read_stats(path);
    REQUIRE(!lines.empty());
    REQUIRE(lines.back().event == "summary");
    return lines.back();
}

// The VoD server with one title, the tracker, and the operator's seed beside them: toast-client holding the
// title, serving the viewer furthest along (--choker leader) at twice the bitrate.
class OperatorBed : public toast::client::testing::SwarmFixture {
  public:
    OperatorBed() {
        toast::testing::write_random_file(dir() / "media.bin", kTitle, 2025);
        ingest("movie", dir() / "media.bin", kBitrate);
        start_tracker();
        start_server();
        operator_port_ = toast::testing::free_tcp_port();
        operator_ = seed("operator", {"--choker", "leader", "--upload-limit", kTwice, "--listen",
                                      std::to_string(operator_port_)});
    }
    ~OperatorBed() {
        if (operator_) operator_->stop(SIGTERM, 10s);
    }

    // A viewer that names the operator's seed, uploading at the bitrate.
    std::unique_ptr<ChildProcess> viewer(const std::string& name) {
        return start_client("stream", name,
                            {"--log-level", "warn", "--picker", "adaptive", "--upload-limit", kBitrate,
                             "--operator-peer", "127.0.0.1:" + std::to_string(operator_port_)});
    }

    // What the operator's seed uploaded in all (its summary, written when it stops).
    std::uint64_t stop_operator() {
        REQUIRE(operator_->stop(SIGTERM, 10s) == 0);
        operator_.reset();
        return summary_of(stats("operator")).bytes_uploaded;
    }

  private:
    std::uint16_t operator_port_ = 0;
    std::unique_ptr<ChildProcess> operator_;
};

void require_exit_ok(ChildProcess& p, std::chrono::milliseconds limit) {
    auto status = p.wait(limit);
    INFO(p.stderr_text());
    REQUIRE(status);
    REQUIRE(*status == 0);
}

}  // namespace

TEST_CASE("a viewer takes from the operator's seed only what the viewers holding the title cannot deliver",
          "[client][integration][operator]") {
    OperatorBed bed;
    SECTION("a viewer that watched the title keeps seeding it: the operator's seed sends next to nothing") {
        // Not named as the operator's: a box like the viewer's, at twice the bitrate.
        auto idle = bed.seed("idle", {"--upload-limit", kTwice});
        REQUIRE(bed.wait_for_seeders(2, 15s));
        auto c = bed.viewer("c1");
        require_exit_ok(*c, 60s);
        auto s = summary_of(bed.stats("c1"));
        INFO("from peers " << s.bytes_from_peers << ", of it the operator's " << s.bytes_from_operator
                           << ", from the server " << s.bytes_from_server);
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        CHECK(toast::testing::read_file(bed.data("c1")) == toast::testing::read_file(bed.media()));
        // The idle viewer carries the title; the operator's seed may send a few blocks as the viewer
        // connects (libtorrent says INTERESTED before the tier's NOT_INTERESTED follows).
        CHECK(s.bytes_from_operator < kTitle / 20);
        CHECK(bed.stop_operator() < kTitle / 20);
        REQUIRE(idle->stop(SIGTERM, 10s) == 0);
    }
    SECTION("nobody else holds it: the operator's seed carries the viewer") {
        REQUIRE(bed.wait_for_seeders(1, 15s));
        auto c = bed.viewer("c1");
        require_exit_ok(*c, 60s);
        auto s = summary_of(bed.stats("c1"));
        INFO("from peers " << s.bytes_from_peers << ", of it the operator's " << s.bytes_from_operator
                           << ", from the server " << s.bytes_from_server);
        CHECK(s.completed);
        CHECK(s.stalls == 0);
        // Every peer byte is the operator's; the VoD server fetched the first pieces while peers were being
        // found, and ahead of need what the seed had not sent yet.
        CHECK(s.bytes_from_operator == s.bytes_from_peers);
        CHECK(s.bytes_from_operator > kTitle / 4);
        CHECK(bed.stop_operator() >= s.bytes_from_operator);
    }
}
