#include <catch2/catch.hpp>

#include <fstream>

#include "server/core/server_config.hpp"
#include "test_support.hpp"
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
                      Contains("'service_model_half_life'") && Contains("outside [10ms, 24h]"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"service_model_half_life":"soon"})"),
                      Contains("'service_model_half_life'") && Contains("soon"));
}

TEST_CASE("disk_order picks the disks' queue order", "[server][config]") {
    auto c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"]})"));
    CHECK(c.disk_order == QueueOrder::fifo);
    c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"],"disk_order":"edf"})"));
    CHECK(c.disk_order == QueueOrder::edf);
    CHECK_THROWS_WITH(
        load_server_config(nlohmann::json::parse(R"({"disks":["/a","/b"],"disk_order":"scan"})")),
        Contains("'disk_order'") && Contains("expected fifo, cscan or edf, got \"scan\""));
}

TEST_CASE("disk objects carry emulation and faults", "[server][config]") {
    auto c = load_server_config(nlohmann::json::parse(R"({"listen":"127.0.0.1:0","disks":[
        {"path":"/d0","emulate":{"t_a":"16ms","r_d":"446Mbps"},"fault":{"stutter_pct":50,"offline":true}},
        {"path":"/d1","emulate":{"t_a":"16ms","r_d":"446Mbps","full_seek":"30ms"}}],"policy":"raid1",
        "public_url":"http://vod.example/"})"));
    REQUIRE(c.disks[0].emulation);
    CHECK(c.disks[0].emulation->access_time == std::chrono::milliseconds(16));
    CHECK(c.disks[0].emulation->transfer_rate == BitRate(446'000'000));
    CHECK(c.disks[0].emulation->full_seek == std::chrono::nanoseconds(0));
    CHECK(c.disks[1].emulation->full_seek == std::chrono::milliseconds(30));
    CHECK(c.disks[0].fault.stutter_pct == 50);
    CHECK(c.disks[0].fault.offline);
    CHECK(c.public_url == "http://vod.example");
}

