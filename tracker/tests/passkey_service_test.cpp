// TrackerService under a passkey file, without sockets: which announces and scrapes it admits over HTTP and
// UDP, what it answers the others, and what a reload that revokes a key does to the swarms.
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

namespace {

const TimePoint t0 = TimePoint{} + 1000h;
const IpAddress kLocal = *IpAddress::parse("127.0.0.1");
const std::string kBox1 = "box1box1box1box1box1box1box1box1";
const std::string kBox2 = "box2box2box2box2box2box2box2box2";
const std::string kBox3 = "box3box3box3box3box3box3box3box3";

std::string escaped(char c) {
    std::string out;
    for (int i = 0; i < 20; ++i)
        out += std::string("%") + "0123456789ABCDEF"[(c >> 4) & 0xf] + "0123456789ABCDEF"[c & 0xf];
    return out;
}

std::string query(char hash, int peer, int port, int left) {
    return "info_hash=" + escaped(hash) + "&peer_id=-TT0001-" + std::to_string(100000000000 + peer) +
           "&port=" + std::to_string(port) + "&uploaded=0&downloaded=0&left=" + std::to_string(left);
}

std::string failure_of(const HttpAnswer& a) {
    lt::error_code ec;
    auto n = lt::bdecode(lt::span<const char>(a.body.data(), static_cast<std::ptrdiff_t>(a.body.size())), ec);
    if (ec || n.type() != lt::bdecode_node::dict_t) return "<not bencoded>";
    return std::string(n.dict_find_string_value("failure reason"));
}

bool has_line(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
}

struct Fixture {
    // `restored`: swarms the service restores from a state file at start, as after a restart.
    explicit Fixture(const std::string& keys, const std::optional<RegistryState>& restored = std::nullopt) {
        path = dir / "passkeys";
        std::ofstream(path) << keys;
        config.rate_limit.per_second = 0;
        config.passkeys = path;
        if (restored) {
            config.state_file = dir / "state.json";
            const auto now = std::chrono::system_clock::now();
            std::ofstream(*config.state_file) << encode_state(
                *restored,
                std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count());
        }
        service.emplace(config, ServiceSecrets{SipKey{1, 2}, SipKey{3, 4}}, metrics);
        if (restored) REQUIRE(service->restore_state(t0, std::chrono::system_clock::now()).ok);
    }
    HttpAnswer get(const std::string& target, IpAddress from = kLocal) {
        return service->handle_http("GET", target, from, t0);
    }
    // Rewrites the passkey file and applies the config as SIGHUP does.
    TrackerService::ConfigReload reload(const std::string& keys) {
        std::ofstream(path) << keys;
        return service->apply_config(config);
    }
    SwarmCounts swarm(char hash) const {
        return *service->registry().scrape(*InfoHash::from_bytes(std::string(20, hash)));
    }
    std::string metrics_text() const { return service->metrics_text(); }

    toast::testing::TempDir dir;
    std::filesystem::path path;
    TrackerConfig config;
    toast::MetricsRegistry metrics;
    std::optional<TrackerService> service;
};

std::uint64_t connection_id(TrackerService& s, const PeerEndpoint& from) {
    auto connect = s.handle_udp(udp::write_connect_request(1), from, t0);
    REQUIRE(connect);
    std::uint64_t cid = 0;
    for (int i = 8; i < 16; ++i)
        cid = (cid << 8) | (*connect)[static_cast<std::size_t>(i)];
    return cid;
}

AnnounceRequest udp_request(char hash, char peer, std::uint16_t port) {
    AnnounceRequest r;
    r.info_hash = *InfoHash::from_bytes(std::string(20, hash));
    r.peer_id = *PeerId::from_bytes(std::string(20, peer));
    r.port = port;
    r.left = 10;
    return r;
}

}  // namespace

