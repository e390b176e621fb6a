// The registry's state across a restart: export, encoding, decoding of hostile bytes, import.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "registry_test_support.hpp"
#include "tracker/core/registry_state.hpp"
#include "tracker/core/swarm_registry.hpp"

using namespace toast::tracker;
using namespace toast::tracker::testing;
using namespace std::chrono_literals;

namespace {

// The restarted process's steady clock has nothing to do with the first one's.
const TimePoint t1 = TimePoint{} + 7h;

std::vector<std::uint16_t> ports(const AnnounceReply& r) {
    std::vector<std::uint16_t> out;
    for (const auto& p : r.peers)
        out.push_back(p.endpoint.port);
    return out;
}

PeerState peer(int id, const std::string& address, std::uint16_t port, std::chrono::milliseconds age) {
    return PeerState{peer_id(id), PeerEndpoint{ip(address), port}, age};
}

// The decode error for `text`, or "" if it decodes.
std::string error_of(std::string_view text) {
    auto r = decode_state(text);
    return r ? "" : r.error();
}

// A valid one-swarm state with `fields` spliced into its first seeder or swarm, for the rejection tests.
std::string with_peer(const std::string& peer_json) {
    return R"({"format": "toast-tracker-state", "version": 1, "saved_at_unix_ms": 5, "swarms": [)"
           R"({"info_hash": "6161616161616161616161616161616161616161", "completed": 0, "idle_ms": 0,)"
           R"( "seeders": [], "leechers": [{"peer_id": "2d5454303030312d303030303030303030303031",)"
           R"( "ip": "10.0.0.1", "port": 1, "age_ms": 0}, )" +
           peer_json + "]}]}";
}

std::string with_swarm(const std::string& swarm_json) {
    return R"({"format": "toast-tracker-state", "version": 1, "saved_at_unix_ms": 5, "swarms": [)" +
           swarm_json + "]}";
}

}  // namespace

TEST_CASE("a saved registry comes back with its peers in the same order, its counts and completions",
          "[tracker][state]") {
    auto before = make();
    // Swarm a: two seeders (one by completing), four leechers joined in turn, one IPv6.
    before.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0);
    before.announce(req(hash('a'), 2, 1002, 50), ip("10.0.0.2"), t0 + 1s);
    before.announce(req(hash('a'), 3, 1003, 50), ip("2001:db8::3"), t0 + 2s);
    before.announce(req(hash('a'), 4, 1004, 50), ip("10.0.0.4"), t0 + 3s);
    before.announce(req(hash('a'), 5, 1005, 50), ip("10.0.0.5"), t0 + 4s);
    before.announce(req(hash('a'), 6, 1006, 50), ip("10.0.0.6"), t0 + 5s);
    before.announce(req(hash('a'), 2, 1002, 0, AnnounceEvent::completed), ip("10.0.0.2"), t0 + 6s);
    // Swarm b: one leecher; swarm c: emptied by a stop, kept for its completed count.
    before.announce(req(hash('b'), 7, 1007, 50), ip("10.0.0.7"), t0 + 7s);
    before.announce(req(hash('c'), 8, 1008, 50), ip("10.0.0.8"), t0 + 7s);
    before.announce(req(hash('c'), 8, 1008, 0, AnnounceEvent::completed), ip("10.0.0.8"), t0 + 8s);
    before.announce(req(hash('c'), 8, 1008, 0, AnnounceEvent::stopped), ip("10.0.0.8"), t0 + 8s);

    const TimePoint saved = t0 + 10s;
    const RegistryState state = before.export_state(saved);
    const auto text = encode_state(state, 1'764'000'000'000);
    auto decoded = decode_state(text);
    REQUIRE(decoded.ok());
    CHECK(decoded->saved_at_unix_ms == 1'764'000'000'000);
    CHECK(decoded->state == state);

    auto after = make();
    const auto counts = after.import_state(decoded->state, t1, 5s);
    CHECK(counts.swarms == 3);
    CHECK(counts.peers == 7);
    CHECK(counts.peers_expired + counts.swarms_expired + counts.peers_duplicate + counts.peers_refused == 0);

    for (char h : {'a', 'b', 'c'}) {
        INFO(h);
        CHECK(after.scrape(hash(h)) == before.scrape(hash(h)));
    }
    CHECK(after.scrape(hash('a')) == SwarmCounts{2, 4, 1});
    CHECK(after.scrape(hash('c')) == SwarmCounts{0, 0, 1});
    CHECK(after.totals().swarms == 3);
    CHECK(after.totals().seeders == 2);
    CHECK(after.totals().leechers == 5);
    CHECK(after.totals().completed == 2);

    // Every age grew by exactly the downtime; lists, ids and addresses are as they were.
    RegistryState shifted = state;
    for (auto& s : shifted.swarms) {
        s.idle += 5s;
        for (auto* list : {&s.seeders, &s.leechers})
            for (auto& p : *list)
                p.age += 5s;
    }
    CHECK(after.export_state(t1) == shifted);
    CHECK(shifted.swarms[0].leechers[0].age == 13s);  // peer 3, last seen 8 s before the save

    // Join order survives: a newcomer is introduced to the same neighbours by both registries.
    auto newcomer = req(hash('a'), 9, 1009, 50);
    newcomer.numwant = 5;
    auto a = before.announce(newcomer, ip("10.0.0.9"), saved);
    auto b = after.announce(newcomer, ip("10.0.0.9"), t1);
    CHECK(ports(a.value()) == ports(b.value()));
    CHECK(ports(b.value()) == std::vector<std::uint16_t>{1001, 1002, 1006, 1005, 1004});
}

