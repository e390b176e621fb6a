#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "registry_test_support.hpp"
#include "tracker/core/swarm_registry.hpp"

using namespace toast::tracker;
using namespace toast::tracker::testing;
using namespace std::chrono_literals;

namespace {

std::set<std::uint16_t> ports(const AnnounceReply& r) {
    std::set<std::uint16_t> out;
    for (const auto& p : r.peers)
        out.insert(p.endpoint.port);
    return out;
}

}  // namespace

TEST_CASE("a peer never receives itself and gets the others with their ids", "[tracker][registry]") {
    auto reg = make();
    auto a = reg.announce(req(hash('a'), 1, 1001, 100, AnnounceEvent::started), ip("10.0.0.1"), t0);
    REQUIRE(a.ok());
    CHECK(a->peers.empty());
    CHECK(a->counts == SwarmCounts{0, 1, 0});
    CHECK(a->interval == 300s);
    CHECK(a->min_interval == 30s);

    auto b = reg.announce(req(hash('a'), 2, 1002, 100, AnnounceEvent::started), ip("10.0.0.2"), t0);
    REQUIRE(b->peers.size() == 1);
    CHECK(b->peers[0] == PeerInfo{peer_id(1), PeerEndpoint{ip("10.0.0.1"), 1001}});
    CHECK(b->counts == SwarmCounts{0, 2, 0});

    auto a2 = reg.announce(req(hash('a'), 1, 1001, 100), ip("10.0.0.1"), t0 + 1s);
    REQUIRE(a2->peers.size() == 1);
    CHECK(a2->peers[0].id == peer_id(2));
}

TEST_CASE("an entry at the announcer's own address and port is not returned either", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 100), ip("10.0.0.1"), t0);
    // Same host and port, new peer id (a restarted client): its old entry must not be handed back to it.
    auto r = reg.announce(req(hash('a'), 2, 1001, 100), ip("10.0.0.1"), t0);
    CHECK(r->peers.empty());
    CHECK(r->counts.leechers == 2);
}

TEST_CASE("swarms are independent", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 100), ip("10.0.0.1"), t0);
    auto r = reg.announce(req(hash('b'), 2, 1002, 100), ip("10.0.0.2"), t0);
    CHECK(r->peers.empty());
    CHECK(reg.totals().swarms == 2);
}

TEST_CASE("stopped removes the peer at once and creates no swarm", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 100), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 2, 1002, 0), ip("10.0.0.2"), t0);
    auto s = reg.announce(req(hash('a'), 1, 1001, 100, AnnounceEvent::stopped), ip("10.0.0.1"), t0);
    CHECK(s->peers.empty());
    CHECK(s->counts == SwarmCounts{1, 0, 0});
    auto c = reg.announce(req(hash('a'), 3, 1003, 100), ip("10.0.0.3"), t0);
    CHECK(ports(c.value()) == std::set<std::uint16_t>{1002});

    auto none = reg.announce(req(hash('z'), 9, 1009, 100, AnnounceEvent::stopped), ip("10.0.0.9"), t0);
    REQUIRE(none.ok());
    CHECK(reg.totals().swarms == 1);
}

TEST_CASE("a stop from another address does not remove a peer with the same peer id", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 100), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 1, 1001, 100, AnnounceEvent::stopped), ip("10.9.9.9"), t0);
    CHECK(reg.scrape(hash('a')) == SwarmCounts{0, 1, 0});
}

TEST_CASE("completed counts one download per peer and moves it to the seeders", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 100, AnnounceEvent::started), ip("10.0.0.1"), t0);
    auto c = reg.announce(req(hash('a'), 1, 1001, 0, AnnounceEvent::completed), ip("10.0.0.1"), t0 + 5s);
    CHECK(c->counts == SwarmCounts{1, 0, 1});
    // A repeated completed from a peer already seeding is not a second download.
    reg.announce(req(hash('a'), 1, 1001, 0, AnnounceEvent::completed), ip("10.0.0.1"), t0 + 6s);
    CHECK(reg.scrape(hash('a')) == SwarmCounts{1, 0, 1});
    // A seed that starts with the file is a seeder but not a download.
    reg.announce(req(hash('a'), 2, 1002, 0, AnnounceEvent::started), ip("10.0.0.2"), t0 + 7s);
    CHECK(reg.scrape(hash('a')) == SwarmCounts{2, 0, 1});
    auto t = reg.totals();
    CHECK(t.seeders == 2);
    CHECK(t.leechers == 0);
    CHECK(t.completed == 1);
    CHECK(t.announces == 4);
}

