#include <catch2/catch.hpp>

#include <vector>

#include "server/core/pacer.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using TP = Pacer::Clock::time_point;

namespace {
TP at(std::chrono::milliseconds ms) {
    return TP(ms);
}
}  // namespace

TEST_CASE("a pacer's slice is the bitrate times the time slice", "[server][pacer]") {
    Pacer p(BitRate(8'000'000), 5s);
    CHECK(p.slice_bytes() == Bytes(5'000'000));
    CHECK(p.time_slice() == 5s);
    CHECK(p.target() == 5s);
    CHECK(p.deficit() == 0ns);
}

TEST_CASE("the initial buffer is followed at once by the first paced slice", "[server][pacer]") {
    Pacer p(Bytes(1000), 1000ms);
    CHECK(p.initial());
    // The initial buffer took 300 ms: no wait, and it creates no deficit.
    CHECK(p.on_transmitted(at(0ms), at(300ms)) == at(300ms));
    CHECK_FALSE(p.initial());
    CHECK(p.deficit() == 0ns);
}

TEST_CASE("a slice that finishes early waits for the rest of its time slice", "[server][pacer]") {
    Pacer p(Bytes(1000), 1000ms);
    p.on_transmitted(at(0ms), at(10ms));
    // Slices of 100 ms each start one time slice apart.
    CHECK(p.on_transmitted(at(10ms), at(110ms)) == at(1010ms));
    CHECK(p.on_transmitted(at(1010ms), at(1110ms)) == at(2010ms));
    CHECK(p.deficit() == 0ns);
}

TEST_CASE("an overrun adds the excess to the deficit and shortens the next target", "[server][pacer]") {
    Pacer p(Bytes(1000), 1000ms);
    p.on_transmitted(at(0ms), at(0ms));
    // 1.4 s for a 1 s slice: 400 ms behind, no wait.
    CHECK(p.on_transmitted(at(0ms), at(1400ms)) == at(1400ms));
    CHECK(p.deficit() == 400ms);
    CHECK(p.target() == 600ms);
    // Another overrun of the (full) slice: the deficit accumulates.
    CHECK(p.on_transmitted(at(1400ms), at(2600ms)) == at(2600ms));
    CHECK(p.deficit() == 600ms);
    CHECK(p.target() == 400ms);
}

TEST_CASE("a transmission that beats the shortened target resets the deficit", "[server][pacer]") {
    Pacer p(Bytes(1000), 1000ms);
    p.on_transmitted(at(0ms), at(0ms));
    p.on_transmitted(at(0ms), at(1300ms));  // deficit 300 ms, target 700 ms
    REQUIRE(p.deficit() == 300ms);
    // 200 ms < 700 ms target: wait until the target, and the stream is back on schedule.
    CHECK(p.on_transmitted(at(1300ms), at(1500ms)) == at(2000ms));
    CHECK(p.deficit() == 0ns);
    CHECK(p.target() == 1000ms);
    // On schedule: slice k ends at k * t_b.
    CHECK(p.on_transmitted(at(2000ms), at(2100ms)) == at(3000ms));
}

TEST_CASE("a transmission between the target and the time slice reduces the deficit", "[server][pacer]") {
    Pacer p(Bytes(1000), 1000ms);
    p.on_transmitted(at(0ms), at(0ms));
    p.on_transmitted(at(0ms), at(1500ms));  // deficit 500 ms, target 500 ms
    // 800 ms: past the 500 ms target, so no wait; 200 ms earlier than a full slice.
    CHECK(p.on_transmitted(at(1500ms), at(2300ms)) == at(2300ms));
    CHECK(p.deficit() == 300ms);
    CHECK(p.target() == 700ms);
}

TEST_CASE("a deficit larger than the time slice sends back to back until it is repaid", "[server][pacer]") {
    Pacer p(Bytes(1000), 1000ms);
    p.on_transmitted(at(0ms), at(0ms));
    p.on_transmitted(at(0ms), at(3500ms));  // 2.5 s behind
    CHECK(p.deficit() == 2500ms);
    CHECK(p.target() == 0ms);
    auto t = at(3500ms);
    int slices = 0;
    // Fast slices of 100 ms repay 900 ms each (bounded loop); none of them waits until the last.
    std::vector<TP> starts;
    while (p.deficit() > 0ns && slices < 10) {
        t = p.on_transmitted(t, t + 100ms);
        starts.push_back(t);
        ++slices;
    }
    CHECK(starts == std::vector<TP>{at(3600ms), at(3700ms), at(4000ms)});
    CHECK(p.deficit() == 0ns);
    // Back on the ideal schedule: paced slice k ends at k * t_b (slice 4 at 4 s).
    CHECK(t == at(4000ms));
}

TEST_CASE("pacers reject empty slices and non-positive time slices", "[server][pacer]") {
    CHECK_THROWS(Pacer(Bytes(0), 1s));
    CHECK_THROWS(Pacer(Bytes(10), 0s));
    // A tiny bitrate still sends at least one byte per slice.
    CHECK(Pacer(BitRate(1), 1s).slice_bytes() == Bytes(1));
}
