#include <catch2/catch.hpp>

#include <string>

#include "tracker/core/announce_request.hpp"

using namespace toast::tracker;

namespace {

// 20 bytes including bytes that must be escaped (0x00, '&', '=', '%', 0xff, '+').
const std::string kHashBytes = std::string("\x00\x01&=%+\xff", 7) + "abcdefghijklm";
const std::string kHashEscaped = "%00%01%26%3D%25+%FFabcdefghijklm";
const std::string kPeerId = "-TS0001-abcdefghijkl";

std::string valid_query(const std::string& extra = "") {
    return "info_hash=" + kHashEscaped + "&peer_id=" + kPeerId +
           "&port=6881&uploaded=10&downloaded=20&left=30" + extra;
}

// The same valid query with one parameter replaced (or removed when value is empty and remove is set).
std::string with(const std::string& key, const std::string& value, bool remove = false) {
    std::string q;
    const std::pair<std::string, std::string> base[] = {
        {"info_hash", kHashEscaped}, {"peer_id", kPeerId}, {"port", "6881"},
        {"uploaded", "10"},          {"downloaded", "20"}, {"left", "30"}};
    for (const auto& [k, v] : base) {
        if (k == key && remove) continue;
        if (!q.empty()) q += "&";
        q += k + "=" + (k == key ? value : v);
    }
    return q;
}

}  // namespace

TEST_CASE("a valid announce decodes binary info_hash and every field", "[tracker][announce]") {
    REQUIRE(kHashBytes.size() == 20);
    auto r = parse_announce(valid_query("&event=started&numwant=7&compact=0&no_peer_id=1&key=abc&corrupt=0"));
    REQUIRE(r.ok());
    CHECK(std::string(r->info_hash.view()) == kHashBytes);
    CHECK(std::string(r->peer_id.view()) == kPeerId);
    CHECK(r->port == 6881);
    CHECK(r->uploaded == 10);
    CHECK(r->downloaded == 20);
    CHECK(r->left == 30);
    CHECK(r->event == AnnounceEvent::started);
    CHECK(r->numwant == std::optional<std::uint64_t>(7));
    CHECK_FALSE(r->compact);
    CHECK(r->no_peer_id);
    CHECK_FALSE(r->ip.has_value());
}

TEST_CASE("announce defaults: no event, compact, tracker's numwant", "[tracker][announce]") {
    auto r = parse_announce(valid_query());
    REQUIRE(r.ok());
    CHECK(r->event == AnnounceEvent::none);
    CHECK(r->compact);
    CHECK_FALSE(r->numwant.has_value());
    CHECK_FALSE(r->no_peer_id);
}

TEST_CASE("announce events completed, stopped, empty and paused (a BEP 21 partial seed) are accepted",
          "[tracker][announce]") {
    CHECK(parse_announce(valid_query("&event=completed"))->event == AnnounceEvent::completed);
    CHECK(parse_announce(valid_query("&event=stopped"))->event == AnnounceEvent::stopped);
    CHECK(parse_announce(valid_query("&event="))->event == AnnounceEvent::none);
    CHECK(parse_announce(valid_query("&event=paused"))->event == AnnounceEvent::paused);
}

TEST_CASE("announce counters accept 0 and 2^63-1 and reject anything beyond", "[tracker][announce]") {
    auto r = parse_announce(with("left", "9223372036854775807"));
    REQUIRE(r.ok());
    CHECK(r->left == 9223372036854775807ull);
    CHECK(parse_announce(with("uploaded", "0"))->uploaded == 0);
    CHECK(parse_announce(with("left", "9223372036854775808")).error() == AnnounceError::bad_left);
}

TEST_CASE("an ip parameter is kept only when it is a numeric address", "[tracker][announce]") {
    auto v4 = parse_announce(valid_query("&ip=10.1.2.3"));
    REQUIRE(v4->ip.has_value());
    CHECK(v4->ip->to_string() == "10.1.2.3");
    auto v6 = parse_announce(valid_query("&ip=2001%3Adb8%3A%3A1"));
    REQUIRE(v6->ip.has_value());
    CHECK(v6->ip->v6);
    CHECK(v6->ip->to_string() == "2001:db8::1");
    CHECK_FALSE(parse_announce(valid_query("&ip=example.org"))->ip.has_value());
}

