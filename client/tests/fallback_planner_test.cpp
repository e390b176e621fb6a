#include <catch2/catch.hpp>

#include "client/core/fallback_planner.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

const SteadyTime t0{std::chrono::seconds(500)};

PieceSet had(int n, std::initializer_list<int> list) {
    PieceSet s{PieceCount(n)};
    for (int p : list)
        s.set(PieceIndex(p));
    return s;
}

std::vector<PieceIndex> pieces_of(const std::vector<FallbackFetch>& fetches) {
    std::vector<PieceIndex> out;
    for (const auto& f : fetches)
        out.push_back(f.piece);
    return out;
}

std::vector<PieceIndex> idx(std::initializer_list<int> list) {
    std::vector<PieceIndex> out;
    for (int p : list)
        out.emplace_back(p);
    return out;
}

FallbackConfig config() {
    FallbackConfig c;
    c.max_concurrent = 10;
    c.max_ahead = 2;
    c.lead_margin = 500ms;
    c.initial_fetch_estimate = 1s;
    c.backoff_initial = 1s;
    c.backoff_max = 8s;
    c.ahead_window = 6s;
    return c;
}

}  // namespace

TEST_CASE("the fallback fires before the deadline: horizon plus fetch estimate plus margin",
          "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {0, 1});
    // Pieces are 1 s of media; playhead piece 1 is 200 ms in; horizon 2 s -> window 3.5 s.
    FallbackInput in{.had = h,
                     .playhead = PieceIndex(1),
                     .piece_duration = 1s,
                     .into_playhead_piece = 200ms,
                     .horizon = 2s};
    CHECK(f.need_window(2s) == 3500ms);
    // Piece 2 due in 0.8 s ... piece 4 in 2.8 s, piece 5 in 3.8 s (outside).
    auto fetches = f.plan(in, t0);
    CHECK(pieces_of(fetches) == idx({2, 3, 4}));
    for (const auto& x : fetches)
        CHECK(x.reason == FetchReason::needed);
    CHECK(f.started() == 3);
    CHECK(f.fetched_ahead() == 0);
}

TEST_CASE("a needed piece peers are sending is theirs until the server's last moment", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {0});
    // Window 2 + 1 + 0.5 = 3.5 s; lead 1 + 0.5 = 1.5 s. Peers are sending pieces 2 and 3; nobody sends
    // piece 1.
    auto sending = had(50, {2, 3});
    FallbackInput in{
        .had = h, .playhead = PieceIndex(0), .piece_duration = 1s, .horizon = 2s, .peer_sending = &sending};
    // Piece 1 (due 1 s) is the server's; pieces 2 (due 2 s) and 3 (due 3 s) are inside the need window but
    // left to the peers.
    CHECK(pieces_of(f.plan(in, t0)) == idx({1}));
    // 600 ms later piece 2 is due in 1.4 s, inside the lead: the server takes it whatever the peers have
    // sent of it; piece 3 (due in 2.4 s) still waits; piece 4 (due in 3.4 s), which nobody sends, enters
    // the need window.
    in.into_playhead_piece = 600ms;
    CHECK(pieces_of(f.plan(in, t0 + 600ms)) == idx({2, 4}));
    // Without the peers' progress every needed piece is fetched at the need window.
    FallbackPlanner g(config());
    in.peer_sending = nullptr;
    CHECK(pieces_of(g.plan(in, t0 + 600ms)) == idx({1, 2, 3, 4}));
}

TEST_CASE("the fallback never fetches a piece that is already being fetched", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {});
    FallbackInput in{.had = h, .playhead = PieceIndex(0), .piece_duration = 1s, .horizon = 1s};
    auto first = f.plan(in, t0);
    CHECK(pieces_of(first) == idx({0, 1, 2}));
    CHECK(f.plan(in, t0 + 100ms).empty());
    CHECK(f.in_flight(PieceIndex(1)));
    f.on_fetch_succeeded(PieceIndex(1), 400ms);
    h.set(PieceIndex(1));
    CHECK(f.plan(in, t0 + 200ms).empty());
    CHECK(f.in_flight_pieces() == idx({0, 2}));
}