TEST_CASE("the encoding names its format and version and writes ids in lowercase hex", "[tracker][state]") {
    RegistryState state;
    state.swarms.push_back(SwarmState{.info_hash = hash('\xab'),
                                      .completed = 3,
                                      .idle = 1500ms,
                                      .seeders = {peer(1, "10.0.0.1", 6881, 20ms)},
                                      .leechers = {peer(2, "2001:db8::2", 6882, 40ms)}});
    CHECK(encode_state(state, 42) ==
          R"({"format":"toast-tracker-state","version":1,"saved_at_unix_ms":42,"swarms":[)"
          R"({"info_hash":"abababababababababababababababababababab","completed":3,"idle_ms":1500,)"
          R"("seeders":[{"peer_id":"2d5454303030312d303030303030303030303031","ip":"10.0.0.1","port":6881,)"
          R"("age_ms":20}],"leechers":[{"peer_id":"2d5454303030312d303030303030303030303032",)"
          R"("ip":"2001:db8::2","port":6882,"age_ms":40}]}]})"
          "\n");
    CHECK(encode_state(RegistryState{}, 0) ==
          "{\"format\":\"toast-tracker-state\",\"version\":1,\"saved_at_unix_ms\":0,\"swarms\":[]}\n");
}

TEST_CASE("peers past peer_expiry after the downtime are dropped, the rest expire on time",
          "[tracker][state]") {
    RegistryPolicy policy;
    policy.interval = 30s;
    policy.peer_expiry = 60s;
    RegistryState state;
    // a: one fresh peer, one that will be 70 s old. b: only old peers, idle long: gone with them.
    // c: its only peer too old, but the swarm announced recently: kept empty, as a live sweep would.
    state.swarms.push_back(
        SwarmState{.info_hash = hash('a'),
                   .completed = 1,
                   .idle = 10s,
                   .leechers = {peer(1, "10.0.0.1", 1001, 10s), peer(2, "10.0.0.2", 1002, 50s)}});
    state.swarms.push_back(SwarmState{
        .info_hash = hash('b'), .completed = 4, .idle = 45s, .seeders = {peer(3, "10.0.0.3", 1003, 45s)}});
    state.swarms.push_back(SwarmState{
        .info_hash = hash('c'), .completed = 2, .idle = 1s, .leechers = {peer(4, "10.0.0.4", 1004, 55s)}});
    // Absurd ages (a hand-made state) are just very old.
    state.swarms[0].leechers.push_back(peer(5, "10.0.0.5", 1005, std::chrono::milliseconds::max()));

    auto reg = make(policy);
    const auto c = reg.import_state(state, t1, 20s);
    CHECK(c.swarms == 2);
    CHECK(c.peers == 1);
    CHECK(c.peers_expired == 4);
    CHECK(c.swarms_expired == 1);
    CHECK(reg.scrape(hash('a')) == SwarmCounts{0, 1, 1});
    CHECK(reg.scrape(hash('b')) == SwarmCounts{0, 0, 0});
    CHECK(reg.scrape(hash('c')) == SwarmCounts{0, 0, 2});
    // b's completions went with it.
    CHECK(reg.totals().completed == 3);
    CHECK(reg.totals().leechers == 1);

    // Peer 1 was last heard 30 s before t1: it has 30 s left, not a fresh 60 s.
    CHECK(reg.expire(t1 + 30s - 1ms) == 0);
    CHECK(reg.expire(t1 + 30s) == 1);
    CHECK(reg.totals().leechers == 0);

    // A downtime longer than peer_expiry leaves nothing, whatever the ages.
    auto late = make(policy);
    const auto none = late.import_state(state, t1, std::chrono::hours(24 * 365 * 100));
    CHECK(none.peers == 0);
    CHECK(none.swarms == 0);
    CHECK(late.totals().swarms == 0);
    CHECK(late.totals().completed == 0);
}

