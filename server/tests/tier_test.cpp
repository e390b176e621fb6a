// A node of a tier, its pure parts: which holder it relays from, which node gets a stream it cannot take,
// how a read is cut between its disks and the other nodes, the manifest of its share, and what it answers a
// client that asks it for a block it does not hold.
#include <catch2/catch.hpp>

#include "handler_fixture.hpp"
#include "server/core/catalog.hpp"
#include "server/core/manifest.hpp"
#include "server/core/stream_redirect.hpp"
#include "server/core/tier_read_plan.hpp"
#include "server/core/tier_view.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;
using toast::server::testing::Fixture;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

TierLayout three_nodes() {
    TierLayout t;
    t.nodes = {
        {"a", "http://127.0.0.1:1001"}, {"b", "http://127.0.0.1:1002"}, {"c", "http://127.0.0.1:1003"}};
    return t;
}

// A title of `blocks` blocks of 1000 bytes held as the tier's rendezvous placement says, seen from `self`.
std::shared_ptr<TitleTier> title_tier(const std::string& name, std::uint64_t blocks, std::uint32_t self) {
    auto t = std::make_shared<TitleTier>();
    t->layout = three_nodes();
    t->self = NodeIndex(self);
    for (std::uint64_t b = 0; b < blocks; ++b)
        t->holders.push_back(t->layout.holders(name, b));
    return t;
}

}  // namespace

TEST_CASE("a relayed read goes to the less loaded holder, and to the other one when it fails",
          "[server][tier]") {
    TierView view({"http://a", "http://b", "http://c"}, 0, TierView::Options{});
    const auto t0 = Clock::now();
    const std::vector<std::size_t> holders{1, 2};
    CHECK(view.choose(holders, {}, t0) == 1u);  // nothing heard yet: the first holder
    view.on_answer(1, 40.0, false, t0);
    view.on_answer(2, 5.0, false, t0);
    CHECK(view.choose(holders, {}, t0) == 2u);
    // Never this node itself, never one already tried for this read.
    CHECK(view.choose(std::vector<std::size_t>{0, 1}, {}, t0) == 1u);
    CHECK(view.choose(holders, std::vector<std::size_t>{2}, t0) == 1u);
    CHECK(view.choose(holders, std::vector<std::size_t>{1, 2}, t0) == std::nullopt);
    // A failed node backs off (200 ms, then doubling) whatever its load.
    view.on_failure(2, t0);
    CHECK(view.choose(holders, {}, t0) == 1u);
    // Usable again 250 ms later; the loads, as old, are now 35 ms apart: they only weigh the draw.
    CHECK(view.choose(holders, {}, t0 + 250ms, ~0ull) == 2u);
    view.on_failure(2, t0);
    view.on_failure(2, t0);
    CHECK(view.backing_off(2, t0 + 700ms));
    CHECK_FALSE(view.backing_off(2, t0 + 900ms));
    // Both backing off: the one that recovers first is still asked, rather than failing the read.
    view.on_failure(1, t0);
    CHECK(view.choose(holders, {}, t0) == 1u);
    // An answer after its deadline (Toast-Late) passes the node over for a while.
    TierView late({"http://a", "http://b", "http://c"}, 0, TierView::Options{});
    late.on_answer(1, 0.0, true, t0);
    late.on_answer(2, 90.0, false, t0);
    CHECK(late.choose(holders, {}, t0 + 1s) == 2u);
    CHECK(late.choose(holders, {}, t0 + 4s) == 1u);
}