TEST_CASE("public_url is http or https, and https by default with tls", "[server][config]") {
    auto load = [](const char* text) { return load_server_config(nlohmann::json::parse(text)); };
    CHECK(load(R"({"disks":["/a","/b"],"public_url":"https://vod.example/"})").public_url ==
          "https://vod.example");
    CHECK(
        load(
            R"({"disks":["/a","/b"],"listen":"0.0.0.0:8443","tls":{"certificate_chain":"c.pem","private_key":"k.pem"}})")
            .public_url == "https://0.0.0.0:8443");
    CHECK_THROWS_WITH(
        load(R"({"disks":["/a","/b"],"public_url":"ftp://vod.example"})"),
        "config field 'public_url': expected an http:// or https:// URL, got \"ftp://vod.example\"");
    CHECK_THROWS_WITH(load(R"({"disks":["/a","/b"],"public_url":"http://"})"), Contains("'public_url'"));
    CHECK_THROWS_WITH(load(R"({"disks":["/a","/b"],"public_url":"https://"})"), Contains("'public_url'"));
}

TEST_CASE("access keys, TLS and telemetry limits are read with their bounds", "[server][config][access]") {
    auto load = [](const std::string& text) { return load_server_config(nlohmann::json::parse(text)); };
    const std::string hex32(64, 'a');
    toast::testing::TempDir dir;
    std::ofstream(dir / "k2.key") << std::string(32, '0') << std::string(32, 'f') << "\n";
    auto c = load(R"({"disks":["/a","/b"],"access":{"keys":[{"id":"k1","secret":")" + hex32 +
                  R"("},{"id":"k2","secret_file":")" + (dir / "k2.key").string() +
                  R"("}],"signing_key":"k2","revoked_subscribers":["alice"]},
                  "tls":{"certificate_chain":"c.pem","private_key":"k.pem"},
                  "telemetry":{"max_body":"4KiB","per_subscriber_per_minute":2,"overall_per_second":50}})");
    REQUIRE(c.access.keys.size() == 2);
    CHECK(c.access.keys[0].secret == std::string(32, '\xaa'));
    CHECK(c.access.keys[1].secret == std::string(16, '\x00') + std::string(16, '\xff'));
    CHECK(c.access.signing_key == "k2");
    CHECK(c.access.revoked_subscribers.count("alice") == 1);
    REQUIRE(c.tls);
    CHECK(c.tls->certificate_chain == "c.pem");
    CHECK(c.telemetry.max_body == 4096);
    CHECK(c.telemetry.per_subscriber_per_minute == 2);
    CHECK(c.telemetry.overall_per_second == 50);
    CHECK(load(R"({"disks":["/a","/b"],"access":{"keys":[{"id":"k1","secret":")" + hex32 + R"("}]}})")
              .access.signing_key == "k1");
    CHECK(load(R"({"disks":["/a","/b"]})").access.open());

    auto fails = [&](const std::string& access, const std::string& message) {
        CHECK_THROWS_WITH(load(R"({"disks":["/a","/b"],"access":)" + access + "}"), message);
    };
    fails(R"({"keys":[{"id":"k1","secret":"abcd"}]})",
          "config field 'access.keys[0].secret': expected 16 to 128 bytes (32+ hex digits, e.g. `openssl "
          "rand -hex 32`), got 2");
    fails(R"({"keys":[{"id":"k1","secret":")" + std::string(63, 'a') + "g" + R"("}]})",
          "config field 'access.keys[0].secret': expected hex digits only");
    fails(R"({"keys":[{"id":"k 1","secret":")" + hex32 + R"("}]})",
          "config field 'access.keys[0].id': expected 1-32 characters of [A-Za-z0-9._-], got \"k 1\"");
    fails(R"({"keys":[{"id":"k1"}]})",
          "config field 'access.keys[0].secret': give exactly one of secret (hex) and secret_file");
    fails(R"({"keys":[{"id":"k1","secret":")" + hex32 + R"("},{"id":"k1","secret":")" + hex32 + R"("}]})",
          "config field 'access.keys': two keys have the id \"k1\"");
    fails(R"({"keys":[{"id":"k1","secret":")" + hex32 + R"("}],"signing_key":"k9"})",
          "config field 'access.signing_key': names no key in keys: \"k9\"");
    fails(R"({"revoked_subscribers":["a b"]})",
          "config field 'access.revoked_subscribers': not a subscriber id: \"a b\"");
    CHECK_THROWS_WITH(
        load(R"({"disks":["/a","/b"],"access":{"keys":[{"id":"k1","secret_file":"/nonexistent/k"}]}})"),
        Contains("'access.keys[0].secret_file'") && Contains("/nonexistent/k"));
    // A secret is never shown in a message.
    try {
        load(R"({"disks":["/a","/b"],"access":{"keys":[{"id":"k1","secret":")" + hex32 +
             R"(","extra":1}]}})");
        FAIL("accepted an unknown key field");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find(hex32) == std::string::npos);
    }
    CHECK_THROWS_WITH(load(R"({"disks":["/a","/b"],"telemetry":{"max_body":100}})"),
                      Contains("'telemetry.max_body'"));
    CHECK_THROWS_WITH(load(R"({"disks":["/a","/b"],"tls":{"certificate_chain":"c.pem"}})"),
                      Contains("'tls.private_key'"));
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
    CHECK_THROWS_WITH(
        bad(R"({"disks":[{"path":"/a","emulate":{"t_a":"5ms","r_d":"1M","full_seek":"16ms"}}]})"),
        Contains("disks[0].emulate.full_seek") && Contains("at most 3 x t_a"));
    CHECK_THROWS_WITH(bad(R"({"disks":["/a","/b"],"colour":"blue"})"), Contains("'colour': unknown field"));
}

