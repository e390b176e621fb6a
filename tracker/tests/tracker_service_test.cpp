// TrackerService answers without sockets: HTTP statuses and bodies, the UDP exchange, whitelist reloads.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <libtorrent/bdecode.hpp>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "tracker/io/tracker_service.hpp"

using namespace toast::tracker;
using namespace std::chrono_literals;
namespace lt = libtorrent;
using namespace std::string_literals;

namespace {

const TimePoint t0 = TimePoint{} + 1000h;
const IpAddress kLocal = *IpAddress::parse("127.0.0.1");

std::string escaped(char c) {
    std::string out;
    for (int i = 0; i < 20; ++i)
        out += std::string("%") + "0123456789ABCDEF"[(c >> 4) & 0xf] + "0123456789ABCDEF"[c & 0xf];
    return out;
}

std::string announce(char hash, int peer, int port, int left, const std::string& extra = "") {
    std::string id = "-TT0001-" + std::to_string(100000000000 + peer);
    return "/announce?info_hash=" + escaped(hash) + "&peer_id=" + id + "&port=" + std::to_string(port) +
           "&uploaded=0&downloaded=0&left=" + std::to_string(left) + extra;
}

std::string failure_of(const HttpAnswer& a) {
    lt::error_code ec;
    auto n = lt::bdecode(lt::span<const char>(a.body.data(), static_cast<std::ptrdiff_t>(a.body.size())), ec);
    if (ec || n.type() != lt::bdecode_node::dict_t) return "<not bencoded>";
    return std::string(n.dict_find_string_value("failure reason"));
}

TrackerConfig config_without_limit() {
    TrackerConfig c;
    c.rate_limit.per_second = 0;
    return c;
}

struct Fixture {
    explicit Fixture(TrackerConfig c = config_without_limit())
        : service(c, ServiceSecrets{SipKey{1, 2}, SipKey{3, 4}}, metrics) {}
    HttpAnswer get(const std::string& target, TimePoint now = t0, IpAddress from = kLocal) {
        return service.handle_http("GET", target, from, now);
    }
    toast::MetricsRegistry metrics;
    TrackerService service;
};

bool has_line(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("the service answers an announce with bencoded peers", "[tracker][service]") {
    Fixture f;
    auto first = f.get(announce('a', 1, 7001, 0));
    REQUIRE(first.status == 200);
    auto second = f.get(announce('a', 2, 7002, 100));
    REQUIRE(second.status == 200);
    CHECK(second.body.find("5:peers6:\x7f\x00\x00\x01\x1b\x59"s) != std::string::npos);
    CHECK(second.body.find("8:completei1e") != std::string::npos);
    CHECK(second.body.find("10:incompletei1e") != std::string::npos);
    CHECK(has_line(f.service.metrics_text(), "toast_tracker_announces_total{transport=\"http\"} 2"));
}

TEST_CASE("malformed announces get 400 with a bencoded failure reason and are counted",
          "[tracker][service]") {
    Fixture f;
    auto bad_port = f.get(announce('a', 1, 0, 0));
    CHECK(bad_port.status == 400);
    CHECK(bad_port.reason == "port must be an integer in 1..65535");
    CHECK(failure_of(bad_port) == "port must be an integer in 1..65535");
    auto short_hash = f.get("/announce?info_hash=abc&peer_id=x&port=1&uploaded=0&downloaded=0&left=0");
    CHECK(short_hash.status == 400);
    CHECK(failure_of(short_hash) == "info_hash must be exactly 20 bytes");
    auto counters = f.get(announce('a', 1, 5, 0) + "x");  // left=0x
    CHECK(counters.status == 400);
    CHECK(failure_of(counters) == "left must be a non-negative integer");
    auto text = f.service.metrics_text();
    CHECK(has_line(text, "toast_tracker_http_malformed_total{reason=\"bad_port\"} 1"));
    CHECK(has_line(text, "toast_tracker_http_malformed_total{reason=\"bad_info_hash\"} 1"));
    CHECK(has_line(text, "toast_tracker_http_malformed_total{reason=\"bad_left\"} 1"));
    CHECK(f.service.registry().totals().announces == 0);
}

TEST_CASE("paths, methods and target length get their own statuses", "[tracker][service]") {
    Fixture f;
    CHECK(f.get("/nothing").status == 404);
    auto post = f.service.handle_http("POST", "/announce", kLocal, t0);
    CHECK(post.status == 405);
    REQUIRE(post.headers.size() == 1);
    CHECK(post.headers[0] == std::pair<std::string, std::string>("Allow", "GET"));
    auto long_target = f.get("/announce?" + std::string(3000, 'x'));
    CHECK(long_target.status == 414);
    CHECK(failure_of(long_target) == "request target longer than 2048 bytes");
}

TEST_CASE("the per-IP rate limit answers 429 with a bencoded failure", "[tracker][service]") {
    TrackerConfig c = config_without_limit();
    c.rate_limit = RateLimit{.per_second = 1, .burst = 2, .max_tracked = 100, .ipv6_prefix = 64};
    Fixture f(c);
    CHECK(f.get(announce('a', 1, 7001, 10), t0).status == 200);
    CHECK(f.get(announce('a', 1, 7001, 10), t0).status == 200);
    auto limited = f.get(announce('a', 1, 7001, 10), t0);
    CHECK(limited.status == 429);
    CHECK(failure_of(limited) == "rate limit exceeded for your address; slow down");
    CHECK(limited.headers == std::vector<std::pair<std::string, std::string>>{{"Retry-After", "1"}});
    // Another address is not affected, and the first recovers with time.
    CHECK(f.get(announce('a', 2, 7002, 10), t0, *IpAddress::parse("10.0.0.2")).status == 200);
    CHECK(f.get(announce('a', 1, 7001, 10), t0 + 1s).status == 200);
    CHECK(has_line(f.service.metrics_text(),
                   "toast_tracker_refused_total{transport=\"http\",reason=\"rate_limited\"} 1"));
}

TEST_CASE("scrape reports complete, incomplete, downloaded and downloaders per info-hash",
          "[tracker][service]") {
    Fixture f;
    f.get(announce('a', 1, 7001, 0));
    f.get(announce('a', 2, 7002, 10));
    f.get(announce('a', 2, 7002, 0, "&event=completed"));
    f.get(announce('a', 3, 7003, 10));
    auto s = f.get("/scrape?info_hash=" + escaped('a') + "&info_hash=" + escaped('b'));
    REQUIRE(s.status == 200);
    CHECK(s.body ==
          "d5:filesd20:" + std::string(20, 'a') +
              "d8:completei2e10:downloadedi1e11:downloadersi1e10:incompletei1ee20:" + std::string(20, 'b') +
              "d8:completei0e10:downloadedi0e11:downloadersi0e10:incompletei0eeee");
    auto bad = f.get("/scrape");
    CHECK(bad.status == 400);
    CHECK(failure_of(bad) == "scrape needs at least one info_hash");
}

TEST_CASE("stats list swarms with seeders, leechers, completed and announces", "[tracker][service]") {
    Fixture f;
    f.get(announce('a', 1, 7001, 0));
    f.get(announce('a', 2, 7002, 10));
    f.get(announce('a', 2, 7002, 0, "&event=completed"));
    auto s = f.get("/stats");
    REQUIRE(s.status == 200);
    CHECK(s.content_type == "application/json");
    auto j = nlohmann::json::parse(s.body);
    REQUIRE(j["swarms"].size() == 1);
    CHECK(j["swarms"][0]["info_hash"] == "6161616161616161616161616161616161616161");
    CHECK(j["swarms"][0]["seeders"] == 2);
    CHECK(j["swarms"][0]["leechers"] == 0);
    CHECK(j["swarms"][0]["completed"] == 1);
    CHECK(j["swarms"][0]["announces"] == 3);
    CHECK(j["totals"]["announces"] == 3);
    CHECK(j["whitelist"]["enabled"] == false);
}

TEST_CASE("stats with limit 0 give the totals alone and no next page", "[tracker][service]") {
    // The page is fetched one longer than asked and trimmed; "next" must not come from the last entry of an
    // empty page (that read lies before the start of the vector).
    Fixture f;
    f.get(announce('a', 1, 7001, 0));
    f.get(announce('b', 2, 7002, 0));
    for (const auto& target :
         std::vector<std::string>{"/stats?limit=0", "/stats?limit=0&after=" + std::string(40, '6')}) {
        auto s = f.get(target);
        REQUIRE(s.status == 200);
        auto j = nlohmann::json::parse(s.body);
        CHECK(j["swarms"].empty());
        CHECK(j["totals"]["swarms"] == 2);
        CHECK(j["next"].is_null());
    }
    auto one = nlohmann::json::parse(f.get("/stats?limit=1").body);
    REQUIRE(one["swarms"].size() == 1);
    CHECK(one["next"] == one["swarms"][0]["info_hash"]);
}

TEST_CASE("a whitelist answers 403 for unknown info-hashes and reloads without dropping swarms",
          "[tracker][service][whitelist]") {
    toast::testing::TempDir dir;
    auto path = dir / "whitelist.txt";
    std::ofstream(path) << "6161616161616161616161616161616161616161\n";
    TrackerConfig c = config_without_limit();
    c.whitelist = path;
    Fixture f(c);
    CHECK(f.get(announce('a', 1, 7001, 10)).status == 200);
    auto refused = f.get(announce('b', 2, 7002, 10));
    CHECK(refused.status == 403);
    CHECK(failure_of(refused) == "info_hash is not served by this tracker");
    // Scrape leaves out what is not served.
    CHECK(f.get("/scrape?info_hash=" + escaped('b')).body == "d5:filesdee");

    std::ofstream(path)
        << "6161616161616161616161616161616161616161\n6262626262626262626262626262626262626262\n";
    auto ok = f.service.reload_whitelist();
    CHECK(ok.ok);
    CHECK(ok.message == "whitelist reloaded: 2 info-hashes");
    CHECK(f.get(announce('b', 2, 7002, 10)).status == 200);
    CHECK(f.service.registry().scrape(*InfoHash::from_bytes(std::string(20, 'a'))) == SwarmCounts{0, 1, 0});

    std::ofstream(path) << "not a hash\n";
    auto bad = f.service.reload_whitelist();
    CHECK_FALSE(bad.ok);
    CHECK(bad.message ==
          "whitelist file '" + path.string() +
              "' line 1: expected a 40- or 64-digit hex info-hash, got \"not a hash\"; keeping the "
              "previous whitelist");
    CHECK(f.get(announce('b', 3, 7003, 10)).status == 200);
    auto text = f.service.metrics_text();
    CHECK(has_line(text, "toast_tracker_whitelist_reloads_total{result=\"ok\"} 1"));
    CHECK(has_line(text, "toast_tracker_whitelist_reloads_total{result=\"failed\"} 1"));
    CHECK(has_line(text, "toast_tracker_whitelist_entries 2"));
}

TEST_CASE("a missing whitelist file stops the service from starting", "[tracker][service][whitelist]") {
    TrackerConfig c;
    c.whitelist = "/nonexistent/toast-whitelist.txt";
    toast::MetricsRegistry metrics;
    CHECK_THROWS_WITH(
        TrackerService(c, ServiceSecrets{}, metrics),
        "cannot read whitelist file '/nonexistent/toast-whitelist.txt': No such file or directory");
}

TEST_CASE("a whitelist path naming a directory stops the service, not an empty whitelist",
          "[tracker][service][whitelist]") {
    toast::testing::TempDir dir;
    TrackerConfig c;
    c.whitelist = dir.path();
    toast::MetricsRegistry metrics;
    CHECK_THROWS_WITH(TrackerService(c, ServiceSecrets{}, metrics),
                      "cannot read whitelist file '" + dir.path().string() + "': is a directory");
}

TEST_CASE("the UDP exchange: connect, announce and scrape with a checked connection id",
          "[tracker][service][udp]") {
    Fixture f;
    const PeerEndpoint client{*IpAddress::parse("10.0.0.1"), 6881};
    auto connect = f.service.handle_udp(udp::write_connect_request(77), client, t0);
    REQUIRE(connect);
    REQUIRE(connect->size() == 16);
    std::uint64_t cid = 0;
    for (int i = 8; i < 16; ++i)
        cid = (cid << 8) | (*connect)[static_cast<std::size_t>(i)];

    AnnounceRequest seed;
    seed.info_hash = *InfoHash::from_bytes(std::string(20, 'a'));
    seed.peer_id = *PeerId::from_bytes(std::string(20, 's'));
    seed.port = 7001;
    seed.left = 0;
    auto reply = f.service.handle_udp(udp::write_announce_request(cid, 78, seed, 0, -1), client, t0);
    REQUIRE(reply);
    CHECK(reply->size() == 20);
    CHECK((*reply)[3] == 1);  // announce action
    CHECK((*reply)[7] == 78);
    CHECK((*reply)[19] == 1);  // one seeder

    // A leecher from another address (its own connection id) gets the seed as a 6-byte entry.
    const PeerEndpoint other{*IpAddress::parse("10.0.0.2"), 6882};
    auto c2 = f.service.handle_udp(udp::write_connect_request(1), other, t0);
    std::uint64_t cid2 = 0;
    for (int i = 8; i < 16; ++i)
        cid2 = (cid2 << 8) | (*c2)[static_cast<std::size_t>(i)];
    AnnounceRequest leech = seed;
    leech.peer_id = *PeerId::from_bytes(std::string(20, 'l'));
    leech.port = 7002;
    leech.left = 5;
    auto r2 = f.service.handle_udp(udp::write_announce_request(cid2, 2, leech, 0, 50), other, t0);
    REQUIRE(r2);
    REQUIRE(r2->size() == 26);
    CHECK(std::vector<std::uint8_t>(r2->begin() + 20, r2->end()) ==
          std::vector<std::uint8_t>{10, 0, 0, 1, 0x1b, 0x59});

    // The first client's id is not valid from another address, nor after two windows; from another port of
    // the same address it is (libtorrent shares one id across its sockets).
    CHECK_FALSE(f.service.handle_udp(udp::write_announce_request(cid, 3, leech, 0, 50), other, t0));
    CHECK_FALSE(f.service.handle_udp(udp::write_announce_request(cid, 4, seed, 0, -1), client, t0 + 121s));
    const PeerEndpoint client_other_port{client.ip, 7777};
    CHECK(f.service.handle_udp(udp::write_announce_request(cid, 5, seed, 0, -1), client_other_port, t0));

    auto scrape = f.service.handle_udp(udp::write_scrape_request(cid, 5, {seed.info_hash}), client, t0);
    REQUIRE(scrape);
    CHECK(*scrape == std::vector<std::uint8_t>{0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1});

    CHECK(has_line(f.service.metrics_text(), "toast_tracker_udp_bad_connection_id_total 2"));
    CHECK(has_line(f.service.metrics_text(), "toast_tracker_announces_total{transport=\"udp\"} 3"));
}

TEST_CASE("malformed UDP packets are dropped and counted by reason", "[tracker][service][udp]") {
    Fixture f;
    const PeerEndpoint client{*IpAddress::parse("10.0.0.1"), 6881};
    std::vector<std::uint8_t> garbage(10, 0xab);
    CHECK_FALSE(f.service.handle_udp(garbage, client, t0));
    std::vector<std::uint8_t> wrong_protocol = udp::write_connect_request(1);
    wrong_protocol[0] = 1;
    CHECK_FALSE(f.service.handle_udp(wrong_protocol, client, t0));
    auto text = f.service.metrics_text();
    CHECK(has_line(text, "toast_tracker_udp_malformed_total 2"));
    CHECK(has_line(text, "toast_tracker_udp_malformed_by_reason_total{reason=\"too_short\"} 1"));
    CHECK(has_line(text, "toast_tracker_udp_malformed_by_reason_total{reason=\"bad_protocol_id\"} 1"));
}

TEST_CASE("a UDP announce for a hash off the whitelist gets an error packet", "[tracker][service][udp]") {
    toast::testing::TempDir dir;
    auto path = dir / "whitelist.txt";
    std::ofstream(path) << "# empty list\n";
    TrackerConfig c = config_without_limit();
    c.whitelist = path;
    Fixture f(c);
    const PeerEndpoint client{*IpAddress::parse("10.0.0.1"), 6881};
    auto connect = f.service.handle_udp(udp::write_connect_request(1), client, t0);
    std::uint64_t cid = 0;
    for (int i = 8; i < 16; ++i)
        cid = (cid << 8) | (*connect)[static_cast<std::size_t>(i)];
    AnnounceRequest r;
    r.info_hash = *InfoHash::from_bytes(std::string(20, 'a'));
    r.peer_id = *PeerId::from_bytes(std::string(20, 'p'));
    r.port = 1;
    auto reply = f.service.handle_udp(udp::write_announce_request(cid, 9, r, 0, -1), client, t0);
    REQUIRE(reply);
    CHECK(*reply == udp::write_error(9, "info_hash is not served by this tracker"));
}

TEST_CASE("tick expires silent peers", "[tracker][service]") {
    TrackerConfig c = config_without_limit();
    c.registry.interval = 10s;
    c.registry.peer_expiry = 20s;
    Fixture f(c);
    f.get(announce('a', 1, 7001, 10), t0);
    f.service.tick(t0 + 19s);
    CHECK(f.service.registry().totals().leechers == 1);
    f.service.tick(t0 + 20s);
    CHECK(f.service.registry().totals().leechers == 0);
    CHECK(has_line(f.service.metrics_text(), "toast_tracker_peers_expired_total 1"));
}

TEST_CASE("ip= over HTTP and the UDP IP field are ignored from loopback unless ip_param_from lists it",
          "[tracker][service]") {
    // Behind a same-host proxy every client arrives from loopback, so believing its ip= by default would let
    // anyone point a swarm at a third party; the service must pass the request's address to the policy from
    // both transports.
    const auto peers_seen_by_leecher = [](Fixture& f) {
        auto via_http = f.get(announce('a', 1, 7001, 0, "&ip=192.0.2.7"));
        REQUIRE(via_http.status == 200);
        const PeerEndpoint local{kLocal, 6881};
        auto connect = f.service.handle_udp(udp::write_connect_request(1), local, t0);
        REQUIRE(connect);
        std::uint64_t cid = 0;
        for (int i = 8; i < 16; ++i)
            cid = (cid << 8) | (*connect)[static_cast<std::size_t>(i)];
        AnnounceRequest seed;
        seed.info_hash = *InfoHash::from_bytes(std::string(20, 'a'));
        seed.peer_id = *PeerId::from_bytes(std::string(20, 'u'));
        seed.port = 7002;
        seed.left = 0;
        seed.ip = *IpAddress::parse("192.0.2.8");
        REQUIRE(f.service.handle_udp(udp::write_announce_request(cid, 2, seed, 0, -1), local, t0));
        auto leecher = f.get(announce('a', 3, 7003, 100), t0, *IpAddress::parse("10.0.0.3"));
        REQUIRE(leecher.status == 200);
        return leecher.body;
    };
    const auto entry = [](const char* ip, int port) {
        auto a = *IpAddress::parse(ip);
        return std::string(a.bytes.begin(), a.bytes.begin() + 4) + static_cast<char>(port >> 8) +
               static_cast<char>(port & 0xff);
    };
    Fixture by_default;
    auto body = peers_seen_by_leecher(by_default);
    CHECK(body.find("5:peers12:") != std::string::npos);
    CHECK(body.find(entry("127.0.0.1", 7001)) != std::string::npos);
    CHECK(body.find(entry("127.0.0.1", 7002)) != std::string::npos);
    CHECK(body.find(entry("192.0.2.7", 7001)) == std::string::npos);
    CHECK(body.find(entry("192.0.2.8", 7002)) == std::string::npos);

    auto c = config_without_limit();
    c.registry.ip_param_from = AddressSet({*AddressPrefix::parse("127.0.0.0/8")});
    Fixture configured(c);
    body = peers_seen_by_leecher(configured);
    CHECK(body.find("5:peers12:") != std::string::npos);
    CHECK(body.find(entry("192.0.2.7", 7001)) != std::string::npos);
    CHECK(body.find(entry("192.0.2.8", 7002)) != std::string::npos);
    CHECK(body.find(entry("127.0.0.1", 7001)) == std::string::npos);
}

TEST_CASE("a restore says what it restored and what it left out, and updates the gauges",
          "[tracker][service][state]") {
    toast::testing::TempDir dir;
    const auto wall = std::chrono::system_clock::time_point{} + 20'000h;
    auto c = config_without_limit();
    c.state_file = dir / "tracker.state";
    {
        Fixture before(c);
        REQUIRE(before.get(announce('a', 1, 7001, 5)).status == 200);
        REQUIRE(before.get(announce('b', 2, 7002, 0)).status == 200);
        REQUIRE(before.get(announce('b', 3, 7003, 5)).status == 200);
        const auto saved = before.service.save_state(t0, wall);
        CHECK(saved.ok);
        CHECK(saved.message.rfind("state: saved 2 swarms, 3 peers to " + c.state_file->string() + " in ",
                                  0) == 0);
        CHECK(has_line(before.service.metrics_text(), "toast_tracker_state_saves_total{result=\"ok\"} 1"));
    }
    std::ofstream(dir / "list.txt") << toast::tracker::to_hex(std::string(20, 'b')) + "\n";
    c.whitelist = dir / "list.txt";
    Fixture after(c);
    const auto restored = after.service.restore_state(t0 + 1h, wall + 3s);
    CHECK(restored.ok);
    CHECK(restored.message == "state: restored 1 swarms, 2 peers from " + c.state_file->string() +
                                  " (saved 3.0s ago); left out: 1 swarms not whitelisted, 1 peers in them");
    CHECK(has_line(after.service.metrics_text(), "toast_tracker_swarms 1"));
    CHECK(has_line(after.service.metrics_text(), "toast_tracker_seeders 1"));
}

TEST_CASE("a bad state file that cannot be moved aside turns saving off until state_file changes",
          "[tracker][service][state]") {
    toast::testing::TempDir dir;
    const auto wall = std::chrono::system_clock::time_point{} + 20'000h;
    auto c = config_without_limit();
    c.state_file = dir / "tracker.state";
    std::ofstream(*c.state_file) << "garbage";
    // A non-empty directory in the way of the rename.
    std::filesystem::create_directory(dir / "tracker.state.bad");
    std::ofstream(dir / "tracker.state.bad" / "keep") << "x";

    Fixture f(c);
    const auto restored = f.service.restore_state(t0, wall);
    CHECK_FALSE(restored.ok);
    CHECK(restored.message.find("state: state file '" + c.state_file->string() +
                                "' is not usable: not valid JSON: ") == 0);
    CHECK(restored.message.find("; cannot rename '" + c.state_file->string() + "' to '" +
                                c.state_file->string() + ".bad': ") != std::string::npos);
    CHECK(restored.message.find(", so saving is off until state_file changes (SIGHUP); starting empty") !=
          std::string::npos);
    REQUIRE(f.get(announce('a', 1, 7001, 5)).status == 200);
    CHECK(f.service.save_state(t0, wall).message.empty());
    CHECK(toast::testing::read_file(*c.state_file) == "garbage");

    auto next = c;
    next.state_file = dir / "other.state";
    f.service.apply_config(next);
    CHECK(f.service.save_state(t0, wall).ok);
    CHECK(toast::testing::read_file(*next.state_file).find("\"port\":7001") != std::string::npos);
    CHECK(toast::testing::read_file(*c.state_file) == "garbage");
}