TEST_CASE("import honours max_swarms and the whitelist and never duplicates a peer", "[tracker][state]") {
    RegistryState state;
    for (char h : {'a', 'b', 'c'})
        state.swarms.push_back(SwarmState{.info_hash = hash(h),
                                          .completed = 1,
                                          .idle = 0ms,
                                          .seeders = {peer(1, "10.0.0.1", 1001, 0ms)},
                                          .leechers = {peer(2, "10.0.0.2", 1002, 0ms)}});

    SECTION("max_swarms") {
        RegistryPolicy p;
        p.max_swarms = 2;
        auto reg = make(p);
        const auto c = reg.import_state(state, t1, 0s);
        CHECK(c.swarms == 2);
        CHECK(c.swarms_over_limit == 1);
        CHECK(c.peers_refused == 2);
        CHECK(reg.totals().swarms == 2);
        CHECK(reg.scrape(hash('c')) == SwarmCounts{});
        CHECK(reg.totals().completed == 2);
        // And the limit still holds for announces.
        CHECK(reg.announce(req(hash('d'), 1, 1001, 0), ip("10.0.0.1"), t1).error() ==
              AnnounceRefusal::too_many_swarms);
    }
    SECTION("whitelist") {
        auto reg = make();
        Whitelist list;
        list.add(hash('b'));
        reg.set_whitelist(list);
        const auto c = reg.import_state(state, t1, 0s);
        CHECK(c.swarms == 1);
        CHECK(c.swarms_not_whitelisted == 2);
        CHECK(c.peers_refused == 4);
        CHECK(reg.totals().swarms == 1);
        CHECK(reg.scrape(hash('b')) == SwarmCounts{1, 1, 1});
        CHECK_FALSE(reg.scrape(hash('a')).has_value());
    }
    SECTION("a (peer id, IP) listed twice is restored once, where it was first listed") {
        RegistryState dup;
        dup.swarms.push_back(
            SwarmState{.info_hash = hash('a'),
                       .completed = 0,
                       .idle = 0ms,
                       .seeders = {peer(1, "10.0.0.1", 1001, 0ms)},
                       .leechers = {peer(1, "10.0.0.1", 1009, 0ms), peer(2, "10.0.0.2", 1002, 0ms),
                                    peer(2, "10.0.0.2", 1003, 0ms), peer(2, "10.0.0.9", 1004, 0ms)}});
        auto reg = make();
        const auto c = reg.import_state(dup, t1, 0s);
        CHECK(c.peers == 3);
        CHECK(c.peers_duplicate == 2);
        CHECK(reg.scrape(hash('a')) == SwarmCounts{1, 2, 0});
        const auto out = reg.export_state(t1);
        REQUIRE(out.swarms.size() == 1);
        CHECK(out.swarms[0].seeders == std::vector<PeerState>{peer(1, "10.0.0.1", 1001, 0ms)});
        CHECK(out.swarms[0].leechers ==
              std::vector<PeerState>{peer(2, "10.0.0.2", 1002, 0ms), peer(2, "10.0.0.9", 1004, 0ms)});
        // A stop removes it for good: no second entry is left behind.
        reg.announce(req(hash('a'), 1, 1001, 0, AnnounceEvent::stopped), ip("10.0.0.1"), t1);
        CHECK(reg.scrape(hash('a')) == SwarmCounts{0, 2, 0});
        CHECK(reg.totals().seeders == 0);
    }
    SECTION("a swarm already held keeps its counts and gains only the peers it lacks") {
        auto reg = make();
        reg.announce(req(hash('a'), 2, 1002, 50), ip("10.0.0.2"), t1);
        const auto c = reg.import_state(state, t1, 0s);
        CHECK(c.swarms == 3);
        CHECK(c.peers == 5);
        CHECK(c.peers_duplicate == 1);
        CHECK(reg.scrape(hash('a')) == SwarmCounts{1, 1, 0});
        CHECK(reg.totals().completed == 2);
        CHECK(reg.totals().seeders == 3);
        CHECK(reg.totals().leechers == 3);
    }
}