TEST_CASE("a slower server makes the fallback fire earlier", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {});
    FallbackInput in{.had = h, .playhead = PieceIndex(0), .piece_duration = 1s, .horizon = 1s};
    f.plan(in, t0);                           // 0, 1, 2
    f.on_fetch_succeeded(PieceIndex(0), 5s);  // the first observation replaces the initial estimate
    CHECK(f.fetch_estimate() == 5s);
    f.on_fetch_succeeded(PieceIndex(1), 3s);  // EWMA with alpha 0.3: 0.3 * 3 + 0.7 * 5 = 4.4 s
    CHECK(f.fetch_estimate() == 4400ms);
    h.set(PieceIndex(0));
    h.set(PieceIndex(1));
    // Window 1 + 4.4 + 0.5 = 5.9 s: pieces due by then (3, 4, 5).
    CHECK(pieces_of(f.plan(in, t0 + 1s)) == idx({3, 4, 5}));
}

TEST_CASE("a failed fetch is retried with doubling backoff", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(10, {});
    FallbackInput in{.had = h, .playhead = PieceIndex(0), .piece_duration = 10s, .horizon = 1s};
    auto first = f.plan(in, t0);
    REQUIRE(pieces_of(first) == idx({0}));
    CHECK_FALSE(first[0].revalidate);
    f.on_fetch_failed(PieceIndex(0), t0 + 1s);
    CHECK(f.failed() == 1);
    CHECK(f.retry_at(PieceIndex(0)) == t0 + 2s);
    CHECK(f.plan(in, t0 + 1900ms).empty());
    // The retry asks the server to check its copy again.
    auto retry = f.plan(in, t0 + 2s);
    REQUIRE(pieces_of(retry) == idx({0}));
    CHECK(retry[0].revalidate);
    f.on_fetch_failed(PieceIndex(0), t0 + 3s);
    CHECK(f.retry_at(PieceIndex(0)) == t0 + 5s);
    f.plan(in, t0 + 5s);
    f.on_fetch_failed(PieceIndex(0), t0 + 5s);
    CHECK(f.retry_at(PieceIndex(0)) == t0 + 9s);
    f.plan(in, t0 + 9s);
    f.on_fetch_failed(PieceIndex(0), t0 + 9s);
    CHECK(f.retry_at(PieceIndex(0)) == t0 + 17s);  // capped at 8 s
    f.plan(in, t0 + 17s);
    f.on_fetch_failed(PieceIndex(0), t0 + 17s);
    CHECK(f.retry_at(PieceIndex(0)) == t0 + 25s);
    // Success clears the failure record.
    f.plan(in, t0 + 25s);
    f.on_fetch_succeeded(PieceIndex(0), 1s);
    CHECK_FALSE(f.retry_at(PieceIndex(0)));
    CHECK(f.succeeded() == 1);
    CHECK(f.started() == 6);
}

