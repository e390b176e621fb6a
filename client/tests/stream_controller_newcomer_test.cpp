// The StreamController over time: a newcomer stepped every 100 ms in a simulated swarm, its startup and what
// the adaptive picker turns into as its peers carry more or less of the stream.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "client/core/stream_controller.hpp"
#include "controller_test_support.hpp"

using namespace toast;
using namespace toast::client;
using namespace toast::client::testing;
using namespace std::chrono_literals;

namespace {

// A newcomer in a swarm, stepped every 100 ms: the tracker answers at 20 ms, peers holding every piece
// connect at 50 ms; asked for a piece, they deliver it `delivery` later, up to `parallel` at once (never, if
// `delivery` is zero). They report the rate they deliver at. The server delivers a fetch 30 ms after it was
// planned.
struct Newcomer {
    ClientTuning tuning;
    StreamController c;
    std::chrono::milliseconds delivery;
    int parallel;
    std::map<PieceIndex, SteadyTime> asked;  // piece -> when peers were asked for it
    std::vector<std::pair<PieceIndex, SteadyTime>> from_server;
    int server_pieces = 0;
    double peer_bytes = 0;  // of pieces peers finished, or stopped sending when the server took them

    // What peers have sent of a piece asked for at `asked_at`: its blocks arrive evenly over `delivery`.
    double sent(SteadyTime asked_at, SteadyTime at) const {
        if (delivery.count() <= 0) return 0;
        return 250'000.0 * std::min(1.0, std::chrono::duration<double>(at - asked_at) / delivery);
    }

    Newcomer(std::chrono::milliseconds d, int par, PickerKind picker = PickerKind::hybrid)
        : c(geometry(), with_picker(setup(Behavior::stream, true), picker), tuning, t0),
          delivery(d),
          parallel(par) {}
    static ControllerSetup with_picker(ControllerSetup s, PickerKind picker) {
        s.picker = picker;
        return s;
    }

