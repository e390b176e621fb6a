#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tracker/core/udp_protocol.hpp"

using namespace toast::tracker;
using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;

namespace {

Bytes bytes(std::initializer_list<int> v) {
    Bytes out;
    for (int b : v)
        out.push_back(static_cast<std::uint8_t>(b));
    return out;
}

void append(Bytes& out, const std::string& s) {
    out.insert(out.end(), s.begin(), s.end());
}

// A hand-assembled BEP 15 announce, independent of write_announce_request.
Bytes announce_packet() {
    Bytes p = bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // connection id
                     0, 0, 0, 1,                                      // announce
                     0xde, 0xad, 0xbe, 0xef});                        // transaction id
    append(p, std::string(20, 'H'));
    append(p, "-TT0001-123456789012");
    append(p, std::string("\0\0\0\0\0\0\0\x10", 8));  // downloaded 16
    append(p, std::string("\0\0\0\0\0\0\x01\0", 8));  // left 256
    append(p, std::string("\0\0\0\0\0\0\0\x20", 8));  // uploaded 32
    append(p, std::string("\0\0\0\x02", 4));          // started
    append(p, std::string("\0\0\0\0", 4));            // ip: default
    append(p, std::string("\x11\x22\x33\x44", 4));    // key
    append(p, std::string("\xff\xff\xff\xff", 4));    // numwant -1
    append(p, std::string("\x1a\xe1", 2));            // port 6881
    return p;
}

}  // namespace

TEST_CASE("a connect request parses to its transaction id", "[tracker][udp]") {
    auto p = bytes({0x00, 0x00, 0x04, 0x17, 0x27, 0x10, 0x19, 0x80, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78});
    auto r = udp::parse_request(p);
    REQUIRE(r.ok());
    REQUIRE(std::holds_alternative<udp::ConnectRequest>(r.value()));
    CHECK(std::get<udp::ConnectRequest>(r.value()).transaction_id == 0x12345678);
    CHECK(udp::write_connect_request(0x12345678) == p);
}

TEST_CASE("a connect request with a wrong protocol id is malformed", "[tracker][udp]") {
    auto p = bytes({0x00, 0x00, 0x04, 0x17, 0x27, 0x10, 0x19, 0x81, 0, 0, 0, 0, 1, 2, 3, 4});
    CHECK(udp::parse_request(p).error() == udp::ParseError::bad_protocol_id);
}

TEST_CASE("an announce packet parses every field, ignoring BEP 41 options after it", "[tracker][udp]") {
    Bytes p = announce_packet();
    REQUIRE(p.size() == 98);
    append(p, std::string("\x02\x09/announce", 11));  // URL data option, as libtorrent sends
    auto r = udp::parse_request(p);
    REQUIRE(r.ok());
    const auto& a = std::get<udp::AnnounceRequestPacket>(r.value());
    CHECK(a.connection_id == 0x0102030405060708ull);
    CHECK(a.transaction_id == 0xdeadbeef);
    CHECK(a.key == 0x11223344);
    CHECK(std::string(a.request.info_hash.view()) == std::string(20, 'H'));
    CHECK(std::string(a.request.peer_id.view()) == "-TT0001-123456789012");
    CHECK(a.request.downloaded == 16);
    CHECK(a.request.left == 256);
    CHECK(a.request.uploaded == 32);
    CHECK(a.request.event == AnnounceEvent::started);
    CHECK_FALSE(a.request.ip.has_value());
    CHECK_FALSE(a.request.numwant.has_value());
    CHECK(a.request.port == 6881);

    // The builder produces the same 98 bytes.
    CHECK(udp::write_announce_request(a.connection_id, a.transaction_id, a.request, a.key, -1) ==
          announce_packet());
}

TEST_CASE("announce packets that are short, have a bad event or port 0 are malformed", "[tracker][udp]") {
    Bytes p = announce_packet();
    CHECK(udp::parse_request(Bytes(p.begin(), p.begin() + 97)).error() == udp::ParseError::too_short);
    Bytes paused = p;  // event 4: libtorrent's partial seed (BEP 21), written as an HTTP tracker's "paused"
    paused[83] = 4;
    auto partial_seed = udp::parse_request(paused);
    REQUIRE(partial_seed.ok());
    CHECK(std::get<udp::AnnounceRequestPacket>(partial_seed.value()).request.event == AnnounceEvent::paused);
    auto written = std::get<udp::AnnounceRequestPacket>(partial_seed.value());
    CHECK(udp::write_announce_request(written.connection_id, written.transaction_id, written.request,
                                      written.key, -1)[83] == 4);
    Bytes bad_event = p;
    bad_event[83] = 5;
    CHECK(udp::parse_request(bad_event).error() == udp::ParseError::bad_event);
    Bytes zero_port = p;
    zero_port[96] = 0;
    zero_port[97] = 0;
    CHECK(udp::parse_request(zero_port).error() == udp::ParseError::bad_port);
    Bytes with_ip = p;
    with_ip[84] = 10;
    with_ip[87] = 7;
    auto r = udp::parse_request(with_ip);
    REQUIRE(r.ok());
    CHECK(std::get<udp::AnnounceRequestPacket>(r.value()).request.ip->to_string() == "10.0.0.7");
}

