#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "client/core/cache_policy.hpp"
#include "client/core/service_options.hpp"
#include "toast/common/config.hpp"

using namespace toast;
using namespace toast::client;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

CacheEntry title(std::string id, std::int64_t last_watched, double demand, std::int64_t copies,
                 std::uint64_t mib = 60) {
    CacheEntry e;
    e.id = std::move(id);
    e.bytes = Bytes(mib * kMiB);
    e.size = Bytes(mib * kMiB);
    e.last_watched = last_watched;
    e.demand = demand;
    e.copies = copies;
    return e;
}

}  // namespace

TEST_CASE("cache policies are named none, lru and popularity", "[client][service][cache]") {
    CHECK(parse_cache_policy("none") == CachePolicy::none);
    CHECK(parse_cache_policy("lru") == CachePolicy::lru);
    CHECK(parse_cache_policy("popularity") == CachePolicy::popularity);
    CHECK_FALSE(parse_cache_policy("LRU"));
    CHECK(to_string(CachePolicy::popularity) == "popularity");
    CHECK_FALSE(keeps_watched_titles(CachePolicy::none));
    CHECK(keeps_watched_titles(CachePolicy::lru));
}

TEST_CASE("lru evicts the least recently watched, popularity the least needed per byte",
          "[client][service][cache]") {
    // a: watched long ago, in high demand and rare; b: recent, little demand; c: recent, high demand but
    // every box has it; d: oldest, no demand.
    std::vector<CacheEntry> titles{title("a", 100, 40, 1), title("b", 900, 2, 1), title("c", 800, 40, 39),
                                   title("d", 50, 0, 0)};
    const Bytes quota(4 * 60 * kMiB);
    auto lru = plan_cache_evictions(titles, quota, CachePolicy::lru, Bytes(120 * kMiB));
    CHECK(lru.evict == std::vector<std::string>{"d", "a"});
    CHECK(lru.fits);
    auto pop = plan_cache_evictions(titles, quota, CachePolicy::popularity, Bytes(120 * kMiB));
    // Needs per byte: a 40/2, b 2/2, c 40/40, d 0: d first, then b and c tie at 1 and the older (c) leaves.
    CHECK(pop.evict == std::vector<std::string>{"d", "c"});
    CHECK(pop.used_after == Bytes(4 * 60 * kMiB));
    // Without bitrates no title's need is known: the tie-break (demand over copies) decided.
    CHECK(need_per_byte(titles[0]) == 0);
}

TEST_CASE("the popularity cache keeps the title whose swarm lacks most, not the most demanded",
          "[client][service][cache]") {
    auto with_rate = [](CacheEntry e) {
        e.bitrate = BitRate(4'000'000);
        e.duration_s = 120;
        e.upload = BitRate(1'000'000);
        return e;
    };
    // hit: 60 starts an hour, 2 viewers at once, 10 other boxes keep it: 8 Mbps needed, 12 offered.
    // niche: 30 an hour, 1 viewer, nobody keeps it: 3 Mbps short.
    auto hit = with_rate(title("hit", 900, 60, 10));
    auto niche = with_rate(title("niche", 100, 30, 0));
    CHECK(need_per_byte(hit) == 0);
    CHECK(need_per_byte(niche) == Approx(3e6 / double(60 * kMiB)));
    auto pop = plan_cache_evictions({hit, niche}, Bytes(60 * kMiB), CachePolicy::popularity);
    CHECK(pop.evict == std::vector<std::string>{"hit"});
    auto lru = plan_cache_evictions({hit, niche}, Bytes(60 * kMiB), CachePolicy::lru);
    CHECK(lru.evict == std::vector<std::string>{"niche"});
    // A big title needs more shortfall to earn its bytes.
    auto big = with_rate(title("big", 0, 30, 0, 120));
    CHECK(need_per_byte(big) == Approx(need_per_byte(niche) / 2));
    // Upload unknown: a quarter of the bitrate.
    niche.upload = BitRate(0);
    CHECK(need_per_byte(niche) == Approx(3e6 / double(60 * kMiB)));
}

TEST_CASE("no policy evicts a pinned title, and nothing when it cannot fit", "[client][service][cache]") {
    std::vector<CacheEntry> titles{title("a", 100, 0, 0), title("b", 900, 50, 0)};
    titles[0].pinned = true;
    for (auto policy : {CachePolicy::lru, CachePolicy::popularity, CachePolicy::none}) {
        auto plan = plan_cache_evictions(titles, Bytes(100 * kMiB), policy);
        CHECK(plan.evict == std::vector<std::string>{"b"});
        auto none = plan_cache_evictions(titles, Bytes(50 * kMiB), policy);
        CHECK_FALSE(none.fits);
        CHECK(none.evict.empty());
        auto fits = plan_cache_evictions(titles, Bytes(200 * kMiB), policy);
        CHECK(fits.evict.empty());
        CHECK(fits.fits);
    }
}

