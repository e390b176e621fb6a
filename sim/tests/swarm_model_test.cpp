#include <catch2/catch.hpp>

#include "client/core/plan_applier.hpp"
#include "sim/core/model_piece_control.hpp"
#include "sim/core/swarm_model.hpp"

using namespace toast::sim;

namespace {

constexpr std::uint64_t kPiece = 256 * 1024;

// A swarm of `pieces` whole pieces.
SwarmModel swarm_of(int pieces) {
    return SwarmModel(pieces, kPiece, kPiece * static_cast<std::uint64_t>(pieces));
}

Member& seed_in(SwarmModel& s, BoxId id, ChokerKind kind = ChokerKind::leader, int slots = 1) {
    MemberSetup ms;
    ms.choker = kind;
    ms.slots = slots;
    ms.operator_peer = true;
    auto& m = s.join(id, ms);
    m.have.set_all();
    return m;
}

// Viewer 1 downloading `pieces`, connected to one operator's seed, 9.
SwarmModel viewer_and_seed(int pieces) {
    auto s = swarm_of(pieces);
    s.join(1, MemberSetup{});
    s.start_download(1);
    seed_in(s, 9);
    s.connect(1, 9);
    return s;
}

}  // namespace

TEST_CASE("a client's options make its member: every choker, its slots and connections", "[sim][swarm]") {
    using toast::client::ChokerOption;
    toast::client::ClientOptions o;
    o.max_connections = 12;
    o.seed = 7;
    const std::pair<ChokerOption, ChokerKind> kinds[] = {
        {ChokerOption::nearest, ChokerKind::nearest},
        {ChokerOption::leader, ChokerKind::leader},
        {ChokerOption::seed, ChokerKind::seed_style},
        {ChokerOption::tit_for_tat, ChokerKind::tit_for_tat}};
    for (const auto& [option, kind] : kinds) {
        o.choker = option;
        const auto ms = member_setup_for(o);
        CHECK(ms.choker == kind);
        CHECK(ms.slots == toast::client::default_unchoke_slots(option));
        CHECK(ms.max_connections == 12);
        CHECK(ms.seed == 7);
        CHECK_FALSE(ms.operator_peer);
    }
    o.unchoke_slots = 3;
    CHECK(member_setup_for(o).slots == 3);
}

TEST_CASE("connections are symmetric, capped, and count the peer's pieces as available", "[sim][swarm]") {
    auto s = swarm_of(8);
    MemberSetup small;
    small.max_connections = 1;
    s.join(1, small);
    s.start_download(1);
    seed_in(s, 9);
    s.join(2, MemberSetup{});
    CHECK(s.connect(1, 9));
    CHECK(!s.connect(9, 1));  // already
    CHECK(!s.connect(1, 2));  // 1 is full
    CHECK(s.connected(9, 1));
    const auto* d = s.find(1);
    CHECK(d->availability == std::vector<int>(8, 1));
    s.on_have(9, 3);  // no change: the seed had it
    s.find(2)->have.set(4);
    s.leave(9);
    CHECK(s.find(1)->availability == std::vector<int>(8, 0));
}

TEST_CASE("the picker takes deadline pieces first, then libtorrent's rarest-by-priority order",
          "[sim][swarm]") {
    auto s = swarm_of(6);
    s.join(1, MemberSetup{});
    s.start_download(1);
    auto& up = seed_in(s, 9);
    s.join(2, MemberSetup{}).have.set(5);
    s.connect(1, 9);
    s.connect(1, 2);
    // Priorities 7 for 0-1, 1 for the rest; piece 5 is held by two peers, the others by one.
    for (int p = 0; p < 6; ++p)
        s.set_priority(1, p, p < 2 ? 7 : 1);
    s.set_deadline(1, 3, 5.0);
    s.set_deadline(1, 2, 4.0);
    const auto& d = *s.find(1);
    const auto picks = s.pick(d, up, 6);
    // Deadlines by time (2 then 3), then 0 and 1 (priority 7), then 4 (priority 1, one peer), then 5 (two
    // peers).
    REQUIRE(picks.size() == 6);
    CHECK(picks[0] == 2);
    CHECK(picks[1] == 3);
    CHECK(((picks[2] == 0 && picks[3] == 1) || (picks[2] == 1 && picks[3] == 0)));
    CHECK(picks[4] == 4);
    CHECK(picks[5] == 5);
    s.reset_deadline(1, 2);
    CHECK(s.find(1)->priority[2] == 1);  // libtorrent puts it back to 1
    s.set_priority(1, 4, 0);
    CHECK(!s.find(1)->wanted.test(4));
}