TEST_CASE("seeders are given only leechers, leechers get seeders and leechers", "[tracker][registry]") {
    auto reg = make();
    for (int i = 0; i < 3; ++i)
        reg.announce(req(hash('a'), i, static_cast<std::uint16_t>(2000 + i), 0), ip("10.0.0.1"), t0);
    for (int i = 0; i < 3; ++i)
        reg.announce(req(hash('a'), 10 + i, static_cast<std::uint16_t>(3000 + i), 50), ip("10.0.0.1"), t0);
    auto seed = reg.announce(req(hash('a'), 0, 2000, 0), ip("10.0.0.1"), t0);
    CHECK(ports(seed.value()) == std::set<std::uint16_t>{3000, 3001, 3002});
    auto leech = reg.announce(req(hash('a'), 10, 3000, 50), ip("10.0.0.1"), t0);
    CHECK(ports(leech.value()) == std::set<std::uint16_t>{2000, 2001, 2002, 3001, 3002});
}

TEST_CASE("numwant is honoured up to numwant_max and peers are handed out round-robin",
          "[tracker][registry]") {
    RegistryPolicy p;
    p.numwant_default = 3;
    p.numwant_max = 4;
    auto reg = make(p);
    for (int i = 0; i < 10; ++i)
        reg.announce(req(hash('a'), i, static_cast<std::uint16_t>(4000 + i), 0), ip("10.0.0.1"), t0);
    auto leecher = req(hash('a'), 99, 5000, 10);
    CHECK(reg.announce(leecher, ip("10.0.0.2"), t0)->peers.size() == 3);
    leecher.numwant = 100;
    CHECK(reg.announce(leecher, ip("10.0.0.2"), t0)->peers.size() == 4);
    leecher.numwant = 0;
    CHECK(reg.announce(leecher, ip("10.0.0.2"), t0)->peers.empty());

    // Three rounds of 4 over 10 seeders: every seeder is handed out before any is repeated.
    leecher.numwant = 4;
    std::multiset<std::uint16_t> seen;
    for (int round = 0; round < 3; ++round) {
        for (auto port : ports(reg.announce(leecher, ip("10.0.0.2"), t0).value()))
            seen.insert(port);
    }
    CHECK(seen.size() == 12);
    for (int i = 0; i < 10; ++i)
        CHECK(seen.count(static_cast<std::uint16_t>(4000 + i)) >= 1);
}

TEST_CASE("announce options restrict families and cap the peer count", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 2, 1002, 0), ip("2001:db8::2"), t0);
    reg.announce(req(hash('a'), 3, 1003, 0), ip("2001:db8::3"), t0);
    auto both = reg.announce(req(hash('a'), 4, 1004, 10), ip("10.0.0.4"), t0);
    CHECK(ports(both.value()) == std::set<std::uint16_t>{1001, 1002, 1003});
    AnnounceOptions v4;
    v4.families = Families::v4_only;
    CHECK(ports(reg.announce(req(hash('a'), 4, 1004, 10), ip("10.0.0.4"), t0, v4).value()) ==
          std::set<std::uint16_t>{1001});
    AnnounceOptions v6;
    v6.families = Families::v6_only;
    v6.peer_cap = 1;
    CHECK(reg.announce(req(hash('a'), 4, 1004, 10), ip("10.0.0.4"), t0, v6)->peers.size() == 1);
}

