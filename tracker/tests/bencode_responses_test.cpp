#include <catch2/catch.hpp>

#include <string>

#include <libtorrent/bdecode.hpp>

#include "tracker/io/bencode_responses.hpp"

using namespace toast::tracker;
using namespace std::string_literals;
namespace lt = libtorrent;

namespace {

// The node points into `body`, which must outlive it.
lt::bdecode_node decode(const std::string& body) {
    lt::error_code ec;
    auto node = lt::bdecode(lt::span<const char>(body.data(), static_cast<std::ptrdiff_t>(body.size())), ec);
    REQUIRE_FALSE(ec);
    REQUIRE(node.type() == lt::bdecode_node::dict_t);
    return node;
}

PeerInfo peer(const std::string& id, const std::string& ip, std::uint16_t port) {
    return PeerInfo{*PeerId::from_bytes(id), PeerEndpoint{*IpAddress::parse(ip), port}};
}

AnnounceReply sample_reply() {
    AnnounceReply r;
    r.interval = std::chrono::seconds(300);
    r.min_interval = std::chrono::seconds(30);
    r.counts = SwarmCounts{3, 4, 5};
    r.peers = {peer("AAAAAAAAAAAAAAAAAAAA", "10.1.2.3", 6881),
               peer("BBBBBBBBBBBBBBBBBBBB", "2001:db8::1", 0x1234),
               peer("CCCCCCCCCCCCCCCCCCCC", "192.168.0.255", 65535)};
    return r;
}

}  // namespace

TEST_CASE("a compact announce answer packs IPv4 into peers and IPv6 into peers6", "[tracker][bencode]") {
    const std::string body = bencode_announce(sample_reply(), true, true);
    auto e = decode(body);
    CHECK(e.dict_find_int_value("interval") == 300);
    CHECK(e.dict_find_int_value("min interval") == 30);
    CHECK(e.dict_find_int_value("complete") == 3);
    CHECK(e.dict_find_int_value("incomplete") == 4);
    CHECK(e.dict_find_int_value("downloaded") == 5);
    CHECK(e.dict_find_string_value("peers") == std::string("\x0a\x01\x02\x03\x1a\xe1"
                                                           "\xc0\xa8\x00\xff\xff\xff",
                                                           12));
    CHECK(e.dict_find_string_value("peers6") ==
          std::string("\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x12\x34", 18));
}

TEST_CASE("a compact answer without IPv6 peers has no peers6 key", "[tracker][bencode]") {
    AnnounceReply r = sample_reply();
    r.peers.erase(r.peers.begin() + 1);
    auto body = bencode_announce(r, true, true);
    CHECK_FALSE(decode(body).dict_find("peers6"));
    // Byte-exact: bencoded dictionaries are sorted by key.
    CHECK(body ==
          "d8:completei3e10:downloadedi5e10:incompletei4e8:intervali300e12:min intervali30e"
          "5:peers12:\x0a\x01\x02\x03\x1a\xe1\xc0\xa8\x00\xff\xff\xff"
          "e"s);
}

TEST_CASE("a dictionary announce answer lists peer id, ip text and port for both families",
          "[tracker][bencode]") {
    const std::string body = bencode_announce(sample_reply(), false, true);
    auto e = decode(body);
    auto peers = e.dict_find_list("peers");
    REQUIRE(peers);
    REQUIRE(peers.list_size() == 3);
    CHECK(peers.list_at(0).dict_find_string_value("peer id") == "AAAAAAAAAAAAAAAAAAAA");
    CHECK(peers.list_at(0).dict_find_string_value("ip") == "10.1.2.3");
    CHECK(peers.list_at(0).dict_find_int_value("port") == 6881);
    CHECK(peers.list_at(1).dict_find_string_value("ip") == "2001:db8::1");
    CHECK(peers.list_at(1).dict_find_int_value("port") == 0x1234);
    CHECK(peers.list_at(2).dict_find_int_value("port") == 65535);
    CHECK_FALSE(e.dict_find("peers6"));
}

TEST_CASE("no_peer_id leaves the peer id out of the dictionary form", "[tracker][bencode]") {
    const std::string body = bencode_announce(sample_reply(), false, false);
    auto e = decode(body);
    auto first = e.dict_find_list("peers").list_at(0);
    CHECK_FALSE(first.dict_find("peer id"));
    CHECK(first.dict_find_string_value("ip") == "10.1.2.3");
}

TEST_CASE("a scrape answer keys files by the raw info-hash", "[tracker][bencode]") {
    auto h = *InfoHash::from_bytes(std::string("\x00\xff", 2) + std::string(18, 'x'));
    const std::string body = bencode_scrape({{h, SwarmCounts{2, 7, 11, 3}}});
    auto e = decode(body);
    auto files = e.dict_find_dict("files");
    REQUIRE(files);
    auto f = files.dict_find_dict(std::string(h.view()));
    REQUIRE(f);
    CHECK(f.dict_find_int_value("complete") == 2);
    CHECK(f.dict_find_int_value("incomplete") == 7);
    CHECK(f.dict_find_int_value("downloaded") == 11);
    CHECK(f.dict_find_int_value("downloaders") == 4);  // BEP 21: incomplete less the 3 partial seeds
    CHECK(bencode_scrape({}) == "d5:filesdee");
}

TEST_CASE("a failure answer carries the reason and the intervals", "[tracker][bencode]") {
    CHECK(bencode_failure("bad port", std::chrono::seconds(300), std::chrono::seconds(30)) ==
          "d14:failure reason8:bad port8:intervali300e12:min intervali30ee");
}