TEST_CASE("without a catalogue the popularity cache keeps what lru keeps", "[client][service][cache]") {
    std::vector<CacheEntry> titles{title("a", 300, 0, 0), title("b", 100, 0, 0), title("c", 200, 0, 0)};
    auto pop = plan_cache_evictions(titles, Bytes(120 * kMiB), CachePolicy::popularity);
    auto lru = plan_cache_evictions(titles, Bytes(120 * kMiB), CachePolicy::lru);
    CHECK(pop.evict == lru.evict);
    CHECK(pop.evict == std::vector<std::string>{"b"});
}

TEST_CASE("the catalogue's demand is read by info-hash", "[client][service][cache]") {
    auto d = parse_catalog_demand(R"({"titles": [{"name": "a", "info_hash": "aa", "demand": 2.5},
                                                 {"name": "old", "info_hash": null, "demand": 1},
                                                 {"name": "b", "info_hash": "bb"}]})");
    REQUIRE(d);
    CHECK(*d == std::map<std::string, double>{{"aa", 2.5}});
    CHECK_FALSE(parse_catalog_demand("not json"));
    CHECK_FALSE(parse_catalog_demand(R"({"items": []})"));
}

TEST_CASE("serve takes the cache policy, the box id, the push quota and the push rate",
          "[client][service][cache]") {
    auto ok = parse_serve_args({"--save-dir", "d", "--cache", "popularity", "--box-id", "box-7",
                                "--push-quota", "4GiB", "--push-rate", "2Mbps"});
    REQUIRE(ok.options);
    CHECK(ok.options->cache == CachePolicy::popularity);
    CHECK(ok.options->box_id == "box-7");
    CHECK(ok.options->push_quota == Bytes(4ull << 30));
    CHECK(ok.options->push_rate == BitRate(2'000'000));
    auto defaults = parse_serve_args({"--save-dir", "d"});
    CHECK(defaults.options->cache == CachePolicy::lru);
    CHECK(defaults.options->box_id.empty());
    CHECK_FALSE(defaults.options->push_quota);
    // A box seeds many titles: its connection cap is for all of them (a title has at most 40).
    CHECK(defaults.options->max_connections == 200);
    CHECK(parse_serve_args({"--save-dir", "d", "--max-connections", "60"}).options->max_connections == 60);
    CHECK(serve_options_from_config(nlohmann::json{{"save_dir", "d"}}).max_connections == 200);
    CHECK(parse_serve_args({"--save-dir", "d", "--cache", "all"}).error ==
          "--cache: 'all' is not a cache policy (none, lru, popularity)");
    CHECK(parse_serve_args({"--save-dir", "d", "--box-id", "../x"}).error ==
          "--box-id: '../x' is not a box id (1 to 64 of A-Z a-z 0-9 . _ -)");
    CHECK(parse_serve_args({"--save-dir", "d", "--push-quota", "0"}).error ==
          "--push-quota: '0' is not a positive size such as 4GiB");
    CHECK(parse_serve_args({"--save-dir", "d", "--push-rate", "fast"}).error ==
          "--push-rate: 'fast' is not a rate such as 2Mbps");
    auto config = serve_options_from_config(nlohmann::json{{"save_dir", "d"},
                                                           {"cache", "none"},
                                                           {"box_id", "b1"},
                                                           {"push_quota", "1GiB"},
                                                           {"push_rate", "1Mbps"}});
    CHECK(config.cache == CachePolicy::none);
    CHECK(config.box_id == "b1");
    CHECK(config.push_quota == Bytes(1ull << 30));
    CHECK(config.push_rate == BitRate(1'000'000));
    CHECK_THROWS_WITH(serve_options_from_config(nlohmann::json{{"save_dir", "d"}, {"cache", "mru"}}),
                      Catch::Contains("cache"));
}

TEST_CASE("the saved title list remembers which titles are held by push", "[client][service][cache]") {
    std::vector<SavedTitle> list{{std::string(40, 'a'), "a", 1, 0, true},
                                 {std::string(40, 'b'), "b", 2, 3, false}};
    auto text = format_saved_titles(list);
    std::string error;
    auto back = parse_saved_titles(text, &error);
    REQUIRE(back);
    CHECK(*back == list);
    // A list written before push existed reads as not pushed.
    auto old = parse_saved_titles(R"({"version": 1, "titles": [{"id": ")" + std::string(40, 'c') +
                                  R"(", "name": "c", "added": 1, "last_watched": 0}]})");
    REQUIRE(old);
    CHECK_FALSE((*old)[0].pushed);
    CHECK_FALSE(parse_saved_titles(R"({"version": 1, "titles": [{"id": ")" + std::string(40, 'c') +
                                       R"(", "name": "c", "added": 1, "last_watched": 0, "pushed": 1}]})",
                                   &error));
    CHECK(error == "titles[0].pushed must be true or false");
}