TEST_CASE("decode_state refuses malformed files, saying what is wrong and where", "[tracker][state]") {
    CHECK(error_of("") == "the file is empty");
    CHECK(error_of("hello") ==
          "not valid JSON: parse error at line 1, column 1: syntax error while parsing value - invalid "
          "literal; "
          "last read: 'h'");
    CHECK(error_of("[1, 2]") == "not a toast-tracker state file (no \"format\": \"toast-tracker-state\")");
    CHECK(error_of(R"({"version": 1, "swarms": []})") ==
          "not a toast-tracker state file (no \"format\": \"toast-tracker-state\")");
    CHECK(error_of(R"({"format": "toast-server-state", "version": 1})") ==
          "not a toast-tracker state file (no \"format\": \"toast-tracker-state\")");
    CHECK(error_of(R"({"format": "toast-tracker-state", "version": 2, "swarms": "whatever"})") ==
          "version 2 is not supported (this tracker reads version 1)");
    CHECK(error_of(R"({"format": "toast-tracker-state", "version": "1"})") ==
          "version: expected an integer, got \"1\"");
    CHECK(error_of(R"({"format": "toast-tracker-state", "version": 1, "saved_at_unix_ms": 5})") ==
          "swarms is missing");
    CHECK(error_of(with_swarm(
              R"({"info_hash": "zz", "completed": 0, "idle_ms": 0, "seeders": [], "leechers": []})")) ==
          "swarms[0].info_hash: expected 40 hex digits, got \"zz\"");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d30303030303030303030303g", "ip": "10.0.0.2",
                                 "port": 2, "age_ms": 0})")) ==
          "swarms[0].leechers[1].peer_id: expected 40 hex digits, got "
          "\"2d5454303030312d30303030303030303030303g\"");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.256",
                                 "port": 2, "age_ms": 0})")) ==
          "swarms[0].leechers[1].ip: expected an IPv4 or IPv6 address, got \"10.0.0.256\"");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2",
                                 "port": 70000, "age_ms": 0})")) ==
          "swarms[0].leechers[1].port: value 70000 is outside [1, 65535]");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2",
                                 "port": 1.5, "age_ms": 0})")) ==
          "swarms[0].leechers[1].port: expected an integer, got 1.5");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2",
                                 "port": 2, "age_ms": -5})")) ==
          "swarms[0].leechers[1].age_ms: value -5 is outside [0, 31536000000]");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2",
                                 "port": 2})")) == "swarms[0].leechers[1].age_ms is missing");
    CHECK(error_of(with_peer("7")) == "swarms[0].leechers[1]: expected an object, got 7");
    CHECK(error_of(with_swarm(R"({"info_hash": "6161616161616161616161616161616161616161",
                                  "completed": 18446744073709551615, "idle_ms": 0, "seeders": [], "leechers": []})")) ==
          "swarms[0].completed: value 18446744073709551615 is outside [0, 9223372036854775807]");
    const std::string swarm_a = R"({"info_hash": "6161616161616161616161616161616161616161", "completed": 0,
                                    "idle_ms": 0, "seeders": [], "leechers": []})";
    CHECK(error_of(with_swarm(swarm_a + ", " + swarm_a)) ==
          "swarms[1].info_hash: 6161616161616161616161616161616161616161 appears twice");
    CHECK(error_of(with_swarm(R"({"info_hash": "6161616161616161616161616161616161616161", "completed": 0,
                                  "idle_ms": 0, "seeders": {}, "leechers": []})")) ==
          "swarms[0].seeders: expected an array, got {}");
    // Long hostile values are quoted shortened.
    CHECK(error_of(with_swarm(R"({"info_hash": ")" + std::string(1000, 'f') + R"("})")) ==
          "swarms[0].info_hash: expected 40 hex digits, got \"" + std::string(56, 'f') + "...");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2",
                                 "port": 2, "age_ms": 0, "partial": 1})")) ==
          "swarms[0].leechers[1].partial: expected true or false, got 1");
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2",
                                 "port": 2, "age_ms": 0, "partial": true})")) == "");
    CHECK(error_of(with_swarm(R"({"info_hash": "6161616161616161616161616161616161616161", "completed": 0,
                                  "idle_ms": 0, "leechers": [], "seeders": [{"peer_id":
                                  "2d5454303030312d303030303030303030303032", "ip": "10.0.0.2", "port": 2,
                                  "age_ms": 0, "partial": true}]})")) ==
          "swarms[0].seeders[0].partial: a partial seed is listed among the leechers");
    // The valid base of these cases decodes.
    CHECK(error_of(with_peer(R"({"peer_id": "2d5454303030312d303030303030303030303032", "ip": "::1",
                                 "port": 2, "age_ms": 0, "a later field": true})")) == "");
}