TEST_CASE("a downloader asks only an uploader that unchokes it, one piece in transfer at a time",
          "[sim][swarm]") {
    auto s = viewer_and_seed(4);
    auto r = s.pump(1, 0.0);
    // The leader choker unchokes the only interested peer at once.
    REQUIRE(r.start.size() == 1);
    CHECK(r.start[0].up == 9);
    CHECK(r.start[0].to == kPiece);
    const int first = r.start[0].piece;
    CHECK(s.pump(1, 0.1).start.empty());  // still sending
    auto done = s.finish_transfer(r.start[0].conn, 1);
    CHECK(done.piece == first);
    CHECK(done.whole);
    CHECK(done.bytes == kPiece);
    s.on_have(1, first);
    auto next = s.pump(1, 0.2);
    REQUIRE(next.start.size() == 1);
    CHECK(next.start[0].piece != first);
}

TEST_CASE("a downloader asks the operator's peer only while its operator tier wants it, other peers always",
          "[sim][swarm]") {
    auto s = viewer_and_seed(4);
    s.find(1)->operator_wanted = false;
    auto r = s.pump(1, 0.0);
    CHECK(r.start.empty());
    CHECK_FALSE(s.connection(s.find(1)->conns.at(0)).towards(1).interested);
    // A viewer seed is asked although the operator's is not.
    MemberSetup viewer;
    viewer.choker = ChokerKind::leader;
    s.join(5, viewer).have.set_all();
    s.connect(1, 5);
    r = s.pump(1, 0.1);
    REQUIRE(r.start.size() == 1);
    CHECK(r.start[0].up == 5);
    // Wanted again: the operator's peer hears interest, unchokes and sends.
    s.find(1)->operator_wanted = true;
    r = s.pump(1, 0.2);
    REQUIRE(r.start.size() == 1);
    CHECK(r.start[0].up == 9);
    CHECK(s.connection(s.find(1)->conns.at(0)).towards(1).interested);
}

TEST_CASE("the nearest-behind choker gives its one slot to the interested peer just behind", "[sim][swarm]") {
    auto s = swarm_of(10);
    auto& up = s.join(1, MemberSetup{});  // nearest, 1 slot
    s.start_download(1);
    for (int p = 0; p < 6; ++p)
        up.have.set(p);
    auto& far = s.join(2, MemberSetup{});
    s.start_download(2);
    far.have.set(0);
    auto& near = s.join(3, MemberSetup{});
    s.start_download(3);
    for (int p = 0; p < 4; ++p)
        near.have.set(p);
    s.connect(1, 2);
    s.connect(1, 3);
    s.pump(2, 0.0);  // both tell the uploader they are interested
    s.pump(3, 0.0);
    s.choke_round(*s.find(1), true, 0.0);
    auto unchoked = [&](BoxId d) {
        for (int c : s.find(1)->conns)
            if (s.connection(c).other(1) == d) return s.connection(c).towards(d).unchoked;
        return false;
    };
    CHECK(unchoked(3));
    CHECK(!unchoked(2));
}

TEST_CASE("a playing viewer with a chain gap gives its slot to the nearest peer that far behind its playhead",
          "[sim][swarm]") {
    using namespace std::chrono_literals;
    // One-second pieces; the uploader plays at 5.5 s and holds pieces 0-5.
    SwarmModel s(10, kPiece, kPiece * 10, 1.0);
    auto& up = s.join(1, MemberSetup{});  // nearest, 1 slot
    s.start_download(1);
    for (int p = 0; p < 6; ++p)
        up.have.set(p);
    auto join_at = [&](BoxId id, int had) {
        auto& m = s.join(id, MemberSetup{});
        s.start_download(id);
        for (int p = 0; p < had; ++p)
            m.have.set(p);
    };
    join_at(2, 5);  // at 5 s: half a second behind the playhead
    join_at(3, 4);  // at 4 s: 1.5 s behind
    join_at(4, 1);  // at 1 s
    for (BoxId d : {2, 3, 4}) {
        s.connect(1, d);
        s.pump(d, 0.0);  // interested
    }
    auto unchoked = [&](BoxId d) {
        for (int c : s.find(1)->conns)
            if (s.connection(c).other(1) == d) return s.connection(c).towards(d).unchoked;
        return false;
    };
    // Without a playhead: the nearest behind.
    s.choke_round(*s.find(1), true, 0.0);
    CHECK(unchoked(2));
    // Playing, the chain's gap 1.125 s: the nearest at least that far behind the playhead.
    s.find(1)->playhead = 5500ms;
    s.find(1)->chain_gap = 1125ms;
    s.choke_round(*s.find(1), true, 0.0);
    CHECK(unchoked(3));
    CHECK(!unchoked(2));
    CHECK(!unchoked(4));
}