    void run(std::chrono::milliseconds length) {
        for (auto at = t0; at < t0 + length; at += 100ms) {
            if (at == t0 + 100ms) c.on_tracker_reply(3, t0 + 20ms);
            // Deliveries due by now.
            for (auto it = from_server.begin(); it != from_server.end();) {
                if (it->second > at) {
                    ++it;
                    continue;
                }
                if (c.on_server_data(it->first, Bytes(250'000), it->second))
                    c.on_piece_finished(it->first, it->second);
                it = from_server.erase(it);
            }
            for (auto it = asked.begin(); it != asked.end();) {
                if (delivery.count() > 0 && it->second + delivery <= at) {
                    c.on_piece_finished(it->first, it->second + delivery);
                    peer_bytes += 250'000;
                    it = asked.erase(it);
                } else {
                    ++it;
                }
            }
            auto s = sample(at, at >= t0 + 50ms ? 3 : 0);
            if (at >= t0 + 50ms) s.peers = {viewer(), viewer(), viewer()};
            double rate = 0;
            double in_flight_sent = 0;
            for (const auto& entry : asked) {
                s.in_flight.push_back(entry.first);
                in_flight_sent += sent(entry.second, at);
                if (delivery.count() > 0) rate += 250'000.0 / std::chrono::duration<double>(delivery).count();
            }
            for (std::size_t i = 0; i < s.peers.size() && !asked.empty(); ++i) {
                s.peers[i].download_rate = rate / static_cast<double>(s.peers.size());
                s.peers[i].queue_length = 8;
            }
            s.from_peers = Bytes(static_cast<std::uint64_t>(peer_bytes + in_flight_sent));
            auto plan = c.tick(s);
            for (const auto& f : plan.fetches) {
                UNSCOPED_INFO("server fetch of piece " << f.piece.value() << " at " << (at - t0) / 1ms
                                                       << " ms, playhead "
                                                       << c.watcher().playhead_piece().value());
                ++server_pieces;
                if (auto a = asked.find(f.piece); a != asked.end()) {
                    peer_bytes += sent(a->second, at);
                    asked.erase(a);
                }
                from_server.emplace_back(f.piece, at + 30ms);
            }
            // Peers take the plan's most wanted pieces they are not sending yet.
            if (at >= t0 + 50ms) {
                for (auto p : plan.pieces.wanted) {
                    if (static_cast<int>(asked.size()) >= parallel) break;
                    if (!asked.count(p) && !c.had().has(p)) asked.emplace(p, at);
                }
            }
        }
    }
    StatsRecord record(SteadyTime at) const {
        StatsRecord r;
        c.fill_record(r, at);
        return r;
    }
};

// The same newcomer with a fixed picker and with the adaptive picker, each run for `length`.
struct FixedAndAdaptive {
    Newcomer fixed;
    Newcomer adaptive;
    StatsRecord f;
    StatsRecord a;
    FixedAndAdaptive(PickerKind picker, std::chrono::milliseconds delivery, int parallel,
                     std::chrono::milliseconds length)
        : fixed(delivery, parallel, picker), adaptive(delivery, parallel, PickerKind::adaptive) {
        fixed.run(length);
        adaptive.run(length);
        f = fixed.record(t0 + length);
        a = adaptive.record(t0 + length);
    }
};

}  // namespace

TEST_CASE("a newcomer whose peers hold its first pieces takes only the first one from the server",
          "[client][controller][startup]") {
    // Peers deliver a piece in 300 ms, two at once: more than the bitrate, not instantly. (Piece 1 is due a
    // second after playback starts, and the server's last moment for it is half a second before that.)
    Newcomer n(300ms, 2);
    n.run(12s);
    auto r = n.record(t0 + 12s);
    CHECK(n.server_pieces == 1);
    CHECK(r.bytes_server_useful == 250'000);
    CHECK(r.stalls == 0);
    REQUIRE(r.startup_ms);
    CHECK(*r.startup_ms <= 100);  // the first piece, from the server, at once
    CHECK(r.pieces_had >= 12);
    CHECK(r.tracker_ms == 20);
    REQUIRE(r.first_piece_ms);
    CHECK(*r.first_piece_ms == 30);
}

TEST_CASE("peers that never deliver leave every piece to the server at its last moment, without a stall",
          "[client][controller][startup]") {
    Newcomer n(0ms, 4);
    n.run(12s);
    auto r = n.record(t0 + 12s);
    CHECK(r.stalls == 0);
    CHECK(r.bytes_from_server == r.bytes_server_useful);
    // Each piece a second apart, fetched about half a second before it is due: 12 s of playback.
    CHECK(n.server_pieces >= 12);
    CHECK(n.server_pieces <= 14);
}

TEST_CASE("peers carrying half the bitrate turn the adaptive picker into beta",
          "[client][controller][adaptive]") {
    // Two pieces at a time, 4 s each: peers carry half the bitrate.
    FixedAndAdaptive run(PickerKind::hybrid, 4000ms, 2, 30s);
    const auto& h = run.f;
    const auto& a = run.a;
    CHECK(h.stalls == 0);
    CHECK(a.stalls == 0);
    CHECK_FALSE(h.adaptive_share);
    CHECK_FALSE(h.adaptive_peer_ratio);
    REQUIRE(a.adaptive_peer_ratio);
    CHECK(*a.adaptive_peer_ratio == Approx(0.5).margin(0.05));
    REQUIRE(a.adaptive_share);
    CHECK(*a.adaptive_share == 0.0);
    // No in-order window (hybrid keeps its 10 s one), so no piece gets a deadline: beta from the zone on.
    CHECK_FALSE(a.inorder_window);
    REQUIRE(h.inorder_window);
    // Whether beta does better there is the testbed's to measure (testbed/README.md, Fig. 5.3).
}

TEST_CASE("peers carrying most of the bitrate turn the adaptive picker into in-order",
          "[client][controller][adaptive]") {
    // Seven pieces at a time, 8 s each: peers carry 7/8 of the bitrate, the server the rest.
    FixedAndAdaptive run(PickerKind::hybrid, 8000ms, 7, 20s);
    const auto& h = run.f;
    const auto& a = run.a;
    CHECK(a.stalls == 0);
    const AdaptiveConfig tuning = ClientTuning{}.adaptive;
    REQUIRE(a.adaptive_peer_ratio);
    CHECK(*a.adaptive_peer_ratio >= tuning.inorder_ratio);
    CHECK(*a.adaptive_peer_ratio < 1.0);
    REQUIRE(a.adaptive_share);
    CHECK(*a.adaptive_share == 1.0);
    // The rest of the title in order, where hybrid keeps 10 s and beta beyond it.
    REQUIRE(a.inorder_window);
    CHECK(a.inorder_window->second == 39);
    REQUIRE(h.inorder_window);
    CHECK(h.inorder_window->second - h.inorder_window->first == 9);
}

TEST_CASE("peers carrying a little more than the beta ratio keep a share of the window",
          "[client][controller][adaptive]") {
    // Eight pieces at a time, 11 s each: peers carry 8/11 of the bitrate, half way between the beta and
    // hybrid ratios.
    FixedAndAdaptive run(PickerKind::hybrid, 11000ms, 8, 30s);
    const auto& a = run.a;
    CHECK(a.stalls == 0);
    const AdaptiveConfig tuning = ClientTuning{}.adaptive;
    REQUIRE(a.adaptive_peer_ratio);
    CHECK(*a.adaptive_peer_ratio > tuning.beta_ratio);
    CHECK(*a.adaptive_peer_ratio < tuning.hybrid_ratio);
    REQUIRE(a.adaptive_share);
    CHECK(*a.adaptive_share > 0.0);
    CHECK(*a.adaptive_share < 1.0);
    REQUIRE(a.inorder_window);
    CHECK(a.inorder_window->second - a.inorder_window->first < 9);  // less than hybrid's 10 s
}

TEST_CASE("peers that carry more than the stream turn the adaptive picker into in-order",
          "[client][controller][adaptive]") {
    // Two pieces at a time, 300 ms each: peers could carry several times the bitrate.
    FixedAndAdaptive run(PickerKind::inorder, 300ms, 2, 20s);
    const auto& i = run.f;
    const auto& a = run.a;
    CHECK(a.late_pieces == 0);
    REQUIRE(a.adaptive_peer_ratio);
    CHECK(*a.adaptive_peer_ratio >= ClientTuning{}.adaptive.inorder_ratio);
    REQUIRE(a.adaptive_share);
    CHECK(*a.adaptive_share == 1.0);
    // The whole rest of the title in order, as the in-order picker keeps it, and the same server pieces.
    REQUIRE(a.inorder_window);
    CHECK(a.inorder_window->second == 39);
    CHECK(a.inorder_window == i.inorder_window);
    CHECK(run.adaptive.server_pieces == run.fixed.server_pieces);
    CHECK(a.bytes_from_server == i.bytes_from_server);
}

TEST_CASE("the adaptive picker measures its peers by the bytes they delivered, not by libtorrent's rates",
          "[client][controller][adaptive]") {
    ClientTuning tuning;
    auto s = setup(Behavior::stream, true);
    s.picker = PickerKind::adaptive;
    StreamController c(geometry(), s, tuning, t0);
    // New connections: libtorrent's five-second averages still read a tenth of what arrives, while the
    // bytes received grow at the bitrate (250 kB/s) with a full request pipeline.
    for (int second = 0; second <= 3; ++second) {
        auto sample_at = sample(t0 + std::chrono::seconds(second), 3);
        sample_at.peers = {viewer(8'000, 8), viewer(8'000, 8), viewer(8'000, 8)};
        sample_at.from_peers = Bytes(static_cast<std::uint64_t>(second) * 250'000);
        c.tick(sample_at);
    }
    StatsRecord r;
    c.fill_record(r, t0 + 3s);
    REQUIRE(r.adaptive_peer_ratio);
    CHECK(*r.adaptive_peer_ratio == Approx(1.0));
    REQUIRE(r.adaptive_share);
    CHECK(*r.adaptive_share == 1.0);
    // Not saturated (no peer has a full pipeline): what arrived is what was asked for, not a measure.
    auto idle = sample(t0 + 4s, 3);
    idle.peers = {viewer(8'000, 1)};
    idle.from_peers = Bytes(800'000);
    c.tick(idle);
    c.fill_record(r, t0 + 4s);
    CHECK(*r.adaptive_peer_ratio == Approx(1.0));
    // The next saturated sample counts the second since the last one: 50 kB, 0.2 of the bitrate.
    auto busy = sample(t0 + 5s, 3);
    busy.peers = {viewer(8'000, 8)};
    busy.from_peers = Bytes(850'000);
    c.tick(busy);
    c.fill_record(r, t0 + 5s);
    CHECK(*r.adaptive_peer_ratio == Approx(0.8 + 0.2 * 0.2));
}

TEST_CASE("the adaptive picker starts from the client's own upload cap over the bitrate",
          "[client][controller][adaptive]") {
    ClientTuning tuning;
    auto s = setup(Behavior::stream, true);
    s.picker = PickerKind::adaptive;
    StatsRecord r;
    // Half the bitrate (2 Mbps): beta from the first plan, before any peer is measured.
    s.upload_limit = BitRate(1'000'000);
    StreamController half(geometry(), s, tuning, t0);
    half.on_ready(pieces(40, {}), t0);
    auto plan = half.tick(sample(t0 + 200ms, 1));
    CHECK(plan.pieces.deadlines.empty());  // no piece is kept in order
    CHECK_FALSE(plan.pieces.wanted.empty());
    half.fill_record(r, t0 + 200ms);
    CHECK_FALSE(r.adaptive_peer_ratio);
    REQUIRE(r.adaptive_share);
    CHECK(*r.adaptive_share == 0.0);
    CHECK_FALSE(r.inorder_window);
    // No cap: hybrid with the whole window until the first sample.
    s.upload_limit.reset();
    StreamController unknown(geometry(), s, tuning, t0);
    unknown.on_ready(pieces(40, {}), t0);
    unknown.tick(sample(t0 + 200ms, 1));
    unknown.fill_record(r, t0 + 200ms);
    REQUIRE(r.inorder_window);
    CHECK(r.inorder_window->second - r.inorder_window->first == 9);
}
