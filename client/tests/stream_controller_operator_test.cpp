// The StreamController and the operator's peers: asked for pieces only when the server fallback would go to
// the server (OperatorTier), told otherwise that we are not interested.
#include <catch2/catch.hpp>

#include "client/core/stream_controller.hpp"
#include "controller_test_support.hpp"

using namespace toast;
using namespace toast::client;
using namespace toast::client::testing;
using namespace std::chrono_literals;

TEST_CASE("the operator's seed is asked only for what no viewer holds within the fallback's reach",
          "[client][controller][operator]") {
    ClientTuning tuning;
    SECTION("viewers hold every piece: the operator's seed is left alone") {
        StreamController c(geometry(), setup(), tuning, t0);
        auto s = sample(t0, 2);
        PeerSample idle_viewer;
        idle_viewer.seed = true;  // a viewer that watched the title and keeps seeding it
        s.peers = {operator_seed(), idle_viewer};
        CHECK_FALSE(c.tick(s).ask_operator);
        s.now = t0 + tuning.discovery_grace;
        CHECK_FALSE(c.tick(s).ask_operator);
        CHECK(c.operator_tier().turned_on() == 0);
    }
    SECTION("the first viewer: nobody but the operator holds the pieces ahead") {
        StreamController c(geometry(), setup(), tuning, t0);
        auto s = sample(t0, 1);
        s.peers = {operator_seed()};
        // Bitfields count only after the discovery grace: until then the server fetches what is needed.
        CHECK_FALSE(c.tick(s).ask_operator);
        s.now = t0 + tuning.discovery_grace;
        CHECK(c.tick(s).ask_operator);
        CHECK(c.operator_tier().reason() == OperatorNeed::no_viewers);
    }
    SECTION("a viewer ahead that holds only the next few seconds") {
        StreamController c(geometry(), setup(), tuning, t0);
        c.on_ready(pieces(40, {0}), t0);
        auto s = sample(t0 + tuning.discovery_grace, 2);
        for (int p = 30; p < 40; ++p)
            s.availability[static_cast<std::size_t>(p)] = 1;
        s.peers = {operator_seed(), viewer()};
        // The viewer holds pieces 1..29: the fallback's reach (its need window and 8 s ahead) ends well
        // before 30.
        CHECK_FALSE(c.tick(s).ask_operator);
        // Piece 9 is held by nobody but the operator.
        s.availability[9] = 1;
        s.now += 200ms;
        CHECK(c.tick(s).ask_operator);
        CHECK(c.operator_tier().reason() == OperatorNeed::unheld_piece);
        // A viewer got it: the seed stays asked for the hold, then is left alone.
        s.availability[9] = 2;
        s.now += tuning.operator_tier.hold - 200ms;
        CHECK(c.tick(s).ask_operator);
        s.now += 200ms;
        CHECK_FALSE(c.tick(s).ask_operator);
    }
}

TEST_CASE("viewers late with pieces they hold bring the operator's seed in",
          "[client][controller][operator]") {
    ClientTuning tuning;
    StreamController c(geometry(), setup(), tuning, t0);
    c.on_ready(pieces(40, {0}), t0);
    // Two viewers hold every piece, are asked for them, and never deliver. The first seconds' pieces are the
    // server's whatever happens: lateness counts from late_from on.
    bool asked = false;
    for (auto at = t0; at < t0 + 12s && !asked; at += 200ms) {
        auto s = sample(at, 3);
        s.peers = {operator_seed(), viewer(), viewer()};
        auto plan = c.tick(s);
        asked = plan.ask_operator;
        for (const auto& f : plan.fetches) {
            c.on_server_data(f.piece, Bytes(250'000), at + 20ms);
            c.on_piece_finished(f.piece, at + 30ms);
        }
        if (asked) {
            CHECK(at - t0 >= tuning.operator_tier.late_from);
            // The server took the piece at its last moment: the viewers were late.
            CHECK(c.late_pieces() > 0);
            CHECK_FALSE(fetched(plan, FetchReason::needed).empty());
        }
    }
    REQUIRE(asked);
    CHECK(c.operator_tier().reason() == OperatorNeed::late_viewers);
}

TEST_CASE("with --ask-operator always the operator's seed is asked from the first tick like any peer",
          "[client][controller][operator]") {
    ClientTuning tuning;
    auto always = setup();
    always.ask_operator = AskOperator::always;
    StreamController c(geometry(), always, tuning, t0);
    auto s = sample(t0, 2);
    PeerSample idle_viewer;
    idle_viewer.seed = true;
    s.peers = {operator_seed(), idle_viewer};
    CHECK(c.tick(s).ask_operator);
    s.now = t0 + tuning.discovery_grace;
    CHECK(c.tick(s).ask_operator);
    // The tier is not consulted.
    CHECK(c.operator_tier().turned_on() == 0);
}