TEST_CASE("each malformed announce gets its own error", "[tracker][announce]") {
    struct Case {
        std::string query;
        AnnounceError error;
    };
    const Case cases[] = {
        {with("info_hash", "", true), AnnounceError::missing_info_hash},
        {with("info_hash", "%00%01%02"), AnnounceError::bad_info_hash},
        {with("info_hash", kHashEscaped + "x"), AnnounceError::bad_info_hash},
        {with("peer_id", "", true), AnnounceError::missing_peer_id},
        {with("peer_id", "short"), AnnounceError::bad_peer_id},
        {with("port", "", true), AnnounceError::missing_port},
        {with("port", "0"), AnnounceError::bad_port},
        {with("port", "65536"), AnnounceError::bad_port},
        {with("port", "-1"), AnnounceError::bad_port},
        {with("port", "80a"), AnnounceError::bad_port},
        {with("uploaded", "", true), AnnounceError::missing_uploaded},
        {with("uploaded", "ten"), AnnounceError::bad_uploaded},
        {with("downloaded", "", true), AnnounceError::missing_downloaded},
        {with("downloaded", "-5"), AnnounceError::bad_downloaded},
        {with("left", "", true), AnnounceError::missing_left},
        {with("left", "1.5"), AnnounceError::bad_left},
        {with("left", ""), AnnounceError::bad_left},
        {valid_query("&event=finished"), AnnounceError::bad_event},
        {valid_query("&numwant=lots"), AnnounceError::bad_numwant},
        {valid_query("&compact=yes"), AnnounceError::bad_compact},
        {valid_query("&port=6882"), AnnounceError::duplicate_parameter},
        {"info_hash=%zz" + with("info_hash", "", true), AnnounceError::bad_encoding},
        {valid_query("&key=%4"), AnnounceError::bad_encoding},
        {"", AnnounceError::missing_info_hash},
    };
    for (const auto& c : cases) {
        INFO(c.query);
        auto r = parse_announce(c.query);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error() == c.error);
        CHECK_FALSE(failure_reason(c.error).empty());
    }
}

TEST_CASE("failure reasons say what is wrong", "[tracker][announce]") {
    CHECK(failure_reason(AnnounceError::bad_info_hash) == "info_hash must be exactly 20 bytes");
    CHECK(failure_reason(AnnounceError::bad_port) == "port must be an integer in 1..65535");
    CHECK(to_string(AnnounceError::bad_port) == "bad_port");
}

TEST_CASE("percent decoding keeps '+' literal and rejects broken escapes", "[tracker][announce]") {
    CHECK(percent_decode("a+b%20c%2b") == std::optional<std::string>("a+b c+"));
    CHECK(percent_decode("%41%4a%4A") == std::optional<std::string>("AJJ"));
    CHECK_FALSE(percent_decode("%").has_value());
    CHECK_FALSE(percent_decode("%4").has_value());
    CHECK_FALSE(percent_decode("%g0").has_value());
}

TEST_CASE("query parsing splits pairs, skips empty parts and keeps keys without '='", "[tracker][announce]") {
    auto q = parse_query("a=1&&b&c=%3D");
    REQUIRE(q.has_value());
    REQUIRE(q->size() == 3);
    CHECK((*q)[0] == std::pair<std::string, std::string>("a", "1"));
    CHECK((*q)[1] == std::pair<std::string, std::string>("b", ""));
    CHECK((*q)[2] == std::pair<std::string, std::string>("c", "="));
}

TEST_CASE("scrape takes repeated info_hash parameters up to a limit", "[tracker][scrape]") {
    std::string two = "info_hash=" + kHashEscaped + "&info_hash=" + std::string(20, 'b');
    auto r = parse_scrape(two, 2);
    REQUIRE(r.ok());
    REQUIRE(r.value().size() == 2);
    CHECK(std::string(r.value()[0].view()) == kHashBytes);
    CHECK(std::string(r.value()[1].view()) == std::string(20, 'b'));
    CHECK(parse_scrape(two, 1).error() == ScrapeError::too_many_info_hashes);
    CHECK(parse_scrape("", 5).error() == ScrapeError::missing_info_hash);
    CHECK(parse_scrape("info_hash=abc", 5).error() == ScrapeError::bad_info_hash);
    CHECK(parse_scrape("info_hash=%x", 5).error() == ScrapeError::bad_encoding);
}
