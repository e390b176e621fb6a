#include <catch2/catch.hpp>

#include "toast/common/config.hpp"

using namespace toast;
using Catch::Matchers::Contains;

TEST_CASE("typed fields read with defaults", "[common][config]") {
    auto j =
        nlohmann::json::parse(R"({"listen":"127.0.0.1:8080","rate":"2Mbps","block":"1MiB","t_a":"8ms"})");
    ConfigReader r(j);
    CHECK(r.string("listen") == "127.0.0.1:8080");
    CHECK(r.bitrate("rate") == BitRate(2'000'000));
    CHECK(r.bytes("block") == Bytes(1 << 20));
    CHECK(r.duration("t_a") == std::chrono::milliseconds(8));
    CHECK(r.uint("workers", 2) == 2);
    CHECK_NOTHROW(r.finish());
}

TEST_CASE("bad values name the field and the value", "[common][config]") {
    auto j = nlohmann::json::parse(R"({"disks":[{"path":"/a"},{"path":42}],"port":-1,"rate":"quick"})");
    ConfigReader r(j);
    auto disks = r.objects("disks");
    REQUIRE(disks.size() == 2);
    CHECK(disks[0].string("path") == "/a");
    CHECK_THROWS_WITH(disks[1].string("path"), Contains("disks[1].path") && Contains("42"));
    CHECK_THROWS_WITH(r.uint("port"), Contains("'port'") && Contains("-1"));
    CHECK_THROWS_WITH(r.bitrate("rate"), Contains("'rate'") && Contains("quick"));
    CHECK_THROWS_WITH(r.string("missing"), Contains("'missing': is required"));
}

TEST_CASE("unknown fields are rejected by finish", "[common][config]") {
    auto j = nlohmann::json::parse(R"({"listen":"x","lisen":"y"})");
    ConfigReader r(j);
    r.string("listen");
    CHECK_THROWS_WITH(r.finish(), Contains("'lisen': unknown field"));
}

TEST_CASE("range limits are enforced", "[common][config]") {
    auto j = nlohmann::json::parse(R"({"workers":0,"ratio":1.5})");
    ConfigReader r(j);
    CHECK_THROWS_WITH(r.uint("workers", 1, 1, 64), Contains("outside [1, 64]"));
    CHECK_THROWS_WITH(r.number("ratio", 0.0, 0.0, 1.0), Contains("'ratio'"));
}

TEST_CASE("a config that is not an object is refused", "[common][config]") {
    auto j = nlohmann::json::parse(R"([1,2])");
    CHECK_THROWS_AS(ConfigReader(j), ConfigError);
}
