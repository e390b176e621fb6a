#include <catch2/catch.hpp>

#include "client/core/buffer_planner.hpp"

using namespace toast;
using namespace toast::client;

namespace {

// 20 pieces of 100 bytes except the last (50).
TitleGeometry geometry() {
    return *TitleGeometry::make(Bytes(1950), Bytes(100), BitRate(8000));
}

PieceSet stored(std::initializer_list<int> list) {
    PieceSet s(PieceCount(20));
    for (int p : list)
        s.set(PieceIndex(p));
    return s;
}

std::vector<PieceIndex> idx(std::initializer_list<int> list) {
    std::vector<PieceIndex> out;
    for (int p : list)
        out.emplace_back(p);
    return out;
}

}  // namespace

TEST_CASE("buffer limits parse as bytes or a percentage of the title", "[client][buffer]") {
    auto b = BufferLimit::parse("512MiB");
    REQUIRE(b);
    CHECK_FALSE(b->is_percent());
    CHECK(b->resolve(Bytes(1)) == Bytes(512ull << 20));
    auto p = BufferLimit::parse("25%");
    REQUIRE(p);
    CHECK(p->is_percent());
    CHECK(p->resolve(Bytes(1950)) == Bytes(487));
    CHECK(BufferLimit::parse("12.5%")->resolve(Bytes(1000)) == Bytes(125));
    CHECK(BufferLimit::parse("100%")->resolve(Bytes(1950)) == Bytes(1950));
    CHECK(p->to_string() == "25%");
    CHECK(b->to_string() == "536870912");
    for (auto bad : {"0", "0%", "150%", "-5%", "%", "abc", "5.5.5%", ".%", ""})
        CHECK_FALSE(BufferLimit::parse(bad));
}

TEST_CASE("nothing is ejected while one more piece fits", "[client][buffer]") {
    auto g = geometry();
    auto s = stored({0, 1, 2, 3});
    auto plan = plan_buffer({.geometry = g, .stored = s, .playhead = PieceIndex(3), .limit = Bytes(500)});
    CHECK(plan.eject.empty());
    CHECK_FALSE(plan.suspend);
    CHECK(plan.stored_after == Bytes(400));
    CHECK(plan.room == Bytes(100));
    // Pieces 0-2 stay stored until a piece does not fit, so only piece 4 may be requested: 500 bytes in all.
    CHECK(plan.request_end == PieceIndex(5));
}

TEST_CASE("a full buffer ejects pieces behind the playhead, oldest first, just enough", "[client][buffer]") {
    auto g = geometry();
    auto s = stored({1, 2, 4, 6, 7, 8});
    // 600 stored + 100 incoming + 100 for the next piece > 500: 300 must go, all behind playhead 6.
    auto plan = plan_buffer(
        {.geometry = g, .stored = s, .playhead = PieceIndex(6), .limit = Bytes(500), .incoming = Bytes(100)});
    CHECK(plan.eject == idx({1, 2, 4}));
    CHECK_FALSE(plan.suspend);
    CHECK(plan.stored_after == Bytes(300));
    CHECK(plan.room == Bytes(100));
}

TEST_CASE("a piece at or after the playhead is never ejected, so the client suspends", "[client][buffer]") {
    auto g = geometry();
    auto s = stored({2, 5, 6, 7, 8, 9});
    auto plan = plan_buffer({.geometry = g, .stored = s, .playhead = PieceIndex(5), .limit = Bytes(500)});
    CHECK(plan.eject == idx({2}));  // the only piece behind the playhead
    CHECK(plan.suspend);            // 500 stored, no room for another piece
    CHECK(plan.stored_after == Bytes(500));
    CHECK(plan.room == Bytes(0));
    // Playback moves on: piece 5 is now behind and can go.
    s.clear(PieceIndex(2));
    auto later = plan_buffer({.geometry = g, .stored = s, .playhead = PieceIndex(6), .limit = Bytes(500)});
    CHECK(later.eject == idx({5}));
    CHECK_FALSE(later.suspend);
}

TEST_CASE("stored bytes never exceed the limit when the plan is followed", "[client][buffer]") {
    // Simulate: pieces arrive in order one at a time while the playhead trails by two; follow every plan.
    auto g = geometry();
    PieceSet s(PieceCount(20));
    const Bytes limit(350);
    std::uint64_t max_stored = 0;
    int playhead = 0;
    for (int next = 0; next < 20; ++next) {
        auto plan =
            plan_buffer({.geometry = g, .stored = s, .playhead = PieceIndex(playhead), .limit = limit});
        for (auto p : plan.eject) {
            CHECK(p < PieceIndex(playhead));
            s.clear(p);
        }
        if (plan.suspend || PieceIndex(next) >= plan.request_end) {
            ++playhead;  // wait for playback
            --next;
            continue;
        }
        s.set(PieceIndex(next));
        std::uint64_t bytes = 0;
        for (auto p : s.pieces())
            bytes += g.piece_size(p).value();
        max_stored = std::max(max_stored, bytes);
        if (next >= 2) playhead = std::max(playhead, next - 2);
        REQUIRE(playhead < 40);
    }
    CHECK(max_stored <= limit.value());
    CHECK(max_stored == 300);
}

TEST_CASE("after a backward seek the farthest pieces outside the window make room for the playhead piece",
          "[client][buffer]") {
    auto g = geometry();
    auto s = stored({10, 11, 12, 13, 14});
    auto plan = plan_buffer({.geometry = g, .stored = s, .playhead = PieceIndex(2), .limit = Bytes(500)});
    CHECK(plan.eject == idx({14}));
    CHECK(plan.request_end == PieceIndex(3));  // 10-13 still stored: room for the playhead piece only
    CHECK_FALSE(plan.suspend);
    // With the playhead piece present nothing at or after the playhead is touched.
    auto s2 = stored({2, 10, 11, 12, 13});
    auto plan2 = plan_buffer({.geometry = g, .stored = s2, .playhead = PieceIndex(2), .limit = Bytes(500)});
    CHECK(plan2.eject.empty());
    CHECK(plan2.suspend);
}

TEST_CASE("a buffer limit that cannot hold two pieces is rejected with the numbers", "[client][buffer]") {
    auto g = geometry();
    CHECK(check_buffer_limit(Bytes(199), g) == "buffer limit 199 bytes cannot hold two pieces of 100 bytes");
    CHECK_FALSE(check_buffer_limit(Bytes(200), g));
    auto tiny = *TitleGeometry::make(Bytes(50), Bytes(100), BitRate(8000));
    CHECK_FALSE(check_buffer_limit(Bytes(50), tiny));  // the whole title fits
}
