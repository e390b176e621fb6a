#include <catch2/catch.hpp>

#include <fstream>

#include "test_support.hpp"
#include "toast/common/config.hpp"

using namespace toast;
using Catch::Matchers::Contains;
using namespace std::chrono_literals;

TEST_CASE("typed fields read with defaults", "[common][config]") {
    auto j =
        nlohmann::json::parse(R"({"listen":"127.0.0.1:8080","rate":"2Mbps","block":"1MiB","t_a":"8ms"})");
    ConfigReader r(j);
    CHECK(r.string("listen") == "127.0.0.1:8080");
    CHECK(r.bitrate("rate", std::nullopt, BitRate(1), BitRate(1'000'000'000)) == BitRate(2'000'000));
    CHECK(r.bytes("block", std::nullopt, Bytes(1), Bytes(1ull << 30)) == Bytes(1 << 20));
    CHECK(r.duration("t_a", std::nullopt, 0ns, 1s) == 8ms);
    CHECK(r.duration("absent", 5s, 0ns, 1s) == 5s);  // a fallback is not checked: it is the code's own
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
    CHECK_THROWS_WITH(r.bitrate("rate", std::nullopt, BitRate(1), BitRate(1'000'000)),
                      Contains("'rate'") && Contains("quick"));
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

TEST_CASE("a config file that cannot be read, or is not JSON, is refused with the reason",
          "[common][config]") {
    toast::testing::TempDir dir;
    const auto missing = dir.path() / "missing.json";
    CHECK_THROWS_WITH(load_json_file(missing),
                      "cannot read config file '" + missing.string() + "': No such file or directory");
    // A directory reads as nothing: it is not "not valid JSON".
    CHECK_THROWS_WITH(load_json_file(dir.path()),
                      "cannot read config file '" + dir.path().string() + "': is a directory");
    { std::ofstream(dir.path() / "bad.json") << "{"; }
    CHECK_THROWS_WITH(load_json_file(dir.path() / "bad.json"), Contains("is not valid JSON"));
    { std::ofstream(dir.path() / "good.json") << R"({"a": 1})"; }
    CHECK(load_json_file(dir.path() / "good.json") == nlohmann::json::parse(R"({"a": 1})"));
}

TEST_CASE("a config that is not an object is refused", "[common][config]") {
    auto j = nlohmann::json::parse(R"([1,2])");
    CHECK_THROWS_AS(ConfigReader(j), ConfigError);
}

TEST_CASE("durations are bounded and a huge number of seconds cannot wrap to a negative time",
          "[common][config]") {
    auto j = nlohmann::json::parse(
        R"({"zero":0,"tiny":"1ms","ok":"30s","huge":1e10,"huger":1e300,"neg":-1,"nan_text":"nan","max":"1h"})");
    ConfigReader r(j);
    CHECK_THROWS_WITH(r.duration("zero", 30s, 100ms, 1h),
                      Contains("'zero'") && Contains("outside [100ms, 1h]"));
    CHECK_THROWS_WITH(r.duration("tiny", 30s, 100ms, 1h), Contains("'tiny'") && Contains("\"1ms\""));
    CHECK(r.duration("ok", 1s, 100ms, 1h) == 30s);
    CHECK(r.duration("max", 1s, 100ms, 1h) == 1h);
    CHECK_THROWS_WITH(r.duration("huge", 30s, 0ns, 1h), Contains("'huge'") && Contains("outside [0s, 1h]"));
    // Beyond what nanoseconds hold even when the bound would allow it: still out of range, never negative.
    CHECK_THROWS_WITH(r.duration("huger", 30s, 0ns, std::chrono::nanoseconds::max()),
                      Contains("'huger'") && Contains("outside"));
    CHECK_THROWS_WITH(r.duration("neg", 30s, 0ns, 1h), Contains("'neg'") && Contains("expected a duration"));
    CHECK_THROWS_WITH(r.duration("nan_text", 30s, 0ns, 1h), Contains("'nan_text'"));
}

TEST_CASE("sizes and bitrates are bounded", "[common][config]") {
    auto j = nlohmann::json::parse(
        R"({"small":"1KiB","big":"2TiB","edge":"64KiB","slow":"10bps","fast":"2Gbps"})");
    ConfigReader r(j);
    CHECK_THROWS_WITH(r.bytes("small", std::nullopt, Bytes(64 * 1024), Bytes(1ull << 40)),
                      Contains("'small'") && Contains("outside [64 KiB, 1 TiB]"));
    CHECK_THROWS_WITH(r.bytes("big", std::nullopt, Bytes(64 * 1024), Bytes(1ull << 40)), Contains("'big'"));
    CHECK(r.bytes("edge", std::nullopt, Bytes(64 * 1024), Bytes(1ull << 40)) == Bytes(64 * 1024));
    CHECK_THROWS_WITH(r.bitrate("slow", std::nullopt, BitRate(1000), BitRate(1'000'000'000)),
                      Contains("'slow'") && Contains("outside [1.00 kbps, 1.00 Gbps]"));
    CHECK_THROWS_WITH(r.bitrate("fast", std::nullopt, BitRate(1000), BitRate(1'000'000'000)),
                      Contains("'fast'"));
}