TEST_CASE("the ip parameter is ignored by default, even from loopback", "[tracker][registry]") {
    auto reg = make();
    auto from_remote = req(hash('a'), 1, 1001, 0);
    from_remote.ip = ip("192.0.2.7");
    reg.announce(from_remote, ip("10.0.0.1"), t0);
    // A same-host proxy makes every remote client arrive from loopback: honouring ip= from there by
    // default would let anyone point a swarm at a third party.
    auto from_local = req(hash('a'), 2, 1002, 0);
    from_local.ip = ip("192.0.2.8");
    reg.announce(from_local, ip("127.0.0.1"), t0);
    auto r = reg.announce(req(hash('a'), 3, 1003, 10), ip("10.0.0.3"), t0);
    std::set<std::string> addrs;
    for (const auto& p : r->peers)
        addrs.insert(p.endpoint.ip.to_string());
    CHECK(addrs == std::set<std::string>{"10.0.0.1", "127.0.0.1"});
}

TEST_CASE("the ip parameter is honoured only from the configured sources", "[tracker][registry]") {
    RegistryPolicy p;
    p.ip_param_from = AddressSet({*AddressPrefix::parse("10.9.0.0/16")});
    auto reg = make(p);
    auto from_proxy = req(hash('a'), 1, 1001, 0);
    from_proxy.ip = ip("192.0.2.7");
    reg.announce(from_proxy, ip("10.9.3.4"), t0);
    auto from_local = req(hash('a'), 2, 1002, 0);
    from_local.ip = ip("192.0.2.8");
    reg.announce(from_local, ip("127.0.0.1"), t0);
    auto r = reg.announce(req(hash('a'), 3, 1003, 10), ip("10.0.0.3"), t0);
    std::set<std::string> addrs;
    for (const auto& peer : r->peers)
        addrs.insert(peer.endpoint.ip.to_string());
    CHECK(addrs == std::set<std::string>{"192.0.2.7", "127.0.0.1"});
}

TEST_CASE("peers that stop announcing expire after peer_expiry, then their swarm", "[tracker][registry]") {
    RegistryPolicy p;
    p.interval = 60s;
    p.peer_expiry = 150s;
    auto reg = make(p);
    reg.announce(req(hash('a'), 1, 1001, 10), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 2, 1002, 0), ip("10.0.0.2"), t0 + 100s);

    CHECK(reg.expire(t0 + 149s) == 0);
    CHECK(reg.scrape(hash('a')) == SwarmCounts{1, 1, 0});
    CHECK(reg.expire(t0 + 150s) == 1);
    CHECK(reg.scrape(hash('a')) == SwarmCounts{1, 0, 0});
    auto r = reg.announce(req(hash('a'), 3, 1003, 10), ip("10.0.0.3"), t0 + 151s);
    CHECK(ports(r.value()) == std::set<std::uint16_t>{1002});

    // A re-announce refreshes: peer 2 announced at +100 s and again at +240 s, so it outlives peer 3.
    reg.announce(req(hash('a'), 2, 1002, 0), ip("10.0.0.2"), t0 + 240s);
    CHECK(reg.expire(t0 + 300s) == 0);
    CHECK(reg.expire(t0 + 301s) == 1);  // peer 3, last seen at +151 s
    CHECK(reg.scrape(hash('a')) == SwarmCounts{1, 0, 0});
    CHECK(reg.expire(t0 + 389s) == 0);
    CHECK(reg.expire(t0 + 390s) == 1);  // peer 2; the swarm, last active at +240 s, goes with it
    CHECK(reg.totals().seeders == 0);
    CHECK(reg.totals().swarms == 0);
}

TEST_CASE("an empty swarm is forgotten once it has been idle for peer_expiry", "[tracker][registry]") {
    RegistryPolicy p;
    p.interval = 60s;
    p.peer_expiry = 100s;
    auto reg = make(p);
    reg.announce(req(hash('a'), 1, 1001, 10), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 1, 1001, 10, AnnounceEvent::stopped), ip("10.0.0.1"), t0 + 10s);
    reg.expire(t0 + 109s);
    CHECK(reg.totals().swarms == 1);
    reg.expire(t0 + 110s);
    CHECK(reg.totals().swarms == 0);
    CHECK(reg.swarm_stats(std::nullopt, 10).empty());
}