TEST_CASE("every duration and size in the server config is bounded, naming the key", "[server][config]") {
    auto error_of = [](const std::string& fields) -> std::string {
        try {
            load_server_config(nlohmann::json::parse(R"({"disks":["/a","/b"],)" + fields + "}"));
        } catch (const ConfigError& e) {
            return e.what();
        }
        return "";
    };
    auto ok = [&](const std::string& fields) { return error_of(fields).empty(); };
    struct Bound {
        const char* key;
        const char* below;
        const char* lowest;
        const char* highest;
        const char* above;
        const char* range;
    };
    const Bound bounds[] = {
        {"idle_timeout", "0", "\"100ms\"", "\"1h\"", "1e10", "[100ms, 1h]"},
        {"time_slice", "\"99ms\"", "\"100ms\"", "\"10min\"", "601", "[100ms, 10min]"},
        {"service_model_half_life", "0", "\"10ms\"", "\"24h\"", "\"25h\"", "[10ms, 24h]"},
        {"block_size", "4095", "\"4KiB\"", "\"256MiB\"", "\"257MiB\"", "[4 KiB, 256 MiB]"},
        {"default_bitrate", "999", "\"1kbps\"", "\"100Gbps\"", "\"101Gbps\"", "[1.00 kbps, 100.00 Gbps]"},
        {"piece_size", "\"8KiB\"", "\"16KiB\"", "\"64MiB\"", "\"128MiB\"", "[16 KiB, 64 MiB]"},
        {"max_multipart_bytes", "1023", "\"1KiB\"", "\"16GiB\"", "\"17GiB\"", "[1 KiB, 16 GiB]"},
    };
    for (const auto& b : bounds) {
        INFO(b.key);
        const std::string key = b.key;
        CHECK_THAT(error_of("\"" + key + "\":" + b.below),
                   Contains("'" + key + "'") && Contains(std::string("is outside ") + b.range));
        CHECK_THAT(error_of("\"" + key + "\":" + b.above),
                   Contains("'" + key + "'") && Contains(std::string("is outside ") + b.range));
        CHECK(ok("\"" + key + "\":" + b.lowest));
        CHECK(ok("\"" + key + "\":" + b.highest));
    }
    // The issue's example: 1e10 seconds used to wrap to a negative nanosecond count.
    CHECK(error_of(R"("idle_timeout":1e10)") ==
          "config field 'idle_timeout': value 10000000000.0 is outside [100ms, 1h]");
}

TEST_CASE("disk emulation and fault durations are bounded", "[server][config]") {
    auto error_of = [](const std::string& disk) -> std::string {
        try {
            load_server_config(nlohmann::json::parse(R"({"disks":["/a",)" + disk + "]}"));
        } catch (const ConfigError& e) {
            return e.what();
        }
        return "";
    };
    CHECK(error_of(R"({"path":"/b","emulate":{"t_a":"11s","r_d":"80Mbps"}})") ==
          "config field 'disks[1].emulate.t_a': value \"11s\" is outside [0s, 10s]");
    CHECK(error_of(R"({"path":"/b","emulate":{"t_a":"2ms","r_d":"999kbps"}})") ==
          "config field 'disks[1].emulate.r_d': value \"999kbps\" is outside [1.00 Mbps, 100.00 Gbps]");
    CHECK(error_of(R"({"path":"/b","emulate":{"t_a":0,"r_d":"100Gbps"}})").empty());
    CHECK(error_of(R"({"path":"/b","fault":{"added_latency":1e10}})") ==
          "config field 'disks[1].fault.added_latency': value 10000000000.0 is outside [0s, 10min]");
    CHECK(error_of(R"({"path":"/b","fault":{"added_latency":"10min"}})").empty());
    CHECK_THAT(error_of(R"({"path":"/b","fault":{"added_latency":-1}})"),
               Contains("'disks[1].fault.added_latency'"));
}

TEST_CASE("admission control for /stream is on unless the config turns it off",
          "[server][config][admission]") {
    auto c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"]})"));
    CHECK(c.admission.enabled);
    CHECK(c.admission.disk_share == 1.0);
    CHECK_FALSE(c.admission.start_latency);  // one time_slice
    c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"],"admission":{}})"));
    CHECK(c.admission.enabled);
    c = load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"],"admission":{"enabled":false}})"));
    CHECK_FALSE(c.admission.enabled);
    c = load_server_config(
        nlohmann::json::parse(R"({"disks":["/d0","/d1"],"admission":{"start_latency":0}})"));
    CHECK(c.admission.start_latency == std::chrono::nanoseconds(0));
}
