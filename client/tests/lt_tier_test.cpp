// A title on a tier of server nodes, the client's adapters: the tier read from the torrent, and the fetcher
// asking each piece of its holders (Toast-Direct), the less loaded first, failing over to the other on an
// error, a refusal (307) and a missed deadline.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include <boost/asio/io_context.hpp>
#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>

#include "client/lt/http_fetcher.hpp"
#include "client/lt/torrent_file.hpp"
#include "lt_range_server.hpp"
#include "lt_test_support.hpp"
#include "test_support.hpp"
#include "toast/common/tier.hpp"

using namespace std::chrono_literals;
using namespace toast;
using namespace toast::client;
using toast::client::testing::RangeServer;

namespace {

constexpr std::uint32_t kPiece = 16 * 1024;
constexpr std::uint64_t kBlock = 4 * kPiece;  // four pieces a block

std::vector<char> title_bytes(std::size_t size) {
    std::vector<char> out(size);
    std::mt19937_64 rng(7);
    for (auto& c : out)
        c = static_cast<char>(rng() & 0xff);
    return out;
}

PieceRequest piece(int i, std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
    return {PieceIndex(i), static_cast<std::uint64_t>(i) * kPiece, kPiece, false, deadline};
}

bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        io.restart();
        io.run_for(20ms);
    }
    return done();
}

FetcherConfig fast() {
    FetcherConfig c;
    c.timeout = 3s;
    c.retry_initial = 50ms;
    c.retry_max = 400ms;
    c.server_backoff = {100ms, 1s};
    c.hedge_after = 300ms;
    return c;
}

// Three nodes on loopback serving the same bytes, and the tier they make.
struct Tier {
    std::vector<char> data = title_bytes(40 * kPiece);
    std::vector<std::unique_ptr<RangeServer>> nodes;
    TierLayout layout;
    std::vector<ServerUrl> urls;
    std::vector<std::string> texts;

    Tier() {
        for (int i = 0; i < 3; ++i) {
            nodes.push_back(std::make_unique<RangeServer>("/titles/movie", data));
            layout.nodes.push_back({std::string(1, static_cast<char>('a' + i)),
                                    "http://127.0.0.1:" + std::to_string(nodes.back()->port())});
            texts.push_back(nodes.back()->url());
            urls.push_back(*parse_http_url(texts.back()));
        }
    }
    TierRoutes routes() const {
        return *TierRoutes::make(layout, "movie", Bytes(kBlock), Bytes(kPiece), Bytes(data.size()), texts);
    }
    // A piece both of whose holders are not node `n`, and one that `n` holds first.
    int piece_without(std::size_t n) const {
        const auto r = routes();
        for (int p = 0; p < 40; ++p) {
            const auto& h = r.holders(PieceIndex(p));
            if (std::find(h.begin(), h.end(), n) == h.end()) return p;
        }
        FAIL("no piece without node " << n);
        return -1;
    }
};

}  // namespace