TEST_CASE("the whitelist refuses unknown info-hashes and replacing it keeps swarms", "[tracker][registry]") {
    auto reg = make();
    Whitelist only_a;
    only_a.add(hash('a'));
    reg.set_whitelist(only_a);
    REQUIRE(reg.announce(req(hash('a'), 1, 1001, 10), ip("10.0.0.1"), t0).ok());
    auto refused = reg.announce(req(hash('b'), 2, 1002, 10), ip("10.0.0.2"), t0);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error() == AnnounceRefusal::not_whitelisted);
    CHECK(failure_reason(refused.error()) == "info_hash is not served by this tracker");
    CHECK_FALSE(reg.scrape(hash('b')).has_value());
    CHECK(reg.totals().swarms == 1);

    Whitelist both = only_a;
    both.add(hash('b'));
    reg.set_whitelist(both);
    REQUIRE(reg.announce(req(hash('b'), 2, 1002, 10), ip("10.0.0.2"), t0).ok());
    CHECK(reg.scrape(hash('a')) == SwarmCounts{0, 1, 0});  // swarm a kept its peer across the reload

    reg.set_whitelist(std::nullopt);
    CHECK(reg.announce(req(hash('c'), 3, 1003, 10), ip("10.0.0.3"), t0).ok());
}

TEST_CASE("max_swarms refuses new info-hashes but serves existing swarms", "[tracker][registry]") {
    RegistryPolicy p;
    p.max_swarms = 1;
    auto reg = make(p);
    REQUIRE(reg.announce(req(hash('a'), 1, 1001, 10), ip("10.0.0.1"), t0).ok());
    auto r = reg.announce(req(hash('b'), 2, 1002, 10), ip("10.0.0.2"), t0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == AnnounceRefusal::too_many_swarms);
    CHECK(reg.announce(req(hash('a'), 2, 1002, 10), ip("10.0.0.2"), t0).ok());
}

TEST_CASE("stats list swarms in info-hash order with their announces", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('b'), 1, 1001, 10), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 2, 1002, 5), ip("10.0.0.2"), t0);
    auto stats = reg.swarm_stats(std::nullopt, 10);
    REQUIRE(stats.size() == 2);
    CHECK(stats[0].info_hash == hash('a'));
    CHECK(stats[0].counts == SwarmCounts{1, 1, 0});
    CHECK(stats[0].announces == 2);
    CHECK(stats[1].info_hash == hash('b'));
    CHECK(stats[1].announces == 1);
}

TEST_CASE("stats pages continue after a given info-hash, even one that has gone", "[tracker][registry]") {
    RegistryPolicy p;
    p.interval = 60s;
    p.peer_expiry = 100s;
    auto reg = make(p);
    for (char c : std::string("edcba"))
        reg.announce(req(hash(c), 1, 1001, 10), ip("10.0.0.1"), t0);
    auto first = reg.swarm_stats(std::nullopt, 2);
    REQUIRE(first.size() == 2);
    CHECK(first[1].info_hash == hash('b'));
    auto second = reg.swarm_stats(first.back().info_hash, 2);
    REQUIRE(second.size() == 2);
    CHECK(second[0].info_hash == hash('c'));
    CHECK(second[1].info_hash == hash('d'));
    // Swarm d is forgotten between pages; the next page still starts after it.
    reg.announce(req(hash('d'), 1, 1001, 10, AnnounceEvent::stopped), ip("10.0.0.1"), t0);
    for (char c : std::string("abce"))
        reg.announce(req(hash(c), 1, 1001, 10), ip("10.0.0.1"), t0 + 50s);
    reg.expire(t0 + 120s);
    REQUIRE(reg.totals().swarms == 4);
    auto third = reg.swarm_stats(hash('d'), 2);
    REQUIRE(third.size() == 1);
    CHECK(third[0].info_hash == hash('e'));
    CHECK(reg.swarm_stats(hash('e'), 2).empty());
    CHECK(reg.swarm_stats(std::nullopt, 0).empty());
}