TEST_CASE("under a passkey file, announces with a listed key are answered in both URL forms",
          "[tracker][service][passkeys]") {
    Fixture f(kBox1 + " living room\n" + kBox2 + "\n");
    CHECK(f.get("/announce/" + kBox1 + "?" + query('a', 1, 7001, 0)).status == 200);
    auto second = f.get("/announce?passkey=" + kBox2 + "&" + query('a', 2, 7002, 10));
    REQUIRE(second.status == 200);
    CHECK(second.body.find("5:peers6:") != std::string::npos);
    CHECK(f.swarm('a') == SwarmCounts{1, 1, 0});
    // libtorrent scrapes at the announce URL with "announce" replaced by "scrape".
    auto scrape = f.get("/scrape/" + kBox1 + "?info_hash=" + escaped('a'));
    CHECK(scrape.status == 200);
    CHECK(scrape.body.find("8:completei1e") != std::string::npos);
    auto stats = nlohmann::json::parse(f.service->stats_json(std::nullopt, 10));
    CHECK(stats["passkeys"] == nlohmann::json{{"enabled", true}, {"entries", 2}});
    CHECK(has_line(f.metrics_text(), "toast_tracker_passkeys 2"));
}

TEST_CASE("no passkey, an unknown one, a malformed one or two are refused and counted, and nothing is served",
          "[tracker][service][passkeys]") {
    Fixture f(kBox1 + "\n");
    auto none = f.get("/announce?" + query('a', 1, 7001, 0));
    CHECK(none.status == 403);
    CHECK(none.reason == "this tracker needs a passkey: announce to /announce/PASSKEY");
    CHECK(failure_of(none) == "this tracker needs a passkey: announce to /announce/PASSKEY");
    auto unknown = f.get("/announce/" + kBox2 + "?" + query('a', 1, 7001, 0));
    CHECK(unknown.status == 403);
    CHECK(failure_of(unknown) == "unknown passkey");
    CHECK(unknown.body.find("peers") == std::string::npos);
    auto malformed = f.get("/announce/not-a-key?" + query('a', 1, 7001, 0));
    CHECK(malformed.status == 400);
    CHECK(failure_of(malformed) == "malformed passkey (16 to 128 characters of A-Z a-z 0-9 _ -)");
    auto twice = f.get("/announce/" + kBox1 + "?passkey=" + kBox1 + "&" + query('a', 1, 7001, 0));
    CHECK(twice.status == 400);
    CHECK(failure_of(twice) == "the passkey is given more than once");
    auto scrape = f.get("/scrape?info_hash=" + escaped('a'));
    CHECK(scrape.status == 403);
    CHECK(scrape.body.find("files") == std::string::npos);

    // None of them created a swarm or a peer.
    CHECK(f.swarm('a') == SwarmCounts{});
    CHECK(f.service->registry().totals().swarms == 0);
    auto text = f.metrics_text();
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"http\",reason=\"no_passkey\"} 2"));
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"} 1"));
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"http\",reason=\"revoked_passkey\"} 0"));
    CHECK(has_line(text, "toast_tracker_http_malformed_total{reason=\"bad_passkey\"} 1"));
    CHECK(has_line(text, "toast_tracker_http_malformed_total{reason=\"two_passkeys\"} 1"));
}

TEST_CASE("a reload that takes a key out removes its peers from every swarm and refuses it from then on",
          "[tracker][service][passkeys]") {
    Fixture f(kBox1 + "\n" + kBox2 + "\n");
    REQUIRE(f.get("/announce/" + kBox1 + "?" + query('a', 1, 7001, 0)).status == 200);
    REQUIRE(f.get("/announce/" + kBox1 + "?" + query('b', 1, 7001, 10)).status == 200);
    REQUIRE(f.get("/announce/" + kBox2 + "?" + query('a', 2, 7002, 10)).status == 200);
    REQUIRE(f.swarm('a') == SwarmCounts{1, 1, 0});

    auto r = f.reload(kBox2 + "\n" + kBox3 + "\n");
    CHECK(r.not_applied.empty());
    CHECK(r.changed ==
          std::vector<std::string>{"passkeys: reloaded, 2 in force (1 added, 1 revoked, 2 peers removed)"});
    // Box 1 is gone from both swarms at once: box 2 is handed nobody.
    CHECK(f.swarm('a') == SwarmCounts{0, 1, 0});
    CHECK(f.swarm('b') == SwarmCounts{0, 0, 0});
    auto box2 = f.get("/announce/" + kBox2 + "?" + query('a', 2, 7002, 10));
    REQUIRE(box2.status == 200);
    CHECK(box2.body.find("5:peers0:") != std::string::npos);

    auto revoked = f.get("/announce/" + kBox1 + "?" + query('a', 1, 7001, 0));
    CHECK(revoked.status == 403);
    CHECK(failure_of(revoked) == "passkey revoked");
    CHECK(f.get("/announce/" + kBox3 + "?" + query('a', 3, 7003, 10)).status == 200);
    auto text = f.metrics_text();
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"http\",reason=\"revoked_passkey\"} 1"));
    CHECK(has_line(text, "toast_tracker_revoked_peers_removed_total 2"));
    CHECK(has_line(text, "toast_tracker_passkey_reloads_total{result=\"ok\"} 1"));
}

