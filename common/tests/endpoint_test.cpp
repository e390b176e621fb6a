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