TEST_CASE("many peers joining and leaving keep the counts consistent", "[tracker][registry]") {
    auto reg = make();
    // 300 peers over 3 swarms (i % 3); every fourth one stops, every fifth other one completes.
    for (int i = 0; i < 300; ++i) {
        auto h = hash(static_cast<char>('a' + i % 3));
        reg.announce(req(h, i, static_cast<std::uint16_t>(1000 + i), 10), ip("10.0.0.1"), t0);
    }
    for (int i = 0; i < 300; ++i) {
        auto h = hash(static_cast<char>('a' + i % 3));
        if (i % 4 == 0) {
            reg.announce(req(h, i, static_cast<std::uint16_t>(1000 + i), 10, AnnounceEvent::stopped),
                         ip("10.0.0.1"), t0);
        } else if (i % 5 == 0) {
            reg.announce(req(h, i, static_cast<std::uint16_t>(1000 + i), 0, AnnounceEvent::completed),
                         ip("10.0.0.1"), t0);
        }
    }
    std::size_t seeders = 0, leechers = 0;
    for (const auto& s : reg.swarm_stats(std::nullopt, 10)) {
        seeders += s.counts.seeders;
        leechers += s.counts.leechers;
    }
    // Stopped: i % 4 == 0 (75). Completed: i % 5 == 0 but not i % 20 == 0 (60 - 15 = 45).
    CHECK(seeders == 45);
    CHECK(leechers == 180);
    CHECK(reg.totals().seeders == 45);
    CHECK(reg.totals().leechers == 180);
    CHECK(reg.totals().completed == 45);
    // Every remaining peer is still reachable: in swarm a (i % 3 == 0: 100 peers, 25 of them stopped with
    // i % 12 == 0) a new leecher asking for everything sees the other 75.
    auto everyone = req(hash('a'), 999, 9999, 10);
    everyone.numwant = 1000;
    CHECK(reg.announce(everyone, ip("10.0.0.9"), t0)->peers.size() == 75);
}

TEST_CASE("a leecher is given the leechers that joined nearest before and after it, in that order",
          "[tracker][registry]") {
    auto reg = make();
    // Ten viewers join one after the other (ports 6000..6009), and a seed.
    for (int i = 0; i < 10; ++i)
        reg.announce(req(hash('v'), i, static_cast<std::uint16_t>(6000 + i), 100), ip("10.0.0.1"), t0);
    reg.announce(req(hash('v'), 50, 7000, 0), ip("10.0.0.1"), t0);
    auto order = [](const AnnounceReply& r) {
        std::vector<std::uint16_t> out;
        for (const auto& p : r.peers)
            out.push_back(p.endpoint.port);
        return out;
    };
    // Viewer 5 asks for 5: the seed first (up to half are seeders), then 4, 6, 3, 5's other neighbours.
    auto five = req(hash('v'), 5, 6005, 100);
    five.numwant = 5;
    CHECK(order(reg.announce(five, ip("10.0.0.1"), t0).value()) ==
          std::vector<std::uint16_t>{7000, 6004, 6006, 6003, 6007});
    // A newcomer (it joins last) gets those who joined just before it, nearest first.
    auto newcomer = req(hash('v'), 10, 6010, 100);
    newcomer.numwant = 4;
    CHECK(order(reg.announce(newcomer, ip("10.0.0.1"), t0).value()) ==
          std::vector<std::uint16_t>{7000, 6009, 6008, 6007});
    // The first viewer gets those after it.
    auto first = req(hash('v'), 0, 6000, 100);
    first.numwant = 3;
    CHECK(order(reg.announce(first, ip("10.0.0.1"), t0).value()) ==
          std::vector<std::uint16_t>{7000, 6001, 6002});
    // A viewer that stops leaves the order of the others as it was: 6's neighbours are now 4 and 7.
    reg.announce(req(hash('v'), 5, 6005, 100, AnnounceEvent::stopped), ip("10.0.0.1"), t0);
    auto six = req(hash('v'), 6, 6006, 100);
    six.numwant = 5;
    CHECK(order(reg.announce(six, ip("10.0.0.1"), t0).value()) ==
          std::vector<std::uint16_t>{7000, 6004, 6007, 6003, 6008});
    // Viewers that expire leave it as it was too: all but 3 and 7 announce again, then 3 and 7 expire.
    const auto expiry = RegistryPolicy{}.peer_expiry;
    const auto later = t0 + expiry / 2;
    for (int i : {0, 1, 2, 4, 6, 8, 9, 10})
        reg.announce(req(hash('v'), i, static_cast<std::uint16_t>(6000 + i), 100), ip("10.0.0.1"), later);
    reg.announce(req(hash('v'), 50, 7000, 0), ip("10.0.0.1"), later);
    CHECK(reg.expire(t0 + expiry) == 2);
    CHECK(order(reg.announce(six, ip("10.0.0.1"), later).value()) ==
          std::vector<std::uint16_t>{7000, 6004, 6008, 6002, 6009});
}

