#include "toast/common/tier.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

using namespace toast;

namespace {

TierLayout tier_of(std::initializer_list<const char*> ids, std::uint32_t replicas = 2) {
    TierLayout t;
    int port = 8080;
    for (const char* id : ids)
        t.nodes.push_back({id, "http://127.0.0.1:" + std::to_string(port++)});
    t.replicas = replicas;
    return t;
}

std::vector<std::string> holder_ids(const TierLayout& t, std::string_view title, std::uint64_t block) {
    std::vector<std::string> out;
    for (auto i : t.holders(title, block))
        out.push_back(t.node(i).id);
    std::sort(out.begin(), out.end());
    return out;
}

constexpr std::uint64_t kBlocks = 12000;

}  // namespace

TEST_CASE("the rendezvous weight is fixed byte for byte", "[common][tier]") {
    // Server and client must agree on every machine and in every version: these values never change (they
    // were checked against an independent Python rendering of the formula in tier.hpp).
    CHECK(rendezvous_weight("a", "movie", 0) == 0x4c011ce42edc99ddull);
    CHECK(rendezvous_weight("node-2", "movie", 41) == 0x916a4ac79b07230cull);
    CHECK(rendezvous_weight("a", "", 0) != rendezvous_weight("b", "", 0));
}

TEST_CASE("each block goes to two distinct nodes, the same ones every time", "[common][tier]") {
    const auto t = tier_of({"a", "b", "c"});
    for (std::uint64_t b = 0; b < 200; ++b) {
        const auto h = t.holders("movie", b);
        REQUIRE(h.size() == 2);
        CHECK(h[0] != h[1]);
        CHECK(h == t.holders("movie", b));
    }
    // Fewer nodes than replicas: every node holds every block.
    CHECK(tier_of({"a"}).holders("movie", 7).size() == 1);
}

TEST_CASE("every node holds an even share of a title's blocks", "[common][tier]") {
    for (auto nodes : {tier_of({"a", "b", "c"}), tier_of({"n1", "n2", "n3", "n4", "n5"})}) {
        std::map<std::uint32_t, std::uint64_t> held;
        for (std::uint64_t b = 0; b < kBlocks; ++b)
            for (auto i : nodes.holders("a long title name", b))
                ++held[i.value()];
        const double expected = 2.0 * kBlocks / static_cast<double>(nodes.nodes.size());
        REQUIRE(held.size() == nodes.nodes.size());
        for (const auto& [node, count] : held) {
            INFO("node " << node << " holds " << count << " of " << kBlocks << " blocks, expected "
                         << expected);
            CHECK(std::abs(static_cast<double>(count) - expected) < 0.04 * expected);
        }
    }
}

TEST_CASE("a node that joins takes only its own share and nothing else moves", "[common][tier]") {
    const auto before = tier_of({"a", "b", "c"});
    const auto after = tier_of({"a", "b", "c", "d"});
    std::uint64_t moved = 0;
    for (std::uint64_t b = 0; b < kBlocks; ++b) {
        const auto old_h = holder_ids(before, "movie", b);
        const auto new_h = holder_ids(after, "movie", b);
        if (old_h == new_h) continue;
        ++moved;
        // The only change is the new node taking one place: the other holder was a holder before.
        REQUIRE(std::count(new_h.begin(), new_h.end(), "d") == 1);
        const auto kept = new_h[0] == "d" ? new_h[1] : new_h[0];
        CHECK(std::count(old_h.begin(), old_h.end(), kept) == 1);
    }
    // The newcomer holds 2/4 of the blocks, and each of them moved one replica: half the blocks move.
    const double expected = kBlocks * 2.0 / 4.0;
    CHECK(std::abs(static_cast<double>(moved) - expected) < 0.04 * expected);
}

TEST_CASE("a node that leaves gives up only the blocks it held", "[common][tier]") {
    const auto before = tier_of({"a", "b", "c", "d"});
    const auto after = tier_of({"a", "b", "d"});  // "c" left; the others keep their ids
    for (std::uint64_t b = 0; b < kBlocks; ++b) {
        const auto old_h = holder_ids(before, "movie", b);
        const auto new_h = holder_ids(after, "movie", b);
        if (std::count(old_h.begin(), old_h.end(), "c") == 0) {
            CHECK(old_h == new_h);
        } else {
            // Its surviving holder keeps the block, one other node takes c's copy.
            const auto survivor = old_h[0] == "c" ? old_h[1] : old_h[0];
            CHECK(std::count(new_h.begin(), new_h.end(), survivor) == 1);
        }
    }
}

TEST_CASE("node order in the list does not change placement", "[common][tier]") {
    const auto t1 = tier_of({"a", "b", "c"});
    auto t2 = tier_of({"c", "a", "b"});
    for (std::uint64_t b = 0; b < 500; ++b)
        CHECK(holder_ids(t1, "movie", b) == holder_ids(t2, "movie", b));
}