TEST_CASE("a relay weighs the holders' loads by their age, as a box does", "[server][tier]") {
    TierView view({"http://a", "http://b", "http://c"}, 0, TierView::Options{});
    const auto t0 = Clock::now();
    const std::vector<std::size_t> holders{1, 2};
    view.on_answer(1, 300.0, false, t0);
    view.on_answer(2, 100.0, false, t0);
    // Heard just now: the less loaded whatever the draw.
    CHECK(view.choose(holders, {}, t0, 0) == 2u);
    CHECK(view.choose(holders, {}, t0, ~0ull) == 2u);
    // A second later both loads are 1000 ms old: weights 800 (b) and 1000 (c), drawn in that order.
    std::size_t to_c = 0;
    for (std::uint64_t relay = 0; relay < 900; ++relay)
        to_c += view.choose(holders, {}, t0 + 1s, holder_tie_break(relay, 5)) == 2u;
    CHECK(to_c > 450);  // 5/9 of 900 is 500
    CHECK(to_c < 550);
    // A status poll is as good as an answer: fresh loads again.
    view.on_status(1, NodeStatus{"b", 300.0, false, 1, 0}, t0 + 1s);
    view.on_status(2, NodeStatus{"c", 100.0, false, 1, 0}, t0 + 1s);
    CHECK(view.choose(holders, {}, t0 + 1s, 0) == 2u);
}

TEST_CASE("a stream this node refuses goes to the node with the most room that reported lately",
          "[server][tier]") {
    TierView view({"http://a", "http://b", "http://c"}, 0, TierView::Options{});
    const auto t0 = Clock::now();
    CHECK(view.node_with_room({}, t0) == std::nullopt);  // no status yet
    view.on_status(1, NodeStatus{"b", 3, true, 0.30, 10}, t0);
    view.on_status(2, NodeStatus{"c", 1, true, 0.60, 4}, t0);
    CHECK(view.node_with_room({}, t0) == 2u);
    CHECK(view.node_with_room(std::vector<std::size_t>{2}, t0) == 1u);
    // A stale status does not count, nor a node without room, nor one backing off.
    CHECK(view.node_with_room({}, t0 + 4s) == std::nullopt);
    view.on_status(2, NodeStatus{"c", 1, true, 0.01, 40}, t0);
    CHECK(view.node_with_room({}, t0) == 1u);
    view.on_failure(1, t0);
    CHECK(view.node_with_room({}, t0) == std::nullopt);
}

TEST_CASE("node status JSON round-trips, and a malformed one is ignored", "[server][tier]") {
    const NodeStatus s{"b", 12.5, true, 0.25, 7};
    const auto parsed = parse_node_status(node_status_json(s));
    REQUIRE(parsed);
    CHECK(parsed->node == "b");
    CHECK(parsed->load_ms == 12.5);
    CHECK(parsed->room == 0.25);
    CHECK(parsed->streams == 7u);
    CHECK_FALSE(parse_node_status(nlohmann::json{{"node", "b"}}));
    CHECK_FALSE(parse_node_status(nlohmann::json::parse("[1]")));
}

TEST_CASE("a node's load is the queued read time of its average online disk", "[server][tier]") {
    std::vector<DiskStatus> disks(2);
    disks[0].queue_depth = 4;
    disks[0].queued_bytes = 1'000'000;
    disks[0].access_seconds = 0.01;
    disks[0].seconds_per_byte = 1e-8;
    disks[1].queue_depth = 0;
    CHECK(node_load_ms(disks) == Approx((4 * 0.01 + 1e6 * 1e-8) / 2 * 1e3));
    disks[1].fault.offline = true;
    CHECK(node_load_ms(disks) == Approx((4 * 0.01 + 1e6 * 1e-8) * 1e3));
    disks[0].fault.offline = true;
    CHECK(node_load_ms(disks) == kOfflineLoad);
}