TEST_CASE("a truncated state file is refused at every length as ending early", "[tracker][state]") {
    RegistryState state;
    state.swarms.push_back(
        SwarmState{.info_hash = hash('a'),
                   .completed = 3,
                   .idle = 1500ms,
                   .seeders = {peer(1, "10.0.0.1", 6881, 20ms)},
                   .leechers = {peer(2, "2001:db8::2", 6882, 40ms), peer(3, "10.0.0.3", 6883, 0ms)}});
    const std::string text = encode_state(state, 1'764'000'000'000);
    REQUIRE(decode_state(text).ok());
    REQUIRE(text.back() == '\n');
    for (std::size_t n = 1; n + 1 < text.size(); ++n) {
        INFO(text.substr(0, n));
        CHECK(
            error_of(text.substr(0, n)).rfind("not valid JSON: it ends early (truncated?): parse error", 0) ==
            0);
    }
}

TEST_CASE("hostile bytes never crash decode_state", "[tracker][state]") {
    CHECK(error_of(std::string(100'000, '[')).rfind("not valid JSON: it ends early", 0) == 0);
    CHECK(error_of(std::string(100'000, '[') + std::string(100'000, ']')) ==
          "not a toast-tracker state file (no \"format\": \"toast-tracker-state\")");
    CHECK(error_of("{\"format\": \"toast-tracker-state\xff\"}").rfind("not valid JSON: parse error", 0) == 0);
    CHECK(error_of(std::string("{\"format\"") + '\0' + ": 1}").rfind("not valid JSON: parse error", 0) == 0);
    CHECK(error_of(with_swarm("") + " trailing").rfind("not valid JSON: parse error", 0) == 0);

    // Every byte of a valid file replaced in turn by bytes that matter to JSON: refused or decoded, never
    // thrown.
    RegistryState state;
    state.swarms.push_back(SwarmState{.info_hash = hash('a'),
                                      .completed = 3,
                                      .idle = 1500ms,
                                      .seeders = {peer(1, "10.0.0.1", 6881, 20ms)},
                                      .leechers = {peer(2, "2001:db8::2", 6882, 40ms)}});
    const std::string text = encode_state(state, 1'764'000'000'000);
    std::size_t refused = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        for (char c : {'x', '0', '9', '-', '"', '}', ']', ',', '\0', '\xff'}) {
            std::string bad = text;
            bad[i] = c;
            std::optional<bool> ok;
            CHECK_NOTHROW(ok = decode_state(bad).ok());
            if (ok == false) ++refused;
        }
    }
    CHECK(refused > text.size() * 5);
}

TEST_CASE("a partial seed is saved as one and comes back as one", "[tracker][state]") {
    auto before = make();
    before.announce(req(hash('a'), 1, 1001, 0), ip("10.0.0.1"), t0);
    before.announce(req(hash('a'), 2, 1002, 50, AnnounceEvent::paused), ip("10.0.0.2"), t0);
    before.announce(req(hash('a'), 3, 1003, 50), ip("10.0.0.3"), t0);
    const RegistryState state = before.export_state(t0 + 1s);
    REQUIRE(state.swarms.size() == 1);
    REQUIRE(state.swarms[0].leechers.size() == 2);
    CHECK(state.swarms[0].leechers[0].partial);
    CHECK_FALSE(state.swarms[0].leechers[1].partial);
    const auto text = encode_state(state, 7);
    CHECK(text.find(R"("port":1002,"age_ms":1000,"partial":true})") != std::string::npos);
    CHECK(text.find(R"("port":1001,"age_ms":1000})") != std::string::npos);
    auto decoded = decode_state(text);
    REQUIRE(decoded.ok());
    CHECK(decoded->state == state);

    auto after = make();
    after.import_state(decoded->state, t1, 0s);
    CHECK(after.scrape(hash('a')) ==
          SwarmCounts{.seeders = 1, .leechers = 2, .completed = 0, .partial_seeds = 1});
    // Restored, the partial seed is still given only leechers.
    auto p = after.announce(req(hash('a'), 2, 1002, 50, AnnounceEvent::paused), ip("10.0.0.2"), t1);
    CHECK(ports(p.value()) == std::vector<std::uint16_t>{1003});
}