TEST_CASE("fetches ahead of need go only to pieces no peer has and are bounded and counted",
          "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {0, 1, 2, 3});
    std::vector<int> avail(50, 2);
    for (int p : {6, 7, 8, 9, 10, 30})
        avail[static_cast<std::size_t>(p)] = 0;
    // Window 1 + 1 + 0.5 = 2.5 s: pieces 0..2 needed (had); ahead window up to 8.5 s: 6, 7 (max_ahead 2).
    FallbackInput in{
        .had = h, .playhead = PieceIndex(0), .piece_duration = 1s, .horizon = 1s, .availability = &avail};
    auto fetches = f.plan(in, t0);
    REQUIRE(fetches.size() == 2);
    // Each fetch carries the media time until its piece is needed (the server's deadline for it).
    CHECK(fetches[0] == FallbackFetch{.piece = PieceIndex(6), .reason = FetchReason::ahead, .due = 6s});
    CHECK(fetches[1] == FallbackFetch{.piece = PieceIndex(7), .reason = FetchReason::ahead, .due = 7s});
    CHECK(f.fetched_ahead() == 2);
    CHECK(f.plan(in, t0).empty());  // bound reached
    f.on_fetch_succeeded(PieceIndex(6), 1s);
    h.set(PieceIndex(6));
    // Piece 6 arrived but the playhead has not reached it: it still counts against the bound, however fast
    // the server is.
    CHECK(f.plan(in, t0 + 1s).empty());
    f.on_fetch_succeeded(PieceIndex(7), 1s);
    h.set(PieceIndex(7));
    CHECK(f.plan(in, t0 + 2s).empty());
    // Once the playhead passes piece 6 one more may be fetched ahead (8 and 9 are now simply needed).
    in.playhead = PieceIndex(7);
    auto more = f.plan(in, t0 + 3s);
    CHECK(more ==
          std::vector<FallbackFetch>{{.piece = PieceIndex(8), .reason = FetchReason::needed, .due = 1s},
                                     {.piece = PieceIndex(9), .reason = FetchReason::needed, .due = 2s},
                                     {.piece = PieceIndex(10), .reason = FetchReason::ahead, .due = 3s}});
    CHECK(f.fetched_ahead() == 3);
    // Piece 30 is far beyond the ahead window: never fetched ahead.
    CHECK_FALSE(f.in_flight(PieceIndex(30)));
}

TEST_CASE("a piece a player waits for is fetched at once whatever its deadline", "[client][fallback]") {
    auto c = config();
    c.max_concurrent = 1;
    FallbackPlanner f(c);
    auto h = had(50, {});
    FallbackInput in{
        .had = h, .playhead = PieceIndex(0), .piece_duration = 1s, .horizon = 1s, .urgent = idx({40, 40})};
    auto fetches = f.plan(in, t0);
    REQUIRE(fetches.size() == 2);
    CHECK(fetches[0] == FallbackFetch{.piece = PieceIndex(40), .reason = FetchReason::urgent, .due = 0s});
    CHECK(fetches[1] == FallbackFetch{.piece = PieceIndex(0),
                                      .reason = FetchReason::needed,
                                      .due = 0s});  // max_concurrent = 1
}

TEST_CASE("a full buffer lets only the playhead piece through", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {});
    std::vector<int> avail(50, 0);
    FallbackInput in{.had = h,
                     .playhead = PieceIndex(5),
                     .piece_duration = 1s,
                     .horizon = 3s,
                     .availability = &avail,
                     .suspended = true};
    CHECK(pieces_of(f.plan(in, t0)) == idx({5}));
}

TEST_CASE("a full buffer still fetches the needed pieces inside its window", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {});
    std::vector<int> avail(50, 0);
    // Window [5, 7): room is kept for 5 and 6; 7 is needed too but lies beyond the window; nothing ahead.
    FallbackInput in{.had = h,
                     .playhead = PieceIndex(5),
                     .piece_duration = 1s,
                     .horizon = 3s,
                     .availability = &avail,
                     .request_end = PieceIndex(7),
                     .suspended = true};
    CHECK(pieces_of(f.plan(in, t0)) == idx({5, 6}));
}

TEST_CASE("the fallback respects the buffer's request end", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(50, {});
    FallbackInput in{.had = h,
                     .playhead = PieceIndex(0),
                     .piece_duration = 1s,
                     .horizon = 10s,
                     .request_end = PieceIndex(3)};
    CHECK(pieces_of(f.plan(in, t0)) == idx({0, 1, 2}));
}

TEST_CASE("an abandoned fetch frees the piece without a penalty", "[client][fallback]") {
    FallbackPlanner f(config());
    auto h = had(10, {});
    FallbackInput in{.had = h, .playhead = PieceIndex(0), .piece_duration = 10s, .horizon = 1s};
    f.plan(in, t0);
    f.on_fetch_abandoned(PieceIndex(0));
    CHECK_FALSE(f.in_flight(PieceIndex(0)));
    CHECK(pieces_of(f.plan(in, t0)) == idx({0}));
    CHECK(f.failed() == 0);
}