TEST_CASE("title-level placement puts a whole title on one pair of nodes", "[common][tier]") {
    auto t = tier_of({"a", "b", "c"});
    t.placement = TierPlacement::title;
    const auto first = holder_ids(t, "movie", 0);
    for (std::uint64_t b = 1; b < 300; ++b)
        CHECK(holder_ids(t, "movie", b) == first);
}

TEST_CASE("tier JSON round-trips and bad tiers are refused naming the field", "[common][tier]") {
    const auto t = tier_of({"a", "b", "c"});
    auto parsed = parse_tier_json(tier_to_json(t));
    REQUIRE(parsed.tier);
    CHECK(*parsed.tier == t);

    auto bad = [](nlohmann::json j) { return parse_tier_json(j).error; };
    CHECK(bad({{"nodes", 3}}) == "tier.nodes: expected an array");
    CHECK(bad({{"nodes", nlohmann::json::array()}}) == "tier.nodes: expected 1..256 nodes, got 0");
    CHECK(bad({{"nodes", {{{"id", "a"}}}}}) == "tier.nodes[0]: expected {\"id\": STRING, \"url\": STRING}");
    CHECK(bad({{"nodes", {{{"id", "a b"}, {"url", "http://h:1"}}}}}) ==
          "tier.nodes[0].id: expected 1-64 of A-Z a-z 0-9 . _ -, got \"a b\"");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "http://h:1"}}, {{"id", "a"}, {"url", "http://h:2"}}}}}) ==
          "tier.nodes[1].id: \"a\" names two nodes");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "http://h:1"}}, {{"id", "b"}, {"url", "http://h:1"}}}}}) ==
          "tier.nodes[1].url: \"http://h:1\" is given for two nodes");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "https://h:1"}}}}}) ==
          "tier.nodes[0].url: expected http://HOST:PORT, got \"https://h:1\"");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "http://h:1/x"}}}}}) ==
          "tier.nodes[0].url: expected http://HOST:PORT without a path, got \"http://h:1/x\"");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "http://h"}}}}}) ==
          "tier.nodes[0].url: expected http://HOST:PORT with a non-zero port, got \"http://h\"");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "http://h:1"}}}}, {"replicas", 2}}) ==
          "tier.replicas: expected 1..1 (at most one per node), got 2");
    CHECK(bad({{"nodes", {{{"id", "a"}, {"url", "http://h:1"}}}}, {"placement", "disk"}}) ==
          "tier.placement: expected \"block\" or \"title\"");
}

TEST_CASE("the power of two choices asks the less loaded holder", "[common][tier]") {
    const NodeIndex a(0), b(1);
    auto pick = [](std::vector<HolderView> v) { return choose_holder(v); };
    CHECK(pick({{a, true, false, 5.0}, {b, true, false, 2.0}}) == b);
    CHECK(pick({{a, true, false, 2.0}, {b, true, false, 2.0}}) == a);  // ties: the tie-break's (0: the first)
    CHECK(pick({{a, true, false, std::nullopt}, {b, true, false, 1.0}}) == a);  // unknown counts as idle
    // Failover: a holder backing off after an error or a refusal is passed over whatever its load.
    CHECK(pick({{a, false, false, 0.0}, {b, true, false, 50.0}}) == b);
    // A holder that answered late is asked only when the other is late too.
    CHECK(pick({{a, true, true, 0.0}, {b, true, false, 50.0}}) == b);
    CHECK(pick({{a, true, true, 3.0}, {b, true, true, 1.0}}) == b);
    CHECK(pick({{a, false, false, 0.0}, {b, false, false, 0.0}}) == std::nullopt);
}

TEST_CASE("a tie between holders goes where the box's tie-break says, and only a tie", "[common][tier]") {
    const NodeIndex a(0), b(1), c(2);
    const std::uint64_t half = 1ull << 63;  // the tie-break as a fraction of 2^64: 0.5
    const std::vector<HolderView> idle{{a, true, false, 0.0}, {b, true, false, std::nullopt}};
    CHECK(choose_holder(idle, 0) == a);
    CHECK(choose_holder(idle, half - 4096) == a);
    CHECK(choose_holder(idle, half) == b);
    CHECK(choose_holder(idle, ~0ull) == b);
    // Not tied: the lower load, the one on time, the usable one, whatever the tie-break.
    for (std::uint64_t t : {std::uint64_t{0}, half, ~std::uint64_t{0}}) {
        CHECK(choose_holder(std::vector<HolderView>{{a, true, false, 4.0}, {b, true, false, 1.0}}, t) == b);
        CHECK(choose_holder(std::vector<HolderView>{{a, true, true, 0.0}, {b, true, false, 9.0}}, t) == b);
        CHECK(choose_holder(std::vector<HolderView>{{a, false, false, 0.0}, {b, true, false, 9.0}}, t) == b);
    }
    // Three tied, one of them not usable: the tie-break picks among the two usable ones.
    const std::vector<HolderView> three{{a, true, false, 1.0}, {b, false, false, 1.0}, {c, true, false, 1.0}};
    CHECK(choose_holder(three, 0) == a);
    CHECK(choose_holder(three, half) == c);
}