TEST_CASE("a read is cut into runs of held blocks and single blocks held elsewhere", "[server][tier]") {
    TitleInfo title;
    title.name = "movie";
    title.size = 10'500;
    title.block_size = 1000;
    title.tier = title_tier("movie", 11, 0);
    const auto parts = plan_tier_read(title, 0, title.size);
    std::uint64_t at = 0;
    for (const auto& p : parts) {
        CHECK(p.offset == at);
        at += p.length;
        if (!p.local) {
            CHECK_FALSE(title.tier->holds(p.block));
            CHECK(p.offset / 1000 == p.block);
            CHECK(p.length <= 1000);
        } else {
            for (auto b = p.offset / 1000; b <= (p.offset + p.length - 1) / 1000; ++b)
                CHECK(title.tier->holds(b));
        }
    }
    CHECK(at == title.size);
    for (std::size_t i = 1; i < parts.size(); ++i)
        CHECK_FALSE((parts[i].local && parts[i - 1].local));  // held runs are merged
    // A range inside one block is one part; a title without a tier is read locally whole.
    CHECK(plan_tier_read(title, 2100, 300).size() == 1);
    title.tier.reset();
    CHECK(plan_tier_read(title, 10, 9000) == std::vector<TierReadPart>{{10, 9000, true, 0}});
}

TEST_CASE("a tier manifest keeps replicas for exactly the blocks its node holds",
          "[server][tier][manifest]") {
    Manifest m;
    m.title = "movie";
    m.size = 12000;
    m.bitrate = BitRate(8000);
    m.block_size = 1000;
    m.version = "v1";
    m.generation = 1;
    m.chunk_size = 65536;
    m.tier = ManifestTier{three_nodes(), "b", "0123456789abcdef"};
    for (std::uint64_t b = 0; b < 12; ++b) {
        BlockRecord rec;
        rec.chunk_crcs = {1};
        const auto holders = m.tier->layout.holders("movie", b);
        if (std::find(holders.begin(), holders.end(), NodeIndex(1)) != holders.end())
            rec.replicas.push_back({0, block_file_name("movie", "v1", b)});
        m.blocks.push_back(rec);
    }
    const auto parsed = parse_manifest(manifest_to_json(m), 2);
    REQUIRE(parsed.manifest);
    CHECK(*parsed.manifest == m);

    auto broken = manifest_to_json(m);
    for (auto& b : broken["blocks"])
        b["replicas"] = nlohmann::json::array({{{"disk", 0}, {"file", "blocks/movie@v1/000000.blk"}}});
    CHECK_THAT(parse_manifest(broken, 2).error, Contains("does not hold it by the tier's placement"));
    broken = manifest_to_json(m);
    for (auto& b : broken["blocks"])
        b["replicas"] = nlohmann::json::array();
    CHECK_THAT(parse_manifest(broken, 2).error,
               Contains("holds it by the tier's placement but it has no replicas"));
    broken = manifest_to_json(m);
    broken["tier"]["node"] = "z";
    CHECK_THAT(parse_manifest(broken, 2).error, Contains("'tier.node' \"z\" is not a node of the tier"));
    broken = manifest_to_json(m);
    broken["tier"]["content"] = "xyz";
    CHECK_THAT(parse_manifest(broken, 2).error, Contains("'tier.content' must be 16 lowercase hex digits"));
    broken = manifest_to_json(m);
    broken["tier"]["replicas"] = 9;
    CHECK_THAT(parse_manifest(broken, 2).error, Contains("tier.replicas"));
}