TEST_CASE("the tier and the block size come from the torrent's toast key", "[client][torrent][tier]") {
    toast::testing::TempDir dir;
    toast::testing::write_random_file(dir / "movie.bin", 100'000, 3);
    auto bytes = toast::client::testing::make_torrent_bytes(dir / "movie.bin", 16 * 1024, {});
    auto with = [&](const std::function<void(lt::entry&)>& edit) {
        lt::entry e = lt::bdecode(lt::span<const char>(bytes.data(), static_cast<long>(bytes.size())));
        e["toast"]["bitrate"] = 2'000'000;
        lt::entry::list_type nodes;
        for (const char* id : {"a", "b", "c"}) {
            lt::entry n;
            n["id"] = id;
            n["url"] = std::string("http://127.0.0.1:") + (id[0] == 'a' ? "1" : id[0] == 'b' ? "2" : "3");
            nodes.push_back(n);
        }
        e["toast"]["tier"]["nodes"] = nodes;
        e["toast"]["tier"]["replicas"] = 2;
        e["toast"]["tier"]["placement"] = "block";
        e["toast"]["block_size"] = 65536;
        edit(e);
        std::vector<char> out;
        lt::bencode(std::back_inserter(out), e);
        return out;
    };
    const auto t = parse_title_torrent(with([](lt::entry&) {}), "movie.torrent");
    REQUIRE(t.tier);
    CHECK(t.tier->nodes.size() == 3);
    CHECK(t.tier->nodes[1].url == "http://127.0.0.1:2");
    CHECK(t.tier->replicas == 2);
    CHECK(t.block_size == Bytes(65536));

    auto bad = [&](const std::function<void(lt::entry&)>& edit) {
        try {
            parse_title_torrent(with(edit), "movie.torrent");
        } catch (const TorrentFileError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(bad([](lt::entry& e) { e["toast"].dict().erase("block_size"); }) ==
          "movie.torrent: \"toast\".\"block_size\" must be a positive integer with a tier");
    CHECK(bad([](lt::entry& e) { e["toast"]["tier"]["nodes"].list()[1]["id"] = "a"; }) ==
          "movie.torrent: \"toast\".\"tier\".nodes[1].id: \"a\" names two nodes");
    CHECK(bad([](lt::entry& e) { e["toast"]["tier"]["nodes"].list()[0]["url"] = "ftp://x"; }) ==
          "movie.torrent: \"toast\".\"tier\".nodes[0].url: expected http://HOST:PORT, got \"ftp://x\"");
    CHECK(bad([](lt::entry& e) { e["toast"]["tier"]["replicas"] = 5; }) ==
          "movie.torrent: \"toast\".\"tier\".replicas: expected 1..3 (at most one per node), got 5");
    CHECK(bad([](lt::entry& e) { e["toast"]["tier"]["placement"] = "x"; }) ==
          "movie.torrent: \"toast\".\"tier\".placement must be \"block\" or \"title\"");
}

TEST_CASE("each piece is asked directly of the less loaded of its two holders", "[client][fetcher][tier]") {
    Tier t;
    // Loads seconds apart: a difference larger than the loads' age (milliseconds here) is always followed.
    t.nodes[0]->load_ms = 9000;
    t.nodes[1]->load_ms = 5;
    t.nodes[2]->load_ms = 4000;
    boost::asio::io_context io;
    std::map<PieceIndex, std::size_t> from;
    std::map<PieceIndex, std::vector<char>> got;
    HttpFetcher fetcher(io, t.urls, fast(),
                        [&](const PieceRequest& r, std::vector<char> bytes, std::size_t s) {
                            from[r.piece] = s;
                            got[r.piece] = std::move(bytes);
                        });
    const auto routes = t.routes();
    fetcher.set_routes(routes);
    // One piece first, so every node's load is known before the rest go out.
    for (int p = 0; p < 40; ++p) {
        REQUIRE(fetcher.fetch(piece(p)));
        REQUIRE(run_until(
            io, [&] { return got.size() == static_cast<std::size_t>(p + 1); }, 5s));
    }
    int after_loads_known = 0;
    for (int p = 0; p < 40; ++p) {
        CHECK(got[PieceIndex(p)] ==
              std::vector<char>(t.data.begin() + p * kPiece, t.data.begin() + (p + 1) * kPiece));
        const auto& h = routes.holders(PieceIndex(p));
        CHECK(std::find(h.begin(), h.end(), from[PieceIndex(p)]) != h.end());
        if (p >= 10) {
            ++after_loads_known;
            // Node 1 (load 5) whenever it holds the piece, else node 2 (4000) over node 0 (9000).
            const bool has1 = std::find(h.begin(), h.end(), 1u) != h.end();
            CHECK(from[PieceIndex(p)] == (has1 ? 1u : 2u));
        }
    }
    CHECK(after_loads_known == 30);
    // Every request went to a holder, directly.
    CHECK(t.nodes[0]->direct_requests + t.nodes[1]->direct_requests + t.nodes[2]->direct_requests == 40);
}

TEST_CASE("a holder that refuses (307) or is gone leaves the piece to the other holder",
          "[client][fetcher][tier]") {
    Tier t;
    boost::asio::io_context io;
    std::map<PieceIndex, std::size_t> from;
    HttpFetcher fetcher(io, t.urls, fast(),
                        [&](const PieceRequest& r, std::vector<char>, std::size_t s) { from[r.piece] = s; });
    const auto routes = t.routes();
    fetcher.set_routes(routes);
    // Node 0 says it does not hold its blocks (a stale placement): its pieces come from their other holder.
    t.nodes[0]->not_holder = true;
    for (int p = 0; p < 40; ++p)
        REQUIRE(fetcher.fetch(piece(p)));
    REQUIRE(run_until(
        io, [&] { return from.size() == 40; }, 10s));
    for (const auto& [p, s] : from) {
        CHECK(s != 0u);
        const auto& h = routes.holders(p);
        CHECK(std::find(h.begin(), h.end(), s) != h.end());
    }
    CHECK(fetcher.stats().refusals > 0);

    // Node 1 goes away: its pieces go to their other holder; none is lost.
    from.clear();
    t.nodes[0]->not_holder = false;
    t.nodes[1]->stop();
    for (int p = 0; p < 40; ++p)
        REQUIRE(fetcher.fetch(piece(p)));
    REQUIRE(run_until(
        io, [&] { return from.size() == 40; }, 10s));
    for (const auto& [p, s] : from)
        CHECK(s != 1u);
}

TEST_CASE("a request unanswered past its deadline is asked of the other holder", "[client][fetcher][tier]") {
    Tier t;
    boost::asio::io_context io;
    std::map<PieceIndex, std::size_t> from;
    HttpFetcher fetcher(io, t.urls, fast(),
                        [&](const PieceRequest& r, std::vector<char>, std::size_t s) { from[r.piece] = s; });
    const auto routes = t.routes();
    fetcher.set_routes(routes);
    // Node 2 hangs for 5 s on every answer; a piece it would be asked first goes to its other holder once
    // its deadline (now) is 300 ms behind. With no load heard yet both holders tie, and the fetcher's salt
    // draws which of them it asks first.
    t.nodes[2]->delay_ms = 5000;
    const auto first_asked = [&](int i) {
        std::vector<toast::HolderView> idle;
        for (auto h : routes.holders(PieceIndex(i)))
            idle.push_back({toast::NodeIndex(static_cast<std::uint32_t>(h)), true, false, std::nullopt, 0.0});
        return toast::choose_holder(idle,
                                    toast::holder_tie_break(fast().tie_salt, static_cast<std::uint64_t>(i)))
            ->value();
    };
    int p = 0;
    while (first_asked(p) != 2u)
        ++p;
    REQUIRE(p < 40);
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(fetcher.fetch(piece(p, start)));
    REQUIRE(run_until(
        io, [&] { return from.size() == 1; }, 4s));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(from[PieceIndex(p)] != 2u);
    CHECK(took >= 300ms);
    CHECK(took < 2s);
    CHECK(fetcher.stats().hedged == 1);
    // Its server counts as late: the next piece it holds goes to the other holder first.
    int q = p + 1;
    while (routes.holders(PieceIndex(q)).front() != 2u)
        ++q;
    REQUIRE(fetcher.fetch(piece(q)));
    REQUIRE(run_until(
        io, [&] { return from.size() == 2; }, 3s));
    CHECK(from[PieceIndex(q)] != 2u);
    fetcher.stop();
}