TEST_CASE("a passkey file that does not parse on reload keeps the keys in force, and at start-up it stops",
          "[tracker][service][passkeys]") {
    Fixture f(kBox1 + "\n");
    auto r = f.reload(kBox2 + "\nshort\n");
    CHECK(r.not_applied ==
          std::vector<std::string>{"passkey file '" + f.path.string() +
                                   "' line 2: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -, got 5 "
                                   "characters; keeping the previous passkeys (" +
                                   f.path.string() + ")"});
    CHECK(f.get("/announce/" + kBox1 + "?" + query('a', 1, 7001, 0)).status == 200);
    CHECK(f.get("/announce/" + kBox2 + "?" + query('a', 2, 7002, 0)).status == 403);
    CHECK(has_line(f.metrics_text(), "toast_tracker_passkey_reloads_total{result=\"failed\"} 1"));

    TrackerConfig c;
    c.passkeys = f.dir / "missing";
    toast::MetricsRegistry metrics;
    CHECK_THROWS_WITH(
        TrackerService(c, ServiceSecrets{}, metrics),
        "cannot read passkey file '" + (f.dir / "missing").string() + "': No such file or directory");
}

TEST_CASE("a peer restored without an owner leaves its swarm at its first refused announce",
          "[tracker][service][passkeys]") {
    // A state file holds no passkeys, so the restored peer has no owner.
    RegistryState state;
    SwarmState s;
    s.info_hash = *InfoHash::from_bytes(std::string(20, 'a'));
    s.leechers.push_back(
        PeerState{*PeerId::from_bytes("-TT0001-100000000009"), PeerEndpoint{kLocal, 7009}, 1s});
    state.swarms.push_back(s);
    Fixture f(kBox1 + "\n", state);
    REQUIRE(f.swarm('a') == SwarmCounts{0, 1, 0});
    CHECK(f.get("/announce/" + kBox2 + "?" + query('a', 9, 7009, 10)).status == 403);
    CHECK(f.swarm('a') == SwarmCounts{0, 0, 0});
}

TEST_CASE("turning passkeys off by reload admits announces without one again",
          "[tracker][service][passkeys]") {
    Fixture f(kBox1 + "\n");
    f.config.passkeys.reset();
    auto r = f.service->apply_config(f.config);
    CHECK(r.changed ==
          std::vector<std::string>{"passkeys: " + f.path.string() + " -> (none)",
                                   "passkeys: off (1 revoked, 0 peers removed); announces need no passkey"});
    CHECK(f.get("/announce?" + query('a', 1, 7001, 0)).status == 200);
    CHECK(has_line(f.metrics_text(), "toast_tracker_passkeys 0"));
}