TEST_CASE("loads closer together than their age share the choice in proportion", "[common][tier]") {
    const NodeIndex a(0), b(1), c(2);
    auto at = [](double fraction) { return static_cast<std::uint64_t>(fraction * 0x1.0p64); };
    // b 200 ms less loaded, heard 1000 ms ago: weights 1000 (b) and 800 (a), so b gets 1000 / 1800 = 5/9.
    const std::vector<HolderView> stale{{a, true, false, 300.0, 0.0}, {b, true, false, 100.0, 1000.0}};
    CHECK(choose_holder(stale, 0) == a);  // the order given: a first, its share 4/9
    CHECK(choose_holder(stale, at(0.44)) == a);
    CHECK(choose_holder(stale, at(0.45)) == b);
    CHECK(choose_holder(stale, at(0.999)) == b);
    // The same loads heard just now: only the less loaded.
    const std::vector<HolderView> fresh{{a, true, false, 300.0, 0.0}, {b, true, false, 100.0, 0.0}};
    for (double f : {0.0, 0.3, 0.7, 0.999})
        CHECK(choose_holder(fresh, at(f)) == b);
    // A node further behind than the loads' age (a slow or failed disk) gets nothing.
    const std::vector<HolderView> behind{{a, true, false, 1500.0, 1000.0}, {b, true, false, 400.0, 1000.0}};
    for (double f : {0.0, 0.3, 0.7, 0.999})
        CHECK(choose_holder(behind, at(f)) == b);
    // Three holders, the oldest load 600 ms: weights 600 (c, 50), 300 (a, 350), 0 (b, 700).
    const std::vector<HolderView> three{
        {a, true, false, 350.0, 600.0}, {b, true, false, 700.0, 10.0}, {c, true, false, 50.0, 100.0}};
    CHECK(choose_holder(three, at(0.33)) == a);
    CHECK(choose_holder(three, at(0.34)) == c);
    for (double f : {0.0, 0.5, 0.999})
        CHECK(choose_holder(three, at(f)) != b);
    // Late and unusable holders are passed over whatever their loads' age.
    CHECK(choose_holder(std::vector<HolderView>{{a, true, true, 0.0, 5000.0}, {b, true, false, 90.0, 5000.0}},
                        0) == b);
    CHECK(choose_holder(std::vector<HolderView>{{a, false, false, 0.0, 5000.0}, {b, true, false, 90.0}}, 0) ==
          b);
}

TEST_CASE("boxes holding the same seconds-old loads do not all move to the lower", "[common][tier]") {
    // 300 boxes last heard holder a at 120 ms (1 s ago) and holder b at 80 ms (2 s ago). Taken as exact,
    // every box asks b; weighed by age (tolerance 2000 ms: weights 1960 and 2000) they split about evenly.
    const std::vector<HolderView> heard{{NodeIndex(0), true, false, 120.0, 1000.0},
                                        {NodeIndex(1), true, false, 80.0, 2000.0}};
    std::size_t to_b = 0;
    for (std::uint64_t salt = 1; salt <= 300; ++salt)
        to_b += choose_holder(heard, holder_tie_break(salt, 17)) == NodeIndex(1);
    CHECK(to_b > 135);
    CHECK(to_b < 170);
    std::vector<HolderView> exact = heard;
    for (auto& h : exact)
        h.load_age_ms = 0;
    for (std::uint64_t salt = 1; salt <= 300; ++salt)
        CHECK(choose_holder(exact, holder_tie_break(salt, 17)) == NodeIndex(1));
}

TEST_CASE("boxes' tie-breaks split a block's ties evenly between its holders", "[common][tier]") {
    // 300 boxes with salts 1..300, each choosing between two idle holders for blocks 0..99: each holder gets
    // half of the 30,000 choices within 2%, and one box does not always pick the same position.
    const std::vector<HolderView> idle{{NodeIndex(0), true, false, 0.0}, {NodeIndex(1), true, false, 0.0}};
    std::size_t first = 0;
    for (std::uint64_t salt = 1; salt <= 300; ++salt)
        for (std::uint64_t block = 0; block < 100; ++block)
            first += choose_holder(idle, holder_tie_break(salt, block)) == NodeIndex(0);
    CHECK(first > 14'700);
    CHECK(first < 15'300);
    std::size_t one_box = 0;
    for (std::uint64_t block = 0; block < 100; ++block)
        one_box += choose_holder(idle, holder_tie_break(42, block)) == NodeIndex(0);
    CHECK(one_box > 30);
    CHECK(one_box < 70);
    CHECK(holder_tie_break(42, 7) == holder_tie_break(42, 7));
}
