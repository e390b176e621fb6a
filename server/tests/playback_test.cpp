#include <catch2/catch.hpp>

#include "server/bench/loadgen/playback.hpp"

using namespace toast::loadgen;
using Clock = Playback::Clock;

namespace {

Clock::time_point at(double seconds) {
    return Clock::time_point(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
}

}  // namespace

TEST_CASE("a viewer fed ahead of its playhead never starves", "[loadgen][playback]") {
    Playback p(NeedCurve::constant(1000, 10'000), 1000, at(0));
    p.on_bytes(at(0.1), 2000);
    REQUIRE(p.started());
    CHECK(*p.start_latency() == Approx(0.1));
    for (int k = 1; k <= 8; ++k)
        p.on_bytes(at(k), static_cast<std::uint64_t>(k + 2) * 1000);
    CHECK(p.stalls().empty());
    CHECK(p.played() == Approx(7.9));
    p.finish(at(12));
    CHECK(p.stalls().empty());
    CHECK(p.done());
}

TEST_CASE("a stall starts when the playhead runs dry and ends when the next byte comes",
          "[loadgen][playback]") {
    Playback p(NeedCurve::constant(1000, 10'000), 1000, at(0));
    p.on_bytes(at(0.1), 1000);  // exactly the initial buffer: one second of playback
    p.on_bytes(at(2.0), 3000);  // ran dry at 1.1 s
    REQUIRE(p.stalls().size() == 1);
    CHECK(p.stalls()[0].start == Approx(1.1));
    CHECK(p.stalls()[0].seconds == Approx(0.9));
    p.on_bytes(at(5.0), 10'000);  // played 1 -> 3 s from 2.0 s on, dry at 4.0 s
    REQUIRE(p.stalls().size() == 2);
    CHECK(p.stalls()[1].start == Approx(4.0));
    CHECK(p.stalls()[1].seconds == Approx(1.0));
    p.finish(at(20));
    CHECK(p.stalls().size() == 2);  // everything had arrived
}

TEST_CASE("buffering before playback starts is not starvation", "[loadgen][playback]") {
    Playback p(NeedCurve::constant(1000, 10'000), 4000, at(0));
    p.on_bytes(at(1), 1000);
    p.on_bytes(at(3), 3000);
    CHECK_FALSE(p.started());
    p.on_bytes(at(6), 4000);
    CHECK(p.started());
    CHECK(*p.start_latency() == Approx(6));
    CHECK(p.stalls().empty());
    // A title shorter than the initial buffer starts once it has all arrived.
    Playback tiny(NeedCurve::constant(1000, 500), 4000, at(0));
    tiny.on_bytes(at(0.2), 500);
    CHECK(tiny.started());
}

TEST_CASE("a trace viewer needs each round's bytes from the round's start", "[loadgen][playback]") {
    // Rounds of 1 s needing 100, 0, 300 and 50 bytes.
    auto need = NeedCurve::rounds(std::chrono::seconds(1), {100, 0, 300, 50});
    CHECK(need.duration() == Approx(4));
    CHECK(need.playable(99) == Approx(0));
    CHECK(need.playable(100) == Approx(2));
    CHECK(need.playable(399) == Approx(2));
    CHECK(need.playable(400) == Approx(3));
    CHECK(need.playable(450) == Approx(4));

    Playback p(need, 100, at(0));
    p.on_bytes(at(0), 100);
    p.on_bytes(at(2.5), 400);  // round 2's 300 bytes were needed at 2.0 s
    REQUIRE(p.stalls().size() == 1);
    CHECK(p.stalls()[0].start == Approx(2.0));
    CHECK(p.stalls()[0].seconds == Approx(0.5));
}

TEST_CASE("a viewer that watches part of a title is done then, one cut off mid-stall ends it there",
          "[loadgen][playback]") {
    Playback part(NeedCurve::constant(1000, 100'000), 1000, at(0), 1.5);
    part.on_bytes(at(0), 5000);
    CHECK_FALSE(part.done());
    part.on_bytes(at(2), 6000);
    CHECK(part.done());
    CHECK(part.played() == Approx(1.5));

    Playback cut(NeedCurve::constant(1000, 10'000), 1000, at(0));
    cut.on_bytes(at(0), 1000);
    cut.finish(at(10));  // nothing more came: dry from 1 s to 10 s
    REQUIRE(cut.stalls().size() == 1);
    CHECK(cut.stalls()[0].start == Approx(1));
    CHECK(cut.stalls()[0].seconds == Approx(9));
}
