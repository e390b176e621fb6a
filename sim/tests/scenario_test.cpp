#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/core/experiment.hpp"
#include "sim/core/scenario.hpp"

using namespace toast::sim;
using nlohmann::json;

namespace {

std::string error_of(const json& j) {
    try {
        scenario_from_json(j, "x");
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a single-title scenario takes the testbed's defaults and value syntax", "[sim][scenario]") {
    auto s = std::get<TitleScenario>(scenario_from_json(json::object(), "plain"));
    CHECK(s.name == "plain");
    CHECK(s.clients == 8);
    CHECK(s.picker == "adaptive");
    CHECK(s.upload_limit == 2'000'000);
    CHECK(s.piece_size == 262144);
    CHECK(s.seed_client == "stock");
    auto t = std::get<TitleScenario>(scenario_from_json(json{{"clients", 12},
                                                             {"upload_limit", "1.5Mbps"},
                                                             {"title_seconds", "40s"},
                                                             {"inorder_window", "2min"},
                                                             {"piece_size", "32KiB"},
                                                             {"bitrate", 2000000},
                                                             {"arrival_interval", "250ms"}},
                                                        "x"));
    CHECK(t.upload_limit == 1'500'000);
    CHECK(t.title_seconds == 40);
    CHECK(t.inorder_window == 120);
    CHECK(t.piece_size == 32768);
    CHECK(t.arrival_interval == 0.25);
    CHECK(t.title_bytes() == 10'000'000);
}

TEST_CASE("a bad single-title field is named with the testbed's wording", "[sim][scenario]") {
    CHECK(error_of(json{{"clients", 0}}) ==
          "scenario field 'clients': expected an integer from 1 to 500, got 0");
    CHECK(
        error_of(json{{"picker", "fastest"}}) ==
        "scenario field 'picker': expected one of rarest, inorder, beta, hybrid, adaptive, got \"fastest\"");
    CHECK(error_of(json{{"upload_limit", "fast"}}) ==
          "scenario field 'upload_limit': expected a bitrate such as \"2Mbps\", got \"fast\"");
    CHECK(error_of(json{{"piece_size", "100KiB"}}) ==
          "scenario field 'piece_size': expected a power of two of at least 16KiB, got \"100KiB\"");
    CHECK(error_of(json{{"colour", "red"}}) == "scenario field 'colour': unknown field");
    CHECK(error_of(json{{"title_seconds", 1}, {"bitrate", 1000}}) ==
          "scenario: the title (title_seconds x bitrate) is smaller than one piece");
    CHECK(error_of(json{{"type", "many"}}) ==
          "scenario field 'type': expected one of title, catalogue, got \"many\"");
}

TEST_CASE("arrivals follow the testbed's schedule, poisson ones from Python's generator", "[sim][scenario]") {
    TitleScenario s;
    s.clients = 4;
    s.arrival_interval = 3;
    CHECK(arrival_times(s) == std::vector<double>{0, 3, 6, 9});
    s.arrival = "all-at-once";
    CHECK(arrival_times(s) == std::vector<double>{0, 0, 0, 0});
    // random.Random(5): t += expovariate(1 / 5), as printed by Python 3.11.
    s.arrival = "poisson";
    s.arrival_interval = 5;
    s.random_seed = 5;
    const auto a = arrival_times(s);
    CHECK(a[0] == 0.0);
    CHECK(a[1] == 4.876246846321968);
    s.arrival = "uniform";
    s.arrival_interval = 3;
    s.clients = 12;
    s.title_seconds = 40;
    CHECK(watching_at_once(s) == 12);
    s.arrival_interval = 10;
    CHECK(watching_at_once(s) == 4);
}

TEST_CASE("a catalogue scenario reads the shared spec's fields and defaults", "[sim][scenario]") {
    auto c = std::get<CatalogueScenario>(scenario_from_json(json{{"type", "catalogue"}}, "cat"));
    CHECK(c.boxes == 150);
    CHECK(c.titles == 30);
    CHECK(c.bitrate == 4'000'000);
    CHECK(c.quota_bytes() == 4.0 * 60'000'000);
    CHECK(c.profile.size() == 4);
    auto d = std::get<CatalogueScenario>(scenario_from_json(
        json::parse(R"({"type":"catalogue","disk_quota":"100MiB","uplink_mix":[{"share":0.5,"factor":2},
        {"share":0.5,"factor":1}],"evening":{"seconds":"1h"},"abandon":{"pct":10,"watched":[0.1,0.2]},
        "testbed_only":1})"),
        "cat"));
    CHECK(d.quota_bytes() == 100.0 * 1024 * 1024);
    CHECK(d.uplink_mix.size() == 2);
    CHECK(d.evening_seconds == 3600);
    CHECK(d.abandon_pct == 10);
    CHECK(d.unread_fields == std::vector<std::string>{"testbed_only"});
    // A box may run any of the client's chokers, the operator seed's `leader` too.
    auto leader = std::get<CatalogueScenario>(
        scenario_from_json(json{{"type", "catalogue"}, {"choker", "leader"}}, "cat"));
    CHECK(leader.choker == "leader");
    CHECK(error_of(json{{"type", "catalogue"}, {"choker", "fastest"}}) ==
          "scenario field 'choker': expected one of nearest, tit-for-tat, seed, leader, got \"fastest\"");
    CHECK(error_of(json::parse(R"({"type":"catalogue","uplink_mix":[{"share":0.5,"factor":2}]})")) ==
          "scenario field 'uplink_mix': expected a list of {\"share\": S, \"factor\": F} with shares summing "
          "to "
          "1, got [{\"factor\": 2, \"share\": 0.5}]");
}

TEST_CASE("an experiment expands into the testbed's rows and names", "[sim][scenario]") {
    const auto file =
        std::filesystem::path(TOAST_SOURCE_DIR) / "testbed/experiments/fig5_3_pickers_upload.json";
    const auto e = load_experiment(file);
    REQUIRE(e.rows.size() == 75);
    CHECK(e.rows.front().label == "upload_limit=1Mbps,picker=rarest,random_seed=1");
    CHECK(e.rows.front().name() == "fig5_3_pickers_upload[upload_limit=1Mbps,picker=rarest,random_seed=1]");
    CHECK(std::get<TitleScenario>(e.rows.front().scenario).clients == 12);  // from _base.json
    CHECK(e.rows.back().label == "upload_limit=2Mbps,picker=adaptive,random_seed=5");
    CHECK(std::get<TitleScenario>(e.rows.back().scenario).upload_limit == 2'000'000);
    CHECK(std::get<TitleScenario>(e.rows[1].scenario).random_seed == 2);
}

TEST_CASE("a catalogue experiment expands into catalogue rows with its base", "[sim][scenario]") {
    const auto file = std::filesystem::path(TOAST_SOURCE_DIR) / "testbed/experiments/catalogue/push.json";
    const auto e = load_experiment(file);
    REQUIRE(e.rows.size() == 9);
    CHECK(e.rows.front().label == "peak_viewers_pct=10,random_seed=1");
    const auto& c = std::get<CatalogueScenario>(e.rows.front().scenario);
    CHECK(c.boxes == 150);  // from _base.json
    CHECK(c.cache == "popularity");
    CHECK(c.push.at("quota") == "240MB");
    CHECK(c.peak_viewers_pct == 10);
}
