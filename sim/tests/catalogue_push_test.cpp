#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>

#include "sim/core/catalogue_push.hpp"
#include "sim/core/catalogue_sessions.hpp"

using namespace toast::sim;
using nlohmann::json;

namespace {

CatalogueScenario catalogue(const json& extra) {
    json j = {{"type", "catalogue"}, {"boxes", 60},       {"titles", 10},    {"title_seconds", "120s"},
              {"bitrate", "4Mbps"},  {"uplink", "1Mbps"}, {"random_seed", 3}};
    j.update(extra);
    return catalogue_scenario_from_json(j, "t");
}

std::string error_of(const json& push) {
    try {
        read_push(catalogue({{"push", push}}));
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("push fields are read with the testbed's wording and the server's defaults", "[sim][push]") {
    CHECK(!read_push(catalogue(json::object())));
    CHECK(error_of({{"quota", "240MB"}, {"window", {-300, 0}}}) == "scenario field 'push': missing \"rate\"");
    CHECK(error_of({{"quota", "240MB"}, {"rate", "2Mbps"}, {"window", {-4000, 0}}}) ==
          "scenario field 'push.window': expected [start, end] seconds from the evening's start (before it: "
          "negative), -3600 <= start < end <= 600, got [-4000, 0]");
    CHECK(error_of({{"quota", 0}, {"rate", "2Mbps"}, {"window", {-300, 0}}}) ==
          "scenario field 'push.quota': expected a size > 0 such as \"200MiB\", got 0");
    CHECK(error_of({{"quota", "1MB"}, {"rate", "2Mbps"}, {"window", {-300, 0}}, {"replicas", 1}}) ==
          "scenario field 'push.replicas': expected an integer in [2, 64], got 1");
    const auto p = read_push(catalogue({{"peak_viewers_pct", 10},
                                        {"push",
                                         {{"quota", "240MB"},
                                          {"rate", "2Mbps"},
                                          {"window", {-300, 0}},
                                          {"holder_share", 0.25},
                                          {"refresh", "10s"}}}}));
    REQUIRE(p);
    CHECK(p->quota_bytes == 240e6);
    CHECK(p->rate_bps == 2e6);
    CHECK(p->night_s() == 300);
    CHECK(p->planner.peak_viewers == Approx(6));  // 10% of 60 boxes, as the testbed tells the server
    CHECK(p->planner.holder_share == 0.25);
    CHECK(p->planner.replicas == 2);
    CHECK(p->unread == std::vector<std::string>{"push.refresh"});
}

TEST_CASE("the demand forecast splits the evening's expected sessions by the Zipf weights", "[sim][push]") {
    const auto s = catalogue(json::object());
    const auto plan = plan_evening(s);
    const auto f = demand_forecast(s, plan.lambda_peak);
    REQUIRE(f.size() == 10);
    CHECK(std::is_sorted(f.rbegin(), f.rend()));
    // The base profile's mean is 0.7075: the peak rate times it, per hour.
    CHECK(std::accumulate(f.begin(), f.end(), 0.0) == Approx(plan.lambda_peak * 0.7075 * 3600).epsilon(1e-6));
}

TEST_CASE("boxes hold the server planner's assignment, fetched in the night at the push rate",
          "[sim][push]") {
    const auto s = catalogue(
        {{"peak_viewers_pct", 10}, {"push", {{"quota", "30MB"}, {"rate", "2Mbps"}, {"window", {-300, 0}}}}});
    const auto spec = read_push(s);
    REQUIRE(spec);
    const auto plan = plan_evening(s);
    const auto placed = place_push(s, *spec, demand_forecast(s, plan.lambda_peak), plan.uplink_bps);
    CHECK(placed.titles_placed > 0);
    CHECK(placed.night_bytes > 0);
    CHECK(placed.night_bytes <= placed.assigned_bytes);
    // Each box: only assigned pieces, at most the push quota and the rate's bucket over the night.
    const double bucket = 2e6 / 8 * (1 + 300) + s.piece_size;
    std::uint64_t held_total = 0;
    for (std::size_t b = 0; b < placed.held.size(); ++b) {
        const auto& bp = *std::find_if(placed.plan.boxes.begin(), placed.plan.boxes.end(),
                                       [&](const auto& x) { return x.id == box_name(static_cast<int>(b)); });
        double held = 0;
        for (const auto& h : placed.held[b]) {
            const auto& holding = *std::find_if(bp.holdings.begin(), bp.holdings.end(), [&](const auto& x) {
                return placed.plan.titles[x.title].name == title_name(h.title);
            });
            for (int p : h.pieces) {
                CHECK(std::any_of(holding.pieces.begin(), holding.pieces.end(), [&](const auto& span) {
                    return span.first <= unsigned(p) && unsigned(p) <= span.last;
                }));
                held += std::min(s.piece_size, static_cast<double>(s.title_bytes()) - p * s.piece_size);
            }
        }
        CHECK(held <= 30e6);
        CHECK(held <= bucket);
        held_total += static_cast<std::uint64_t>(held);
    }
    CHECK(held_total == placed.night_bytes);
    CHECK(std::accumulate(placed.night_bins.begin(), placed.night_bins.end(), 0.0) ==
          Approx(static_cast<double>(placed.night_bytes)));
    CHECK(placed.night_bins.size() == 30);
    // Every placed stripe has at least two holders (the planner's invariant, kept through the sim's names).
    for (const auto& t : placed.plan.titles)
        for (const auto& holders : t.holders)
            CHECK(std::set<std::size_t>(holders.begin(), holders.end()).size() >= 2);
}

TEST_CASE("a push window inside the evening fetches nothing before it", "[sim][push]") {
    const auto s = catalogue({{"push", {{"quota", "30MB"}, {"rate", "2Mbps"}, {"window", {0, 60}}}}});
    const auto plan = plan_evening(s);
    const auto placed = place_push(s, *read_push(s), demand_forecast(s, plan.lambda_peak), plan.uplink_bps);
    CHECK(placed.assigned_bytes > 0);
    CHECK(placed.night_bytes == 0);
}

TEST_CASE("a box fetches nothing of an assigned title it already holds, and its quota goes to the others",
          "[sim][push]") {
    const auto s = catalogue(
        {{"peak_viewers_pct", 10}, {"push", {{"quota", "30MB"}, {"rate", "2Mbps"}, {"window", {-300, 0}}}}});
    const auto spec = read_push(s);
    REQUIRE(spec);
    const auto plan = plan_evening(s);
    const auto forecast = demand_forecast(s, plan.lambda_peak);
    const auto all = place_push(s, *spec, forecast, plan.uplink_bps);
    // Every box holds, as its cache's, the first title it was assigned.
    std::vector<std::vector<int>> warm(plan.uplink_bps.size());
    std::size_t boxes_with_warm = 0;
    for (std::size_t b = 0; b < all.held.size(); ++b)
        for (const auto& h : all.held[b])
            if (!h.pieces.empty()) {
                warm[b].push_back(h.title);
                ++boxes_with_warm;
                break;
            }
    REQUIRE(boxes_with_warm > 0);
    const auto skipping = place_push(s, *spec, forecast, plan.uplink_bps, 10, warm);
    // The same plan, but no warm title fetched.
    CHECK(skipping.assigned_bytes == all.assigned_bytes);
    for (std::size_t b = 0; b < skipping.held.size(); ++b)
        for (const auto& h : skipping.held[b])
            CHECK(std::find(warm[b].begin(), warm[b].end(), h.title) == warm[b].end());
    CHECK(skipping.night_bytes < all.night_bytes);
    CHECK(std::accumulate(skipping.night_bins.begin(), skipping.night_bins.end(), 0.0) ==
          Approx(static_cast<double>(skipping.night_bytes)));
}
