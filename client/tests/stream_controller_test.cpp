// The StreamController's rules, each on constructed swarm samples.
#include <catch2/catch.hpp>

#include <algorithm>

#include "client/core/stream_controller.hpp"
#include "controller_test_support.hpp"

using namespace toast;
using namespace toast::client;
using namespace toast::client::testing;
using namespace std::chrono_literals;

TEST_CASE("with nobody to ask the server takes each piece at its last moment", "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto plan = c.tick(sample(t0));
    // No peer, no tracker: horizon 0, so the need window is the fetch estimate (250 ms before one is
    // measured) + margin (0.5 s): the first piece only.
    CHECK(fetched(plan) == idx({0}));
    CHECK(plan.fetches[0].reason == FetchReason::needed);
    CHECK(plan.apply_pieces);
    CHECK_FALSE(plan.reannounce);
    CHECK_FALSE(plan.leave);
    // A piece is never fetched twice at once.
    CHECK(fetched(c.tick(sample(t0 + 10ms))).empty());
    // Playback starts when it arrives (40 ms: the estimate now); piece 1 is due a second later and is
    // fetched once that is within 40 ms + 0.5 s.
    REQUIRE(c.on_server_data(PieceIndex(0), Bytes(250'000), t0 + 40ms));
    c.on_piece_finished(PieceIndex(0), t0 + 40ms);
    CHECK(fetched(c.tick(sample(t0 + 400ms))).empty());
    CHECK(fetched(c.tick(sample(t0 + 500ms))) == idx({1}));
}

TEST_CASE("while peers are being found only the first piece is the server's", "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(Behavior::stream, true), tuning, t0);
    auto plan = c.tick(sample(t0));
    CHECK(fetched(plan) == idx({0}));
    // The give-up zone is the server's last moment: only piece 0 is not asked of peers.
    CHECK(plan.horizon == PieceCount(1));
    CHECK(plan.pieces.give_up == idx({0}));
    CHECK(plan.pieces.wanted.front() == PieceIndex(1));
}

TEST_CASE("server bytes are written, then counted useful once their hash passes", "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    c.tick(sample(t0));
    REQUIRE(c.on_server_data(PieceIndex(0), Bytes(250'000), t0 + 50ms));
    auto a = c.on_piece_finished(PieceIndex(0), t0 + 60ms);
    CHECK(a.from_server);
    CHECK(a.new_piece);
    CHECK(c.had().has(PieceIndex(0)));
    CHECK(c.fallback().fetch_estimate() == 60ms);  // measured from the fetch's start
    StatsRecord r;
    c.fill_record(r, t0 + 100ms);
    CHECK(r.bytes_server_useful == 250'000);
    CHECK(r.bytes_server_wasted == 0);
    CHECK(r.bytes_from_server == 250'000);
    CHECK(r.pieces_had == 1);
    CHECK_FALSE(r.fidelity);  // server pieces are not peer arrivals
    REQUIRE(r.startup_ms);
    CHECK(*r.startup_ms == 60);
}

TEST_CASE("a piece a peer delivers first makes the server's copy wasted", "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    REQUIRE(fetched(c.tick(sample(t0))) == idx({0}));
    auto a = c.on_piece_finished(PieceIndex(0), t0 + 20ms);
    CHECK_FALSE(a.from_server);
    CHECK(a.cancel_fetch);  // the fetch may still be queued or in flight
    CHECK_FALSE(c.fallback().in_flight(PieceIndex(0)));
    CHECK_FALSE(c.on_server_data(PieceIndex(0), Bytes(250'000), t0 + 40ms));
    StatsRecord r;
    c.fill_record(r, t0 + 50ms);
    CHECK(r.bytes_server_wasted == 250'000);
    CHECK(r.bytes_server_useful == 0);
    REQUIRE(r.fidelity);
}

TEST_CASE("a fetch stopped after a peer delivered its piece wastes only what had arrived of it",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    REQUIRE(fetched(c.tick(sample(t0))) == idx({0}));
    auto a = c.on_piece_finished(PieceIndex(0), t0 + 20ms);
    REQUIRE(a.cancel_fetch);
    c.on_fetch_stopped(PieceIndex(0), Bytes(16'384));  // one block had arrived when it was stopped
    StatsRecord r;
    c.fill_record(r, t0 + 50ms);
    CHECK(r.bytes_server_wasted == 16'384);
    CHECK(r.bytes_server_useful == 0);
    CHECK(r.bytes_from_server == 16'384);
    // The piece is had: the server is not asked for it again.
    CHECK(fetched(c.tick(sample(t0 + 100ms))) != idx({0}));
    CHECK_FALSE(c.fallback().in_flight(PieceIndex(0)));
}

TEST_CASE("a server piece that fails its hash check is wasted and fetched again after a backoff",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    c.tick(sample(t0));
    REQUIRE(c.on_server_data(PieceIndex(0), Bytes(250'000), t0 + 30ms));
    CHECK(c.on_hash_failed(PieceIndex(0), t0 + 40ms));
    CHECK_FALSE(c.on_hash_failed(PieceIndex(5), t0 + 40ms));  // a peer's bad piece is not ours to count
    CHECK(c.hash_failures() == 1);
    auto early = fetched(c.tick(sample(t0 + 100ms)));
    CHECK(std::count(early.begin(), early.end(), PieceIndex(0)) == 0);
    auto retry = fetched(c.tick(sample(t0 + 40ms + tuning.fallback.backoff_initial)));
    CHECK(std::count(retry.begin(), retry.end(), PieceIndex(0)) == 1);
    StatsRecord r;
    c.fill_record(r, t0 + 1s);
    CHECK(r.bytes_server_wasted == 250'000);
}

TEST_CASE("an empty tracker answer is asked again soon while nobody is connected, a bounded number of times",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(Behavior::stream, true), tuning, t0);
    c.tick(sample(t0));
    c.on_tracker_reply(0, t0 + 10ms);
    CHECK_FALSE(c.tick(sample(t0 + 500ms)).reannounce);
    CHECK(c.tick(sample(t0 + 1010ms)).reannounce);
    CHECK_FALSE(c.tick(sample(t0 + 1100ms)).reannounce);  // once per answer
    int asked = 1;
    for (int i = 0; i < 10; ++i) {
        auto at = t0 + 2s + std::chrono::seconds(2 * i);
        c.on_tracker_reply(0, at);
        if (c.tick(sample(at + 1s)).reannounce) ++asked;
    }
    CHECK(asked == tuning.empty_announce_retries);

    // A peer found meanwhile: an empty answer changes nothing.
    StreamController d(geometry(), setup(Behavior::stream, true), tuning, t0);
    auto with_peer = sample(t0, 1);
    with_peer.peers = {viewer()};
    d.tick(with_peer);
    d.on_tracker_reply(0, t0 + 10ms);
    with_peer.now = t0 + 2s;
    CHECK_FALSE(d.tick(with_peer).reannounce);
}

TEST_CASE("a failed announce is asked again soon, backing off, until a tracker answers or a peer connects",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(Behavior::stream, true), tuning, t0);
    c.tick(sample(t0));
    // The failures double the delay from tracker_retry_first (1 s) up to tracker_retry_max (8 s).
    auto at = t0;
    for (auto delay : {1000ms, 2000ms, 4000ms, 8000ms, 8000ms, 8000ms}) {
        c.on_tracker_failed(at);
        CHECK_FALSE(c.tick(sample(at + delay - 10ms)).reannounce);
        CHECK(c.tick(sample(at + delay)).reannounce);
        CHECK_FALSE(c.tick(sample(at + delay + 10ms)).reannounce);  // once per failure
        at += delay;
    }
    // Once a tracker has answered, a failure (another tracker, down) asks nothing more.
    c.on_tracker_reply(3, at);
    c.on_tracker_failed(at + 1s);
    bool asked = false;
    for (int i = 1; i <= 20; ++i)
        asked = asked || c.tick(sample(at + 1s + std::chrono::seconds(i))).reannounce;
    CHECK_FALSE(asked);

    // With a peer connected the swarm carries on: libtorrent's own backoff is left alone.
    StreamController d(geometry(), setup(Behavior::stream, true), tuning, t0);
    auto with_peer = sample(t0, 1);
    with_peer.peers = {viewer()};
    d.tick(with_peer);
    d.on_tracker_failed(t0 + 10ms);
    with_peer.now = t0 + 9s;
    CHECK_FALSE(d.tick(with_peer).reannounce);
}

TEST_CASE("the peer rate is sampled only while some peer has a full request pipeline",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    const double assumed = 250'000;  // the bitrate in bytes per second
    auto s = sample(t0, 1);
    s.peers = {viewer(1'000'000, tuning.saturated_queue - 1)};
    c.tick(s);
    CHECK(c.horizon().peer_rate() == Approx(assumed));  // our own demand, not the peer's capacity
    s.now = t0 + 2s;
    s.peers = {viewer(1'000'000, tuning.saturated_queue)};
    c.tick(s);
    CHECK(c.horizon().peer_rate() ==
          Approx(tuning.horizon.ewma_alpha * 1'000'000 + (1 - tuning.horizon.ewma_alpha) * assumed));
    // At most one sample per interval.
    s.now = t0 + 2s + tuning.rate_sample_interval / 2;
    c.tick(s);
    CHECK(c.horizon().samples() == 1);
}

TEST_CASE("pieces no viewer has are fetched ahead: the operator's seed does not count as a viewer",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto s = sample(t0, 1);
    s.peers = {operator_seed()};
    // Bitfields count only after the discovery grace.
    CHECK(fetched(c.tick(s), FetchReason::ahead).empty());
    s.now = t0 + tuning.discovery_grace;
    auto plan = c.tick(s);
    auto ahead = fetched(plan, FetchReason::ahead);
    REQUIRE(!ahead.empty());
    // Past the need window, at most the fetch-ahead window's worth (8 pieces of 1 s).
    CHECK(ahead.size() <= 8);
    for (auto p : ahead)
        CHECK(c.watcher().time_until_needed(p) <= c.fallback().need_window(c.horizon().horizon_time()) + 8s);

    // A viewer holding the pieces: nothing is fetched ahead.
    StreamController d(geometry(), setup(), tuning, t0);
    auto v = sample(t0 + tuning.discovery_grace, 2);
    v.peers = {operator_seed(), viewer()};
    CHECK(fetched(d.tick(v), FetchReason::ahead).empty());
}

TEST_CASE("a needed piece peers are sending is left to them until the server's last moment",
          "[client][controller]") {
    ClientTuning tuning;
    // Only the operator's seed is connected: no viewer holds a piece, so only what it is sending is left
    // to it. Pieces 0-2 are due within the need window (horizon 1.5 s + lead 0.75 s); piece 0 is inside
    // the lead.
    auto s = sample(t0, 1);
    s.peers = {operator_seed()};
    StreamController plain(geometry(), setup(), tuning, t0);
    CHECK(fetched(plain.tick(s)) == idx({0, 1, 2}));

    StreamController c(geometry(), setup(), tuning, t0);
    s.in_flight = idx({1, 2});
    auto plan = c.tick(s);
    CHECK(fetched(plan) == idx({0}));
    // What the server fetches is no longer asked of peers; what peers are sending still is.
    CHECK(std::count(plan.pieces.wanted.begin(), plan.pieces.wanted.end(), PieceIndex(0)) == 0);
    CHECK(plan.pieces.priority[0] == 0);
    CHECK(std::count(plan.pieces.wanted.begin(), plan.pieces.wanted.end(), PieceIndex(1)) == 1);
}

TEST_CASE("a piece peers have sent part of costs the server only the rest", "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    // Piece 0 (250,000 bytes: 15 blocks of 16 KiB and one of 4,240) is inside the server's last moment;
    // peers have delivered its first five blocks and the eighth.
    auto s = sample(t0, 1);
    s.peers = {operator_seed()};
    s.in_flight = idx({0});
    std::vector<bool> delivered(16, false);
    for (int b : {0, 1, 2, 3, 4, 7})
        delivered[static_cast<std::size_t>(b)] = true;
    s.progress = {PieceProgress{PieceIndex(0), delivered}};
    auto plan = c.tick(s);
    REQUIRE(fetched(plan) == idx({0, 1, 2}));
    CHECK_FALSE(plan.fetches[1].part);  // nothing of it delivered
    REQUIRE(plan.fetches[0].part);
    CHECK(*plan.fetches[0].part == PiecePart{Bytes(5 * 16'384), Bytes(250'000 - 5 * 16'384)});
    // The server's bytes are what it sent, not the piece.
    REQUIRE(c.on_server_data(PieceIndex(0), Bytes(250'000 - 5 * 16'384), t0 + 30ms));
    CHECK(c.on_hash_failed(PieceIndex(0), t0 + 40ms));
    StatsRecord r;
    c.fill_record(r, t0 + 50ms);
    CHECK(r.bytes_server_wasted == 250'000 - 5 * 16'384);
    CHECK(r.pieces_mixed == 0);
    // A retry is fetched whole: one of the peers' blocks may be what failed the check.
    auto retry = c.tick(sample(t0 + 40ms + tuning.fallback.backoff_initial, 1));
    REQUIRE(fetched(retry) == idx({0}));
    CHECK(retry.fetches[0].revalidate);
    CHECK_FALSE(retry.fetches[0].part);
    REQUIRE(c.on_server_data(PieceIndex(0), Bytes(250'000), t0 + 600ms));
    c.on_piece_finished(PieceIndex(0), t0 + 610ms);
    c.fill_record(r, t0 + 700ms);
    CHECK(r.bytes_server_useful == 250'000);
    CHECK(r.bytes_from_server == 250'000 + 250'000 - 5 * 16'384);
    CHECK(r.pieces_mixed == 0);  // the server sent all of it in the end

    SECTION("the rest from the server completes the piece") {
        StreamController d(geometry(), setup(), tuning, t0);
        REQUIRE(fetched(d.tick(s)) == idx({0, 1, 2}));
        REQUIRE(d.on_server_data(PieceIndex(0), Bytes(250'000 - 5 * 16'384), t0 + 30ms));
        REQUIRE(d.on_server_data(PieceIndex(1), Bytes(250'000), t0 + 30ms));
        d.on_piece_finished(PieceIndex(0), t0 + 40ms);
        d.on_piece_finished(PieceIndex(1), t0 + 40ms);
        StatsRecord m;
        d.fill_record(m, t0 + 50ms);
        CHECK(m.bytes_server_useful == 250'000 - 5 * 16'384 + 250'000);
        CHECK(m.pieces_mixed == 1);
    }
}

TEST_CASE("the server is asked for a piece from the first block peers have not delivered to the last",
          "[client][fallback]") {
    const Bytes k(16'384);
    auto part = [&](Bytes size, std::vector<bool> delivered) { return server_part(size, k, delivered); };
    // Nothing delivered (or nothing known): the whole piece.
    CHECK(part(Bytes(65'536), {}) == PiecePart{Bytes(0), Bytes(65'536)});
    CHECK(part(Bytes(65'536), {false, false, false, false}) == PiecePart{Bytes(0), Bytes(65'536)});
    // Peers sent the first blocks in order: the rest.
    CHECK(part(Bytes(65'536), {true, true, false, false}) == PiecePart{Bytes(32'768), Bytes(32'768)});
    // Blocks at both ends delivered: the middle, including a block delivered inside it.
    CHECK(part(Bytes(65'536), {true, false, true, false}) == PiecePart{Bytes(16'384), Bytes(49'152)});
    CHECK(part(Bytes(65'536), {false, true, true, true}) == PiecePart{Bytes(0), Bytes(16'384)});
    // A short last block ends the part at the piece's end.
    CHECK(part(Bytes(40'000), {true, false, false}) == PiecePart{Bytes(16'384), Bytes(23'616)});
    // Every block delivered (the piece is being checked): its last block.
    CHECK(part(Bytes(40'000), {true, true, true}) == PiecePart{Bytes(32'768), Bytes(7'232)});
    CHECK(part(Bytes(10'000), {true}) == PiecePart{Bytes(0), Bytes(10'000)});
}

TEST_CASE("a full bounded buffer ejects watched pieces first and suspends when none is left",
          "[client][controller]") {
    ClientTuning tuning;
    auto st = setup();
    st.buffer_limit = Bytes(750'000);  // three pieces
    StreamController c(geometry(), st, tuning, t0);
    c.on_ready(pieces(40, {0, 1, 2}), t0);
    // Nothing behind the playhead yet: downloading stops.
    auto plan = c.tick(sample(t0));
    CHECK(plan.eject.empty());
    REQUIRE(plan.upload_mode);
    CHECK(*plan.upload_mode);
    CHECK_FALSE(plan.apply_pieces);
    CHECK_FALSE(c.tick(sample(t0 + 100ms)).upload_mode);  // only changes are reported
    // Two seconds in, piece 0 is watched: it goes, and there is room for one more piece.
    plan = c.tick(sample(t0 + 2500ms));
    CHECK(plan.eject == idx({0}));
    CHECK_FALSE(c.stored().has(PieceIndex(0)));
    CHECK(c.had().has(PieceIndex(0)));
    REQUIRE(plan.upload_mode);
    CHECK_FALSE(*plan.upload_mode);
    CHECK(plan.apply_pieces);
    CHECK(c.ejected() == 1);
}

TEST_CASE("the stored bytes count every piece whole and the last one at its own size",
          "[client][controller]") {
    ClientTuning tuning;
    const auto g = *TitleGeometry::make(Bytes(250'000ULL * 39 + 100'000), Bytes(250'000), BitRate(2'000'000));
    REQUIRE(g.piece_count() == PieceCount(40));
    StreamController none(g, setup(), tuning, t0);
    none.on_ready(pieces(40, {}), t0);
    CHECK(none.stored_bytes() == Bytes(0));
    StreamController some(g, setup(), tuning, t0);
    some.on_ready(pieces(40, {0, 1, 7}), t0);
    CHECK(some.stored_bytes() == Bytes(750'000));
    StreamController last(g, setup(), tuning, t0);
    last.on_ready(pieces(40, {0, 39}), t0);
    CHECK(last.stored_bytes() == Bytes(350'000));
    auto all = PieceSet(PieceCount(40));
    all.set_all();
    StreamController whole(g, setup(), tuning, t0);
    whole.on_ready(all, t0);
    CHECK(whole.stored_bytes() == Bytes(9'850'000));
}

TEST_CASE("the behaviour decides when to leave", "[client][controller]") {
    ClientTuning tuning;
    auto all = PieceSet(PieceCount(40));
    all.set_all();
    StreamController download(geometry(), setup(Behavior::download), tuning, t0);
    download.on_ready(all, t0);
    CHECK(download.tick(sample(t0)).leave);

    StreamController stream(geometry(), setup(Behavior::stream), tuning, t0);
    stream.on_ready(all, t0);
    CHECK_FALSE(stream.tick(sample(t0 + 39s)).leave);
    CHECK(stream.tick(sample(t0 + 40s)).leave);

    StreamController seed(geometry(), setup(Behavior::seed), tuning, t0);
    seed.on_ready(all, t0);
    CHECK_FALSE(seed.tick(sample(t0 + 100s)).leave);
}

TEST_CASE("pieces already on disk are had without counting as arrivals, and are never wanted",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto first = c.initial_plan();
    CHECK(first.priority.size() == 40);
    CHECK(first.wanted.size() > 30);
    c.on_ready(pieces(40, {0, 1, 2, 3, 4}), t0);
    auto plan = c.tick(sample(t0, 1));
    for (auto p : plan.pieces.wanted)
        CHECK(p.value() > 4);
    for (auto f : plan.fetches)
        CHECK(f.piece.value() > 4);
    StatsRecord r;
    c.fill_record(r, t0);
    CHECK(r.pieces_had == 5);
    CHECK_FALSE(r.fidelity);
    CHECK(r.inorder_window == std::pair<std::int32_t, std::int32_t>{0, 9});
}

TEST_CASE("same samples, same plans", "[client][controller]") {
    ClientTuning tuning;
    auto run = [&] {
        StreamController c(geometry(), setup(), tuning, t0);
        std::vector<ControllerPlan> plans;
        for (int i = 0; i < 20; ++i) {
            auto s = sample(t0 + std::chrono::milliseconds(200 * i), 2);
            s.peers = {viewer(300'000, 5), viewer(100'000, 1)};
            plans.push_back(c.tick(s));
            for (const auto& f : plans.back().fetches) {
                c.on_server_data(f.piece, Bytes(250'000), s.now);
                c.on_piece_finished(f.piece, s.now + 30ms);
            }
        }
        return plans;
    };
    auto a = run();
    auto b = run();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].pieces == b[i].pieces);
        CHECK(a[i].fetches == b[i].fetches);
    }
}

TEST_CASE("the tracker is told once, when the last piece arrives, whichever way it came",
          "[client][controller]") {
    ClientTuning tuning;
    auto all_but = [](int missing) {
        auto s = PieceSet(PieceCount(40));
        s.set_all();
        s.clear(PieceIndex(missing));
        return s;
    };
    SECTION("from a peer") {
        StreamController c(geometry(), setup(Behavior::seed), tuning, t0);
        c.on_ready(all_but(39), t0);
        CHECK_FALSE(c.tick(sample(t0, 1)).announce_completed);
        c.on_piece_finished(PieceIndex(39), t0 + 1s);
        CHECK(c.tick(sample(t0 + 1s, 1)).announce_completed);
        CHECK_FALSE(c.tick(sample(t0 + 2s, 1)).announce_completed);
    }
    SECTION("from the server") {
        StreamController c(geometry(), setup(Behavior::seed), tuning, t0);
        c.on_ready(all_but(0), t0);
        auto plan = c.tick(sample(t0));
        REQUIRE(fetched(plan) == idx({0}));
        CHECK_FALSE(plan.announce_completed);
        REQUIRE(c.on_server_data(PieceIndex(0), Bytes(250'000), t0 + 100ms));
        c.on_piece_finished(PieceIndex(0), t0 + 200ms);
        CHECK(c.tick(sample(t0 + 300ms)).announce_completed);
        CHECK_FALSE(c.tick(sample(t0 + 400ms)).announce_completed);
    }
    SECTION("a seed from the start is announced as one by libtorrent") {
        StreamController c(geometry(), setup(Behavior::seed), tuning, t0);
        auto all = PieceSet(PieceCount(40));
        all.set_all();
        c.on_ready(all, t0);
        CHECK_FALSE(c.tick(sample(t0)).announce_completed);
    }
}

TEST_CASE("seeds are viewers unless the operator names them", "[client][controller][operator]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto s = sample(t0 + tuning.discovery_grace, 1);
    PeerSample stock_seed;
    stock_seed.seed = true;  // a viewer that finished and keeps seeding, or a stock client
    s.peers = {stock_seed};
    auto plan = c.tick(s);
    // It holds every piece: nothing is fetched ahead, and peers are asked for what lies past the zone.
    CHECK(fetched(plan, FetchReason::ahead).empty());
    CHECK_FALSE(plan.pieces.wanted.empty());

    // The same seed named as the operator's: no viewer holds anything, the frontier fetches ahead.
    StreamController d(geometry(), setup(), tuning, t0);
    s.peers = {operator_seed()};
    CHECK_FALSE(fetched(d.tick(s), FetchReason::ahead).empty());
}

TEST_CASE("an operator peer that is not a seed takes only its own pieces out of the viewers' count",
          "[client][controller][operator]") {
    SwarmSample s;
    s.availability = {3, 2, 1, 0};
    PeerSample partial;
    partial.operator_peer = true;
    partial.pieces = pieces(4, {0, 2});
    PeerSample seed = operator_seed();
    s.peers = {partial, seed, viewer()};
    // The operator's seed holds all four, the partial one 0 and 2; never below zero.
    CHECK(viewer_availability(s) == std::vector<int>{1, 1, 0, 0});
    auto f = peer_figures(s.peers, 4);
    CHECK(f.connected == 3);
    CHECK(f.seeds == 1);
    CHECK(f.operator_peers == 2);
}

TEST_CASE("the peers' rate from idle peers counts seeds and upload-only peers, not the operator's",
          "[client][controller][adaptive]") {
    PeerSample watching = viewer();
    watching.download_rate = 100;
    PeerSample partial = viewer();  // a box seeding what it was pushed
    partial.upload_only = true;
    partial.download_rate = 20;
    PeerSample whole = viewer();
    whole.seed = true;
    whole.download_rate = 3;
    PeerSample op = operator_seed();
    op.download_rate = 4000;
    auto f = peer_figures({watching, partial, whole, op}, 4);
    CHECK(f.rate == 4123);
    CHECK(f.idle_rate == 23);
    CHECK(f.idle == 2);
}

TEST_CASE("the lookahead is counted in the title's pieces, past the server's zone", "[client][controller]") {
    ClientTuning tuning;
    auto st = setup();
    st.lookahead = 4500ms;  // five pieces of one second, rounded up
    StreamController c(geometry(), st, tuning, t0);
    auto first = c.initial_plan();
    REQUIRE_FALSE(first.wanted.empty());
    auto [lo, hi] = std::minmax_element(first.wanted.begin(), first.wanted.end());
    CHECK(hi->value() - lo->value() == 4);
    CHECK(first.wanted.size() == 5);
    c.on_ready(pieces(40, {0, 1, 2, 3, 4, 5, 6, 7}), t0);
    auto plan = c.tick(sample(t0, 1));
    REQUIRE(plan.pieces.wanted.size() == 5);
    for (auto p : plan.pieces.wanted)
        CHECK(p.value() >= 8);
    CHECK(*std::max_element(plan.pieces.wanted.begin(), plan.pieces.wanted.end()) == PieceIndex(12));
    // Without one, the whole title is asked for.
    st.lookahead.reset();
    StreamController whole(geometry(), st, tuning, t0);
    CHECK(whole.initial_plan().wanted.size() > 30);
}
