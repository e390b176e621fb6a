#include <catch2/catch.hpp>

#include <algorithm>

#include "client/core/stream_controller.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

const SteadyTime t0{std::chrono::seconds(1000)};

// 40 pieces of 250,000 bytes at 2 Mbps: one piece is one second of video.
TitleGeometry geometry(int pieces = 40) {
    return *TitleGeometry::make(Bytes(250'000ULL * static_cast<std::uint64_t>(pieces)), Bytes(250'000),
                                BitRate(2'000'000));
}

ControllerSetup setup(Behavior behavior = Behavior::stream, bool trackers = false) {
    ControllerSetup s;
    s.picker = PickerKind::hybrid;
    s.behavior = behavior;
    s.inorder_window = 10s;
    s.has_server = true;
    s.has_trackers = trackers;
    return s;
}

std::vector<PieceIndex> idx(std::initializer_list<int> list) {
    std::vector<PieceIndex> out;
    for (int p : list)
        out.emplace_back(p);
    return out;
}

std::vector<PieceIndex> fetched(const ControllerPlan& plan, std::optional<FetchReason> reason = {}) {
    std::vector<PieceIndex> out;
    for (const auto& f : plan.fetches)
        if (!reason || f.reason == *reason) out.push_back(f.piece);
    return out;
}

PieceSet pieces(int n, std::initializer_list<int> list) {
    PieceSet s{PieceCount(n)};
    for (int p : list)
        s.set(PieceIndex(p));
    return s;
}

// A sample at `now` of a 40-piece title where `holders` peers hold every piece.
SwarmSample sample(SteadyTime now, int holders = 0) {
    SwarmSample s;
    s.now = now;
    s.availability.assign(40, holders);
    return s;
}

PeerSample viewer(double rate = 0, int queue = 0) {
    PeerSample p;
    p.download_rate = rate;
    p.queue_length = queue;
    return p;
}

PeerSample operator_seed() {
    PeerSample p;
    p.seed = true;
    p.operator_peer = true;
    return p;
}

}  // namespace

TEST_CASE("with nobody to ask the server takes each piece just in time", "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto plan = c.tick(sample(t0));
    // No peer, no tracker: horizon 0, so the need window is the fetch estimate (1 s) + margin (0.5 s).
    CHECK(fetched(plan) == idx({0, 1}));
    CHECK(plan.fetches[0].reason == FetchReason::needed);
    CHECK(plan.apply_pieces);
    CHECK_FALSE(plan.reannounce);
    CHECK_FALSE(plan.leave);
    // A piece is never fetched twice at once.
    CHECK(fetched(c.tick(sample(t0 + 10ms))).empty());
}

TEST_CASE("until the tracker answers one peer is assumed and the server fetches earlier",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(Behavior::stream, true), tuning, t0);
    // One assumed peer at the bitrate: horizon 1 s delivery + 0.5 s; need window 3 s: pieces due at 0..3 s.
    auto plan = c.tick(sample(t0));
    CHECK(fetched(plan) == idx({0, 1, 2, 3}));
    // The give-up zone is the need window plus one delivery time: pieces due before 4 s are the server's.
    CHECK(plan.horizon == PieceCount(4));
    CHECK(plan.pieces.give_up == idx({0, 1, 2, 3}));
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
    REQUIRE(fetched(c.tick(sample(t0))) == idx({0, 1}));
    auto a = c.on_piece_finished(PieceIndex(1), t0 + 20ms);
    CHECK_FALSE(a.from_server);
    CHECK(a.cancel_fetch);  // the fetch may still be queued
    CHECK_FALSE(c.fallback().in_flight(PieceIndex(1)));
    CHECK_FALSE(c.on_server_data(PieceIndex(1), Bytes(250'000), t0 + 40ms));
    StatsRecord r;
    c.fill_record(r, t0 + 50ms);
    CHECK(r.bytes_server_wasted == 250'000);
    CHECK(r.bytes_server_useful == 0);
    REQUIRE(r.fidelity);
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

TEST_CASE("a needed piece peers are sending and will finish in time is left to them",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto s = sample(t0, 1);
    s.peers = {viewer(250'000, 0)};
    // Piece 2 is due in 2 s; peers owe 50 kB of it at 250 kB/s: 0.2 s + the server's lead (1.5 s) fits.
    // Piece 1 is due in 1 s: the same would not fit, so the server takes it.
    s.in_flight = {{PieceIndex(1), Bytes(10'000)}, {PieceIndex(2), Bytes(40'000)}};
    auto plan = c.tick(s);
    CHECK(fetched(plan) == idx({0, 1, 3}));
}

TEST_CASE("a server that cannot be reached gives nothing up: peers may have the pieces near the playhead",
          "[client][controller]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    auto s = sample(t0, 1);
    s.peers = {viewer()};
    s.server_up = false;
    auto plan = c.tick(s);
    CHECK(plan.horizon == PieceCount(0));
    CHECK(plan.pieces.give_up.empty());
    CHECK(plan.pieces.wanted.front() == PieceIndex(0));
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