TEST_CASE("short packets and unknown actions are malformed", "[tracker][udp]") {
    CHECK(udp::parse_request(Bytes{}).error() == udp::ParseError::too_short);
    CHECK(udp::parse_request(Bytes(15, 0)).error() == udp::ParseError::too_short);
    auto unknown = bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 1});
    CHECK(udp::parse_request(unknown).error() == udp::ParseError::unknown_action);
    auto error_action = bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 1});
    CHECK(udp::parse_request(error_action).error() == udp::ParseError::unknown_action);
}

TEST_CASE("a scrape packet carries 1 to 74 whole info-hashes", "[tracker][udp]") {
    std::vector<InfoHash> hashes = {*InfoHash::from_bytes(std::string(20, 'a')),
                                    *InfoHash::from_bytes(std::string(20, 'b'))};
    auto p = udp::write_scrape_request(42, 7, hashes);
    REQUIRE(p.size() == 56);
    auto r = udp::parse_request(p);
    REQUIRE(r.ok());
    const auto& s = std::get<udp::ScrapeRequestPacket>(r.value());
    CHECK(s.connection_id == 42);
    CHECK(s.transaction_id == 7);
    CHECK(s.info_hashes == hashes);

    Bytes ragged = p;
    ragged.pop_back();
    CHECK(udp::parse_request(ragged).error() == udp::ParseError::bad_scrape_length);
    CHECK(udp::parse_request(udp::write_scrape_request(42, 7, {})).error() ==
          udp::ParseError::bad_scrape_length);
    std::vector<InfoHash> many(75, hashes[0]);
    CHECK(udp::parse_request(udp::write_scrape_request(42, 7, many)).error() ==
          udp::ParseError::too_many_hashes);
    many.pop_back();
    CHECK(udp::parse_request(udp::write_scrape_request(42, 7, many)).ok());
}

TEST_CASE("responses are serialised byte-exactly", "[tracker][udp]") {
    CHECK(udp::write_connect_response(0x01020304, 0x1122334455667788ull) ==
          bytes({0, 0, 0, 0, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));

    std::vector<PeerInfo> peers = {
        PeerInfo{PeerId{}, PeerEndpoint{*IpAddress::parse("10.0.0.1"), 6881}},
        PeerInfo{PeerId{}, PeerEndpoint{*IpAddress::parse("2001:db8::1"), 1}},
    };
    auto v4 = udp::write_announce_response(9, 300s, SwarmCounts{2, 5, 0}, peers, false);
    CHECK(v4 ==
          bytes({0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 1, 0x2c, 0, 0, 0, 5, 0, 0, 0, 2, 10, 0, 0, 1, 0x1a, 0xe1}));
    auto v6 = udp::write_announce_response(9, 300s, SwarmCounts{2, 5, 0}, peers, true);
    REQUIRE(v6.size() == 20 + 18);
    CHECK(Bytes(v6.begin() + 20, v6.end()) ==
          bytes({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));

    CHECK(udp::write_scrape_response(3, {SwarmCounts{1, 2, 3}}) ==
          bytes({0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2}));
    CHECK(udp::write_error(3, "no") == bytes({0, 0, 0, 3, 0, 0, 0, 3, 'n', 'o'}));
}

TEST_CASE("a full announce reply fits one 1472-byte datagram", "[tracker][udp]") {
    CHECK(udp::max_peers_per_datagram(false) == 242);
    CHECK(udp::max_peers_per_datagram(true) == 80);
    std::vector<PeerInfo> peers(242, PeerInfo{PeerId{}, PeerEndpoint{*IpAddress::parse("10.0.0.1"), 1}});
    CHECK(udp::write_announce_response(1, 1s, {}, peers, false).size() <= udp::kMaxDatagram);
}

TEST_CASE("connection ids are tied to the client IP and expire after two windows", "[tracker][udp]") {
    udp::ConnectionIds ids(SipKey{5, 6}, 60s);
    const TimePoint t = TimePoint{} + 6000s;  // the start of a window
    const auto client = *IpAddress::parse("10.0.0.1");
    const auto other = *IpAddress::parse("10.0.0.2");
    auto id = ids.issue(client, t);
    CHECK(ids.valid(id, client, t));
    CHECK(ids.valid(id, client, t + 119s));
    CHECK_FALSE(ids.valid(id, client, t + 120s));
    CHECK_FALSE(ids.valid(id, other, t));
    CHECK_FALSE(ids.valid(id, *IpAddress::parse("::ffff:10.0.0.2"), t));
    CHECK_FALSE(ids.valid(id + 1, client, t));
    // Issued at the end of a window, still valid a full window later.
    auto late = ids.issue(client, t + 59s);
    CHECK(ids.valid(late, client, t + 119s));
    // A different secret gives different ids.
    udp::ConnectionIds other_secret(SipKey{5, 7}, 60s);
    CHECK(other_secret.issue(client, t) != id);
}
