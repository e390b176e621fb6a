#include <catch2/catch.hpp>

#include "server/core/server_config.hpp"
#include "toast/common/config.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;

TEST_CASE("a minimal config gets the documented defaults", "[server][config]") {
    auto c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"]})"));
    CHECK(c.listen == Endpoint{"127.0.0.1", 8080});
    CHECK(c.policy == PlacementPolicy::rda);
    CHECK(c.public_url == "http://127.0.0.1:8080");
    CHECK(c.piece_size == Bytes(256 * 1024));
    CHECK(c.disks.size() == 2);
    CHECK(c.open_files == 4096);
    CHECK(c.service_model_half_life == std::chrono::seconds(10));
}

TEST_CASE("open_files sets the block store's open-file cache within bounds", "[server][config]") {
    auto c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"],"open_files":100000})"));
    CHECK(c.open_files == 100000);
    auto bad = [](const char* text) { return load_server_config(nlohmann::json::parse(text)); };
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"open_files":8})"),
                      Contains("'open_files'") && Contains("value 8 is outside [16, 1048576]"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"open_files":"many"})"),
                      Contains("'open_files'") && Contains("non-negative integer"));
}

TEST_CASE("service_model_half_life is a positive duration", "[server][config]") {
    auto c = load_server_config(
        nlohmann::json::parse(R"({"disks":["/d0","/d1"],"service_model_half_life":"2min"})"));
    CHECK(c.service_model_half_life == std::chrono::minutes(2));
    auto bad = [](const char* text) { return load_server_config(nlohmann::json::parse(text)); };
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"service_model_half_life":0})"),
                      Contains("'service_model_half_life'") && Contains("greater than 0"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"service_model_half_life":"soon"})"),
                      Contains("'service_model_half_life'") && Contains("soon"));
}

TEST_CASE("disk objects carry emulation and faults", "[server][config]") {
    auto c = load_server_config(nlohmann::json::parse(R"({"listen":"127.0.0.1:0","disks":[
        {"path":"/d0","emulate":{"t_a":"16ms","r_d":"446Mbps"},"fault":{"stutter_pct":50,"offline":true}},
        "/d1"],"policy":"raid1","public_url":"http://vod.example/"})"));
    REQUIRE(c.disks[0].emulation);
    CHECK(c.disks[0].emulation->access_time == std::chrono::milliseconds(16));
    CHECK(c.disks[0].emulation->transfer_rate == BitRate(446'000'000));
    CHECK(c.disks[0].fault.stutter_pct == 50);
    CHECK(c.disks[0].fault.offline);
    CHECK(c.public_url == "http://vod.example");
}

TEST_CASE("bad server configs name the field and the value", "[server][config]") {
    auto bad = [](const char* text) { return load_server_config(nlohmann::json::parse(text)); };
    CHECK_THROWS_WITH(bad(R"({"disks":[]})"), Contains("'disks'"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"policy":"raid5"})"),
                      Contains("'policy'") && Contains("raid5"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a"]})"), Contains("rda needs at least 2 disks"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b","/c"],"policy":"raid1"})"), Contains("even number"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"listen":"nowhere"})"),
                      Contains("'listen'") && Contains("nowhere"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"piece_size":"100KiB"})"), Contains("power of two"));
    CHECK_THROWS_WITH(bad(R"({"disks":[{"path":"/a","emulate":{"t_a":"x","r_d":"1M"}},"/b"]})"),
                      Contains("disks[0].emulate.t_a"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"colour":"blue"})"), Contains("'colour': unknown field"));
}