TEST_CASE("a partial seed (event paused) is a source for leechers and is given only downloaders",
          "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0);  // a seed
    // Two boxes holding their pushed share of the title: partial seeds, announcing event=paused.
    auto p2 = reg.announce(req(hash('a'), 2, 1002, 500, AnnounceEvent::paused), ip("10.0.0.2"), t0);
    CHECK(p2->peers.empty());  // the seed is no use to it
    auto p3 = reg.announce(req(hash('a'), 3, 1003, 500, AnnounceEvent::paused), ip("10.0.0.3"), t0);
    CHECK(p3->peers.empty());  // nor the other partial seed
    CHECK(p3->counts == SwarmCounts{.seeders = 1, .leechers = 2, .completed = 0, .partial_seeds = 2});
    // The seed is not given them either.
    CHECK(reg.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0)->peers.empty());

    // A viewer is given the seed and both partial seeds, each once; each of them is given the viewer alone.
    auto v = reg.announce(req(hash('a'), 4, 1004, 900), ip("10.0.0.4"), t0);
    CHECK(v->peers.size() == 3);
    CHECK(ports(v.value()) == std::set<std::uint16_t>{1001, 1002, 1003});
    CHECK(v->counts == SwarmCounts{.seeders = 1, .leechers = 3, .completed = 0, .partial_seeds = 2});
    auto again = reg.announce(req(hash('a'), 2, 1002, 500, AnnounceEvent::paused), ip("10.0.0.2"), t0 + 1s);
    CHECK(ports(again.value()) == std::set<std::uint16_t>{1004});
    auto seed = reg.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0 + 1s);
    CHECK(ports(seed.value()) == std::set<std::uint16_t>{1004});

    CHECK(reg.totals().seeders == 1);
    CHECK(reg.totals().leechers == 3);
    CHECK(reg.totals().partial_seeds == 2);
}

TEST_CASE("partial seeds fill the sources in turn when seeders are few", "[tracker][registry]") {
    auto reg = make();
    for (int i = 0; i < 6; ++i) {
        reg.announce(req(hash('a'), 10 + i, static_cast<std::uint16_t>(2000 + i), 500, AnnounceEvent::paused),
                     ip("10.0.1." + std::to_string(i + 1)), t0);
    }
    auto v = req(hash('a'), 1, 1001, 900);
    v.numwant = 4;
    auto first = reg.announce(v, ip("10.0.0.1"), t0);
    CHECK(ports(first.value()) == std::set<std::uint16_t>{2000, 2001, 2002, 2003});
    auto second = reg.announce(v, ip("10.0.0.1"), t0 + 1s);  // the next ones in turn
    CHECK(ports(second.value()) == std::set<std::uint16_t>{2004, 2005, 2000, 2001});
}