TEST_CASE("a stopped transfer keeps the bytes delivered, and the rest is asked for later", "[sim][swarm]") {
    auto s = viewer_and_seed(2);
    auto r = s.pump(1, 0.0);
    REQUIRE(r.start.size() == 1);
    const int p = r.start[0].piece;
    auto c = s.cancel_transfer(r.start[0].conn, 1, 100'000);
    CHECK(c.bytes == 100'000);
    CHECK(!c.whole);
    CHECK(s.find(1)->partial.at(p).covers(0, 100'000));
    CHECK(!s.find(1)->partial.at(p).has(100'000));
    auto again = s.resume_transfer(r.start[0].conn, 1, p, 100'000, 200'000);
    CHECK(again.from == 100'000);
    auto part = s.finish_transfer(r.start[0].conn, 1);
    CHECK(!part.whole);
    CHECK(s.find(1)->partial.at(p).covers(0, 200'000));
    CHECK(s.find(1)->partial.at(p).total() == 200'000);
    s.on_have(1, p);
    CHECK(s.find(1)->partial.count(p) == 0);
}

TEST_CASE("a leaving uploader's transfer is reported for cancelling", "[sim][swarm]") {
    auto s = viewer_and_seed(4);
    auto r = s.pump(1, 0.0);
    REQUIRE(r.start.size() == 1);
    s.leave(9);
    auto after = s.pump(1, 0.1);
    REQUIRE(after.cancel.size() == 1);
    CHECK(after.cancel[0].piece == r.start[0].piece);
    s.cancel_transfer(after.cancel[0].conn, 1, 0);
    CHECK(s.find(1)->conns.empty());
    CHECK(s.find(1)->availability == std::vector<int>(4, 0));
}

TEST_CASE("the PlanApplier's calls reach the model as libtorrent would hold them", "[sim][swarm]") {
    auto s = swarm_of(6);
    s.join(1, MemberSetup{});
    s.start_download(1);
    ModelPieceControl control(s, 1);
    control.set_now(10.0);
    toast::client::PlanApplier applier(toast::client::PieceCount(6));
    toast::client::PiecePlan plan;
    plan.wanted = {toast::client::PieceIndex(0), toast::client::PieceIndex(1)};
    plan.priority = {7, 6, 0, 0, 0, 0};
    plan.deadlines = {{toast::client::PieceIndex(0), std::chrono::milliseconds(500)}};
    applier.apply(plan, toast::client::PieceSet(toast::client::PieceCount(6)), 0, control);
    const auto& m = *s.find(1);
    CHECK(m.priority == std::vector<std::uint8_t>{7, 6, 0, 0, 0, 0});
    CHECK(m.deadline.at(0) == Approx(10.5));
    CHECK(m.wanted.test(1));
    CHECK(!m.wanted.test(2));
}

TEST_CASE("an idle uploader takes the second half of what another peer still has to send", "[sim][swarm]") {
    auto s = swarm_of(1);
    s.join(1, MemberSetup{});
    s.start_download(1);
    seed_in(s, 8, ChokerKind::stock_seed, 8);
    seed_in(s, 9, ChokerKind::stock_seed, 8);
    s.connect(1, 8);
    auto first = s.pump(1, 0.0);
    REQUIRE(first.start.size() == 1);  // the only piece, from seed 8
    CHECK(first.start[0].up == 8);
    s.connect(1, 9);
    // Seed 8 has delivered 64 KiB of the 256 KiB piece: seed 9 takes [160 KiB, 256 KiB).
    auto r = s.pump(1, 0.1, [](int) -> std::uint64_t { return 64 * 1024; });
    REQUIRE(r.split.size() == 1);
    CHECK(r.split[0].conn == first.start[0].conn);
    CHECK(r.split[0].at == 160 * 1024);
    REQUIRE(r.start.size() == 1);
    CHECK(r.start[0].up == 9);
    CHECK(r.start[0].from == 160 * 1024);
    CHECK(r.start[0].to == kPiece);
    // The adapter cuts seed 8's transfer at the split; both halves arriving make the piece whole.
    s.cancel_transfer(first.start[0].conn, 1, 64 * 1024);
    s.resume_transfer(first.start[0].conn, 1, 0, 64 * 1024, 160 * 1024);
    CHECK(!s.finish_transfer(r.start[0].conn, 1).whole);
    CHECK(s.find(1)->requested.test(0));  // still coming from seed 8
    CHECK(s.finish_transfer(first.start[0].conn, 1).whole);
    CHECK(!s.find(1)->requested.test(0));
}

TEST_CASE("a new piece wakes the unchoked peers idle on us that want it", "[sim][swarm]") {
    auto s = swarm_of(4);
    auto& up = s.join(1, MemberSetup{});
    s.start_download(1);
    up.have.set(0);
    s.join(2, MemberSetup{});
    s.start_download(2);
    s.connect(1, 2);
    auto first = s.pump(2, 0.0);  // 2 asks 1 for piece 0, the only one 1 has
    REQUIRE(first.start.size() == 1);
    CHECK(s.would_request(1, 1).empty());  // busy sending piece 0
    s.finish_transfer(first.start[0].conn, 2);
    s.on_have(2, 0);
    s.on_have(1, 1);
    CHECK(s.would_request(1, 1) == std::vector<BoxId>{2});
    s.set_priority(2, 1, 0);  // not wanted any more
    CHECK(s.would_request(1, 1).empty());
}

TEST_CASE("a pipe's request queue follows its measured rate once slow start ends", "[sim][swarm]") {
    auto s = viewer_and_seed(4);
    auto r = s.pump(1, 0.0);
    REQUIRE(r.start.size() == 1);
    const int conn = r.start[0].conn;
    const auto& pipe = s.connection(conn).towards(1);
    CHECK(pipe.pipeline.slow_start());
    CHECK(pipe.pipeline.depth(pipe.rate, pipe.delivered) == 4);
    // An operator's peer shared by many viewers: 10 kB/s to this one, a second like the one before.
    s.set_rate(conn, 1, 10'000, 1.0);
    s.set_rate(conn, 1, 10'000, 1.0);
    CHECK(pipe.rate == 10'000);
    CHECK_FALSE(pipe.pipeline.slow_start());
    CHECK(pipe.pipeline.depth(pipe.rate, pipe.delivered) == 2);
}

TEST_CASE("libtorrent's NOT_INTERESTED ends slow start, the operator tier's does not", "[sim][swarm]") {
    auto s = viewer_and_seed(4);
    MemberSetup viewer;
    viewer.choker = ChokerKind::leader;
    s.join(5, viewer).have.set(0);  // a viewer holding piece 0 only
    s.connect(1, 5);
    s.pump(1, 0.0);
    const auto& m = *s.find(1);
    const auto& to_op = s.connection(m.conns.at(0)).towards(1);
    const auto& to_viewer = s.connection(m.conns.at(1)).towards(1);
    REQUIRE(to_op.interested);
    REQUIRE(to_viewer.interested);
    s.find(1)->operator_wanted = false;
    s.on_have(1, 0);  // piece 0 came: nothing of the viewer's is wanted
    s.pump(1, 0.1);
    CHECK_FALSE(to_op.interested);
    CHECK(to_op.pipeline.slow_start());
    CHECK_FALSE(to_viewer.interested);
    CHECK_FALSE(to_viewer.pipeline.slow_start());
}

TEST_CASE("an uploader splitting a transfer started in the same pump shortens it, no byte sent twice",
          "[sim][swarm]") {
    auto s = swarm_of(1);
    s.join(1, MemberSetup{});
    s.start_download(1);
    seed_in(s, 8, ChokerKind::stock_seed, 8);
    seed_in(s, 9, ChokerKind::stock_seed, 8);
    s.connect(1, 8);
    s.connect(1, 9);
    // Both unchoke at once: seed 8 starts the only piece, seed 9 takes the second half of it.
    auto r = s.pump(1, 0.0, [](int) -> std::uint64_t { return 0; });
    CHECK(r.split.empty());
    REQUIRE(r.start.size() == 2);
    CHECK(r.start[0].up == 8);
    CHECK(r.start[0].from == 0);
    CHECK(r.start[0].to == kPiece / 2);
    CHECK(r.start[1].up == 9);
    CHECK(r.start[1].from == kPiece / 2);
    CHECK(r.start[1].to == kPiece);
    CHECK(s.connection(r.start[0].conn).towards(1).to == kPiece / 2);
    CHECK(!s.finish_transfer(r.start[1].conn, 1).whole);
    CHECK(s.finish_transfer(r.start[0].conn, 1).whole);
}