TEST_CASE("over UDP the passkey rides in BEP 41 URLData, refusals are error packets, scrapes are refused",
          "[tracker][service][passkeys][udp]") {
    Fixture f(kBox1 + "\n");
    const PeerEndpoint box{*IpAddress::parse("10.0.0.1"), 6881};
    const auto cid = connection_id(*f.service, box);

    auto ok = f.service->handle_udp(
        udp::write_announce_request(cid, 5, udp_request('a', 's', 7001), 0, -1, "/announce/" + kBox1), box,
        t0);
    REQUIRE(ok);
    CHECK((*ok)[3] == 1);  // an announce answer
    auto query_form = f.service->handle_udp(
        udp::write_announce_request(cid, 6, udp_request('a', 't', 7002), 0, -1, "/announce?passkey=" + kBox1),
        box, t0);
    REQUIRE(query_form);
    CHECK((*query_form)[3] == 1);
    CHECK(f.swarm('a') == SwarmCounts{0, 2, 0});

    auto none = f.service->handle_udp(udp::write_announce_request(cid, 7, udp_request('a', 'u', 7003), 0, -1),
                                      box, t0);
    CHECK(none == udp::write_error(7, "this tracker needs a passkey: announce to /announce/PASSKEY"));
    // "udp://host:port/" sends "/" as URLData: no tracker path, so no passkey either.
    auto slash = f.service->handle_udp(
        udp::write_announce_request(cid, 8, udp_request('a', 'u', 7003), 0, -1, "/"), box, t0);
    CHECK(slash == udp::write_error(8, "this tracker needs a passkey: announce to /announce/PASSKEY"));
    // "udp://host:port?passkey=KEY" sends just the query.
    auto bare = f.service->handle_udp(
        udp::write_announce_request(cid, 13, udp_request('b', 'u', 7003), 0, -1, "?passkey=" + kBox1), box,
        t0);
    REQUIRE(bare);
    CHECK((*bare)[3] == 1);
    auto unknown = f.service->handle_udp(
        udp::write_announce_request(cid, 9, udp_request('a', 'u', 7003), 0, -1, "/announce/" + kBox2), box,
        t0);
    CHECK(unknown == udp::write_error(9, "unknown passkey"));
    auto bad = f.service->handle_udp(
        udp::write_announce_request(cid, 10, udp_request('a', 'u', 7003), 0, -1, "/announce/x"), box, t0);
    CHECK(bad == udp::write_error(10, "malformed passkey (16 to 128 characters of A-Z a-z 0-9 _ -)"));
    auto scrape = f.service->handle_udp(
        udp::write_scrape_request(cid, 11, {udp_request('a', 'u', 1).info_hash}), box, t0);
    CHECK(scrape ==
          udp::write_error(11, "this tracker needs a passkey: scrape over HTTP at /scrape/PASSKEY"));
    CHECK(f.swarm('a') == SwarmCounts{0, 2, 0});
    CHECK(f.swarm('b') == SwarmCounts{0, 1, 0});

    f.reload(std::string("# all revoked\n"));
    CHECK(f.swarm('a') == SwarmCounts{0, 0, 0});
    CHECK(f.swarm('b') == SwarmCounts{0, 0, 0});
    auto revoked = f.service->handle_udp(
        udp::write_announce_request(cid, 12, udp_request('a', 's', 7001), 0, -1, "/announce/" + kBox1), box,
        t0);
    CHECK(revoked == udp::write_error(12, "passkey revoked"));
    auto text = f.metrics_text();
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"udp\",reason=\"no_passkey\"} 3"));
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"udp\",reason=\"unknown_passkey\"} 1"));
    CHECK(has_line(text, "toast_tracker_refused_total{transport=\"udp\",reason=\"revoked_passkey\"} 1"));
}

TEST_CASE("without a passkey file a key in the URL is ignored", "[tracker][service][passkeys]") {
    TrackerConfig c;
    c.rate_limit.per_second = 0;
    toast::MetricsRegistry metrics;
    TrackerService service(c, ServiceSecrets{SipKey{1, 2}, SipKey{3, 4}}, metrics);
    CHECK(
        service.handle_http("GET", "/announce/" + kBox1 + "?" + query('a', 1, 7001, 0), kLocal, t0).status ==
        200);
    CHECK(service.handle_http("GET", "/announce?" + query('a', 2, 7002, 0), kLocal, t0).status == 200);
    auto stats = nlohmann::json::parse(service.stats_json(std::nullopt, 10));
    CHECK(stats["passkeys"] == nlohmann::json{{"enabled", false}, {"entries", 0}});
}