TEST_CASE("a viewer whose lookahead is complete announces paused and keeps its place in the join order",
          "[tracker][registry]") {
    auto reg = make();
    for (int i = 1; i <= 5; ++i)
        reg.announce(req(hash('a'), i, static_cast<std::uint16_t>(1000 + i), 900),
                     ip("10.0.0." + std::to_string(i)), t0 + std::chrono::seconds(i));
    // Viewer 3 has everything it asked for: paused, a partial seed for now.
    reg.announce(req(hash('a'), 3, 1003, 700, AnnounceEvent::paused), ip("10.0.0.3"), t0 + 10s);
    CHECK(reg.scrape(hash('a'))->partial_seeds == 1);
    // It asks for more again: a downloader, still third in the join order.
    reg.announce(req(hash('a'), 3, 1003, 600), ip("10.0.0.3"), t0 + 11s);
    CHECK(reg.scrape(hash('a'))->partial_seeds == 0);
    auto four = req(hash('a'), 4, 1004, 900);
    four.numwant = 2;
    CHECK(ports(reg.announce(four, ip("10.0.0.4"), t0 + 12s).value()) == std::set<std::uint16_t>{1003, 1005});
    // Paused again, viewer 3 is named to viewer 4 once, as a source, and viewer 4's neighbours follow.
    reg.announce(req(hash('a'), 3, 1003, 500, AnnounceEvent::paused), ip("10.0.0.3"), t0 + 13s);
    four.numwant = 3;
    auto r = reg.announce(four, ip("10.0.0.4"), t0 + 14s);
    CHECK(r->peers.size() == 3);
    CHECK(ports(r.value()) == std::set<std::uint16_t>{1003, 1005, 1002});
}

TEST_CASE("a partial seed that downloads again is a leecher, and its completion counts",
          "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 500, AnnounceEvent::paused), ip("10.0.0.1"), t0);
    // The box starts playing the title: a regular announce without paused, still left > 0.
    reg.announce(req(hash('a'), 1, 1001, 400), ip("10.0.0.1"), t0 + 1s);
    CHECK(reg.scrape(hash('a')) ==
          SwarmCounts{.seeders = 0, .leechers = 1, .completed = 0, .partial_seeds = 0});
    auto other = reg.announce(req(hash('a'), 2, 1002, 900), ip("10.0.0.2"), t0 + 1s);
    CHECK(ports(other.value()) == std::set<std::uint16_t>{1001});
    reg.announce(req(hash('a'), 1, 1001, 0, AnnounceEvent::completed), ip("10.0.0.1"), t0 + 2s);
    CHECK(reg.scrape(hash('a')) ==
          SwarmCounts{.seeders = 1, .leechers = 1, .completed = 1, .partial_seeds = 0});

    // A partial seed completing straight away counts too.
    reg.announce(req(hash('a'), 3, 1003, 500, AnnounceEvent::paused), ip("10.0.0.3"), t0);
    reg.announce(req(hash('a'), 3, 1003, 0, AnnounceEvent::completed), ip("10.0.0.3"), t0 + 3s);
    CHECK(reg.scrape(hash('a'))->completed == 2);
    // paused with nothing left is a seed like any other.
    reg.announce(req(hash('a'), 4, 1004, 0, AnnounceEvent::paused), ip("10.0.0.4"), t0 + 3s);
    CHECK(reg.scrape(hash('a')) ==
          SwarmCounts{.seeders = 3, .leechers = 1, .completed = 2, .partial_seeds = 0});
}

TEST_CASE("partial seeds leave the counts when they stop or expire", "[tracker][registry]") {
    auto reg = make();
    reg.announce(req(hash('a'), 1, 1001, 500, AnnounceEvent::paused), ip("10.0.0.1"), t0);
    reg.announce(req(hash('a'), 2, 1002, 500, AnnounceEvent::paused), ip("10.0.0.2"), t0 + 600s);
    reg.announce(req(hash('a'), 2, 1002, 500, AnnounceEvent::stopped), ip("10.0.0.2"), t0 + 600s);
    CHECK(reg.totals().partial_seeds == 1);
    CHECK(reg.expire(t0 + 661s) == 1);  // peer_expiry 660 s
    CHECK(reg.totals().partial_seeds == 0);
    CHECK(reg.totals().leechers == 0);
}
