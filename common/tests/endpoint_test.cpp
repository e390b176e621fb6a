#include <catch2/catch.hpp>

#include "toast/common/endpoint.hpp"

using namespace toast;

TEST_CASE("endpoints parse IPv4, names and bracketed IPv6", "[common][endpoint]") {
    CHECK(parse_endpoint("127.0.0.1:8080") == Endpoint{"127.0.0.1", 8080});
    CHECK(parse_endpoint("localhost:0") == Endpoint{"localhost", 0});
    CHECK(parse_endpoint("[::1]:6969") == Endpoint{"::1", 6969});
    CHECK(Endpoint{"::1", 6969}.to_string() == "[::1]:6969");
}

TEST_CASE("malformed endpoints are refused", "[common][endpoint]") {
    CHECK_FALSE(parse_endpoint("127.0.0.1"));
    CHECK_FALSE(parse_endpoint(":80"));
    CHECK_FALSE(parse_endpoint("host:65536"));
    CHECK_FALSE(parse_endpoint("host:8o"));
    CHECK_FALSE(parse_endpoint("::1:80"));
    CHECK_FALSE(parse_endpoint("host:0", false));
}

TEST_CASE("a peer is named by an IP literal and a non-zero port", "[common][endpoint]") {
    CHECK(parse_peer_endpoint("10.0.0.5:6881") == Endpoint{"10.0.0.5", 6881});
    CHECK(parse_peer_endpoint("[2001:db8::7]:7000") == Endpoint{"2001:db8::7", 7000});
    CHECK_FALSE(parse_peer_endpoint("vod.example:6881"));
    CHECK_FALSE(parse_peer_endpoint("10.0.0.5:0"));
    CHECK_FALSE(parse_peer_endpoint("10.0.0.256:6881"));
    CHECK_FALSE(parse_peer_endpoint("10.0.0.5"));
}
