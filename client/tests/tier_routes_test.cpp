// The client's side of a tier: which server URLs hold a piece, which of them is asked, and where a piece goes
// when its server fails, refuses it or is late.
#include <catch2/catch.hpp>

#include "client/core/server_pool.hpp"
#include "client/core/server_request.hpp"
#include "client/core/tier_routes.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

TierLayout tier_abc() {
    TierLayout t;
    t.nodes = {{"a", "http://10.0.0.1:8080"}, {"b", "http://10.0.0.2:8080"}, {"c", "http://10.0.0.3:8080"}};
    return t;
}

const std::vector<std::string> kServers = {"http://10.0.0.1:8080/titles/movie",
                                           "http://10.0.0.2:8080/titles/movie",
                                           "http://10.0.0.3:8080/titles/movie"};

}  // namespace

TEST_CASE("a piece maps to the servers of its block's two nodes", "[client][tier]") {
    const auto tier = tier_abc();
    // Blocks of 4 pieces of 256 KiB: pieces 4b..4b+3 lie in block b.
    const auto routes =
        TierRoutes::make(tier, "movie", Bytes(1 << 20), Bytes(1 << 18), Bytes(40 << 20), kServers);
    REQUIRE(routes);
    for (int p = 0; p < 160; ++p) {
        const auto& h = routes->holders(PieceIndex(p));
        const auto expected = tier.holders("movie", static_cast<std::uint64_t>(p / 4));
        REQUIRE(h.size() == 2);
        // The tier's nodes are the servers in the same order here.
        CHECK(h[0] == expected[0].value());
        CHECK(h[1] == expected[1].value());
    }
    CHECK(routes->holders(PieceIndex(160)).empty());  // past the end
    // Servers given in another order, and another node's URL beside them: matched by URL, not position.
    const std::vector<std::string> shuffled = {"http://backup:80/titles/movie.ts", kServers[2], kServers[0],
                                               kServers[1]};
    const auto routes2 =
        TierRoutes::make(tier, "movie", Bytes(1 << 20), Bytes(1 << 18), Bytes(40 << 20), shuffled);
    const auto h = routes2->holders(PieceIndex(9));
    const auto expected = tier.holders("movie", 2);
    auto server_of = [](NodeIndex n) { return n.value() == 2 ? 1u : n.value() == 0 ? 2u : 3u; };
    CHECK(h == std::vector<std::size_t>{server_of(expected[0]), server_of(expected[1])});
}

TEST_CASE("a piece that spans two blocks, or a tier none of whose nodes is a server, has no holders",
          "[client][tier]") {
    const auto tier = tier_abc();
    // 300 KiB blocks against 256 KiB pieces: piece 1 spans blocks 0 and 1.
    const auto routes =
        TierRoutes::make(tier, "movie", Bytes(300 << 10), Bytes(256 << 10), Bytes(3 << 20), kServers);
    REQUIRE(routes);
    CHECK(routes->holders(PieceIndex(0)).size() == 2);
    CHECK(routes->holders(PieceIndex(1)).empty());
    CHECK_FALSE(TierRoutes::make(tier, "movie", Bytes(1 << 20), Bytes(1 << 18), Bytes(1 << 20),
                                 {"http://elsewhere:80/titles/movie"}));
    CHECK_FALSE(TierRoutes::make(tier, "movie", Bytes(0), Bytes(1 << 18), Bytes(1 << 20), kServers));
}

TEST_CASE("of a piece's holders the less loaded is asked, and the other when it fails or is late",
          "[client][tier]") {
    using Clock = ServerPool::Clock;
    const auto t0 = Clock::now();
    ServerPool pool(3, {100ms, 1s});
    const std::vector<std::size_t> holders{0, 2};
    CHECK(pool.choose_holder(t0, holders) == 0u);  // nothing heard: the first (highest weight)
    pool.on_load(0, 30.0, t0);
    pool.on_load(2, 4.5, t0);
    CHECK(pool.choose_holder(t0, holders) == 2u);
    pool.on_load(2, 31.0, t0);
    CHECK(pool.choose_holder(t0, holders) == 0u);
    // A refusal (307, 503 without Retry-After) sends this piece to the other holder first.
    CHECK(pool.choose_holder(t0, holders, 0u) == 2u);
    // An error backs the server off: its pieces go to the other holder until it is ready again.
    pool.on_failure(0, t0);
    CHECK(pool.choose_holder(t0, holders) == 2u);
    CHECK(pool.choose_holder(t0 + 150ms, holders) == 0u);
    // A missed deadline (Toast-Late, or no answer by it) passes it over while the other is on time.
    pool.on_late(0, t0 + 150ms);
    CHECK(pool.choose_holder(t0 + 200ms, holders) == 2u);
    // Both holders down: none here, and the caller asks any other server (which relays).
    pool.on_failure(0, t0 + 200ms);
    pool.on_failure(2, t0 + 200ms);
    CHECK(pool.choose_holder(t0 + 200ms, holders) == std::nullopt);
    CHECK(pool.choose(t0 + 200ms) == 1u);
}

TEST_CASE("a holder's load counts for less as it ages", "[client][tier]") {
    using Clock = ServerPool::Clock;
    const auto t0 = Clock::now();
    ServerPool pool(2, {100ms, 1s});
    const std::vector<std::size_t> holders{0, 1};
    const std::uint64_t late_draw = ~0ull;  // the last share of the draw
    pool.on_load(0, 40.0, t0);
    pool.on_load(1, 10.0, t0);
    // Heard just now: the less loaded, whatever the draw.
    CHECK(pool.choose_holder(t0, holders, std::nullopt, 0) == 1u);
    CHECK(pool.choose_holder(t0, holders, std::nullopt, late_draw) == 1u);
    // 20 ms later the 30 ms difference is still larger than the loads' age: still the less loaded.
    CHECK(pool.choose_holder(t0 + 20ms, holders, std::nullopt, 0) == 1u);
    // 2 s later it is not: the draw decides (weights 1970 and 2000).
    CHECK(pool.choose_holder(t0 + 2s, holders, std::nullopt, 0) == 0u);
    CHECK(pool.choose_holder(t0 + 2s, holders, std::nullopt, late_draw) == 1u);
    // A fresh answer from node 0 ages only node 1's load: the oldest load sets the tolerance.
    pool.on_load(0, 40.0, t0 + 2s);
    CHECK(pool.choose_holder(t0 + 2s, holders, std::nullopt, 0) == 0u);
    pool.on_load(1, 10.0, t0 + 2s);
    CHECK(pool.choose_holder(t0 + 2s, holders, std::nullopt, 0) == 1u);
}

TEST_CASE("a node's 307 refuses only the piece", "[client][tier]") {
    CHECK(answer_fault(307, false) == FetchFault::piece);
    CHECK(answer_fault(404, false) == FetchFault::server);
}