TEST_CASE("asked directly for a block it does not hold, a node says which nodes do",
          "[server][tier][handler]") {
    Fixture f;  // "movie": 10000 bytes
    f.store.set_tier("movie", title_tier("movie", 10, 0), 1000);
    const auto tier = f.store.find("movie")->tier;
    std::uint64_t held = 0, elsewhere = 0;
    while (!tier->holds(held))
        ++held;
    while (tier->holds(elsewhere))
        ++elsewhere;
    auto range = [](std::uint64_t b) {
        return "bytes=" + std::to_string(b * 1000 + 10) + "-" + std::to_string(b * 1000 + 509);
    };

    auto r = f.get("/titles/movie", {{"Range", range(elsewhere)}, {"Toast-Direct", "1"}});
    CHECK(r.status == 307);
    const auto& holders = tier->holders[elsewhere];
    CHECK(r.header("Location") == tier->layout.node(holders[0]).url + "/titles/movie");
    CHECK(r.header("Toast-Nodes") ==
          tier->layout.node(holders[0]).url + ", " + tier->layout.node(holders[1]).url);
    CHECK_THAT(r.body, Contains("block " + std::to_string(elsewhere) + " of movie is held by"));

    // A block it holds, or any block asked without Toast-Direct (a stock client: relayed), is served.
    auto own = f.get("/titles/movie", {{"Range", range(held)}, {"Toast-Direct", "1"}});
    CHECK(own.status == 206);
    CHECK(f.body_of(own) == f.bytes.substr(held * 1000 + 10, 500));
    auto relayed = f.get("/titles/movie", {{"Range", range(elsewhere)}});
    CHECK(relayed.status == 206);
    // The whole title asked directly touches blocks held elsewhere.
    CHECK(f.get("/titles/movie", {{"Toast-Direct", "1"}}).status == 307);
    // Preconditions come first: another version's ETag is 412 whoever holds the block.
    CHECK(f.get("/titles/movie",
                {{"Range", range(elsewhere)}, {"Toast-Direct", "1"}, {"If-Match", "\"other\""}})
              .status == 412);
}

TEST_CASE("title answers carry the node's load, and GET /tier its status", "[server][tier][handler]") {
    Fixture f;
    CHECK(f.get("/titles/movie").header("Toast-Load").empty());
    CHECK(f.get("/tier").status == 404);
    f.node.load_ms = [] { return 12.345; };
    f.node.tier_status = [] { return node_status_json(NodeStatus{"b", 3, true, 0.5, 2}); };
    CHECK(f.get("/titles/movie").header("Toast-Load") == "12.3");
    CHECK(f.get("/stream/movie").header("Toast-Load") == "12.3");
    auto status = f.get("/tier");
    CHECK(status.status == 200);
    CHECK(status.header("Content-Type") == "application/json");
    CHECK(parse_node_status(nlohmann::json::parse(status.body))->node == "b");
    CHECK(f.get("/tier", {}, "POST").status == 405);
}

TEST_CASE("a refused stream is sent on with the nodes that refused it", "[server][tier]") {
    CHECK(refused_nodes("/stream/movie").empty());
    CHECK(refused_nodes("/stream/movie?refused=a,b") == std::vector<std::string>{"a", "b"});
    CHECK(refused_nodes("/stream/movie?x=1&refused=c,bad/id,c") == std::vector<std::string>{"c"});
    auto r = stream_redirect("http://10.0.0.2:8080", "/stream/movie", {"a"}, "b",
                             "admission control: not enough disk time");
    CHECK(r.status == 307);
    CHECK(r.header("Location") == "http://10.0.0.2:8080/stream/movie?refused=a,b");
    CHECK_THAT(r.body, Contains("not enough disk time on node b; http://10.0.0.2:8080 has room"));
    CHECK(stream_redirect("http://c", "/stream/m", {}, "a", "x").header("Location") ==
          "http://c/stream/m?refused=a");
    // A signed URL's token (and any other parameter) goes along; the old refused list is replaced.
    CHECK(stream_redirect("http://c", "/stream/m?token=v1~k~s~title:m~1~2~mac&refused=b", {"b"}, "a", "x")
              .header("Location") == "http://c/stream/m?token=v1~k~s~title:m~1~2~mac&refused=b,a");
}

TEST_CASE("the catalogue lists a tier title's URL on every node", "[server][tier][catalog]") {
    CatalogTitle t{"movie",    "movie.ts", 10,
                   BitRate(8), "\"e\"",    {},
                   "",         0.0,        {"http://a:1/titles/movie", "http://b:1/titles/movie"}};
    const auto body = nlohmann::json::parse(catalog_body({t}).json);
    CHECK(body["titles"][0]["urls"] ==
          nlohmann::json::array({"http://a:1/titles/movie", "http://b:1/titles/movie"}));
    t.urls.clear();
    CHECK_FALSE(nlohmann::json::parse(catalog_body({t}).json)["titles"][0].contains("urls"));
}
