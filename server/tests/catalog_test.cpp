#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "server/core/catalog.hpp"

using namespace toast;
using namespace toast::server;

namespace {

CatalogTitle title(std::string name, std::uint64_t size, std::uint64_t bitrate, std::string info_hash = "") {
    CatalogTitle t;
    t.file_name = name + ".ts";
    t.name = std::move(name);
    t.size = size;
    t.bitrate = BitRate(bitrate);
    t.etag = "\"0123456789abcdef\"";
    t.last_modified = std::chrono::system_clock::time_point(std::chrono::seconds(784111777));
    t.info_hash = std::move(info_hash);
    return t;
}

}  // namespace

TEST_CASE("the catalogue lists every title, sorted, with what a box needs", "[server][catalog]") {
    auto body = catalog_body({title("zoo", 1'000'000, 2'000'000, "d967f544993f290178692f681c9faa9e3aee4145"),
                              title("movie", 12'000'000, 6'000'000, "aa"), title("old", 300, 0)});
    auto j = nlohmann::json::parse(body.json);
    REQUIRE(j["titles"].size() == 3);
    CHECK(j["titles"][0]["name"] == "movie");
    CHECK(j["titles"][1]["name"] == "old");
    const auto& zoo = j["titles"][2];
    CHECK(zoo == nlohmann::json{{"name", "zoo"},
                                {"file", "zoo.ts"},
                                {"size", 1'000'000},
                                {"bitrate", 2'000'000},
                                {"duration", 4.0},
                                {"etag", "\"0123456789abcdef\""},
                                {"last_modified", "Sun, 06 Nov 1994 08:49:37 GMT"},
                                {"url", "/titles/zoo"},
                                {"torrent", "/torrents/zoo.torrent"},
                                {"info_hash", "d967f544993f290178692f681c9faa9e3aee4145"},
                                {"demand", 0.0}});
    CHECK(j["titles"][0]["duration"] == 16.0);
    // A title ingested before the store kept torrents has none; a zero bitrate has no duration to give.
    CHECK(j["titles"][1]["torrent"].is_null());
    CHECK(j["titles"][1]["info_hash"].is_null());
    CHECK(j["titles"][1]["duration"] == 0.0);
}

TEST_CASE("durations are given to the millisecond", "[server][catalog]") {
    auto j = nlohmann::json::parse(catalog_body({title("a", 1'000'001, 3'000'000)}).json);
    CHECK(j["titles"][0]["duration"] == 2.667);
}

TEST_CASE("the catalogue's validator changes exactly when its body does", "[server][catalog]") {
    auto a = catalog_body({title("a", 100, 8), title("b", 200, 8)});
    auto same = catalog_body({title("b", 200, 8), title("a", 100, 8)});  // order of arrival does not matter
    auto other = catalog_body({title("a", 100, 8), title("b", 201, 8)});
    CHECK(a.json == same.json);
    CHECK(a.etag == same.etag);
    CHECK(a.etag != other.etag);
    CHECK(a.etag.size() == 19);
    CHECK(a.etag.front() == '"');
    CHECK(a.etag.back() == '"');
    CHECK(catalog_body({}).json == R"({"titles":[]})");
}

TEST_CASE("each title's demand is given to three decimals", "[server][catalog]") {
    auto a = title("a", 100, 8);
    a.demand = 12.34567;
    auto j = nlohmann::json::parse(catalog_body({a, title("b", 100, 8)}).json);
    CHECK(j["titles"][0]["demand"] == 12.346);
    CHECK(j["titles"][1]["demand"] == 0.0);
}
