// The testbed's scenario files, read for the simulator: a single-title scenario
// (testbed/toastbed/scenario.py: the same fields, defaults, checks and error messages) or a catalogue
// scenario ("type": "catalogue", the shared spec in testbed/README.md, "Catalogue scenarios"). One file runs
// on both. Fields that describe how the testbed runs processes (shaping, baselines, the stock seed's process)
// are read and checked too; the simulator says in its report what it does with each (sim/README.md).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace toast::sim {

class ScenarioError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A single-title scenario: `clients` viewers of one title arriving on a schedule (testbed/README.md,
// "Scenario fields"). Rates in bits per second, sizes in bytes, times in seconds.
struct TitleScenario {
    std::string name = "scenario";
    int clients = 8;
    std::string arrival = "uniform";  // uniform | poisson | all-at-once
    double arrival_interval = 5.0;
    std::string behavior = "stream";
    std::string picker = "adaptive";
    double inorder_window = 30.0;
    std::string lookahead;  // "" = the client's default, "none" = the whole title, or a duration
    double upload_limit = 2'000'000;
    double download_limit = 0;  // 0 = unlimited
    std::string buffer_limit;   // "" = unlimited, "50%" or a size
    double title_seconds = 60.0;
    double bitrate = 2'000'000;
    double piece_size = 256 * 1024;
    std::string choker = "nearest";
    double delay_ms = 0;
    bool shaping = false;
    bool seed = true;
    double seed_upload_limit = 0;  // 0 = unlimited
    std::string seed_client = "stock";
    std::int64_t random_seed = 1;
    double time_limit = 0;  // 0 = derived
    std::vector<std::string> baselines;
    std::vector<std::string> extra_client_args;

    std::uint64_t title_bytes() const;
};

// One share of the boxes' uplinks: `share` of the boxes upload at `factor` x the base uplink.
struct UplinkShare {
    double share = 1.0;
    double factor = 1.0;
};

// A catalogue scenario: long-lived boxes, a Zipf catalogue, a compressed evening of sessions.
struct CatalogueScenario {
    std::string name = "catalogue";
    int boxes = 150;
    int titles = 30;
    double zipf_alpha = 0.9;
    double title_seconds = 120.0;
    double bitrate = 4'000'000;
    double piece_size = 256 * 1024;
    double uplink = 1'000'000;
    std::vector<UplinkShare> uplink_mix = {UplinkShare{}};
    double evening_seconds = 600;
    std::vector<std::pair<double, double>> profile = {{0, 0.15}, {0.5, 1.0}, {0.8, 1.0}, {1.0, 0.2}};
    double peak_viewers_pct = 20;
    double abandon_pct = 40;
    double abandon_lo = 0.05, abandon_hi = 0.6;
    // The quota as bytes, or as titles (exactly one is set).
    std::optional<double> disk_quota_bytes;
    std::optional<double> disk_quota_titles = 4;
    int warm_titles = 3;
    std::string cache = "lru";  // none | lru | popularity
    nlohmann::json push;        // null: no pre-placement
    std::string picker = "adaptive";
    std::string choker = "nearest";
    std::optional<double> upload_limit;  // a cap below the box's uplink; absent: the uplink
    std::int64_t random_seed = 1;
    double time_limit = 0;
    // The testbed's probe box: one more box holding every title at the base uplink that never watches; its
    // upload counts as the server's.
    bool probe_box = true;
    // Fields of the file the simulator does not read (the testbed owns the spec and may add some).
    std::vector<std::string> unread_fields;

    std::uint64_t title_bytes() const;
    double quota_bytes() const;
};

using Scenario = std::variant<TitleScenario, CatalogueScenario>;

// Reads a scenario object; `default_name` names it when it has no "name". Throws ScenarioError naming the
// field and the bad value, with the testbed's wording.
Scenario scenario_from_json(const nlohmann::json& data, const std::string& default_name);
TitleScenario title_scenario_from_json(const nlohmann::json& data, const std::string& default_name);
CatalogueScenario catalogue_scenario_from_json(const nlohmann::json& data, const std::string& default_name);

// Start offsets in seconds, one per client, as the testbed's arrival_times() (poisson arrivals draw from
// Python's random.Random(random_seed), reproduced exactly).
std::vector<double> arrival_times(const TitleScenario& s);

// The most viewers whose playback overlaps (each watches for the title's length from its arrival).
int watching_at_once(const TitleScenario& s);

}  // namespace toast::sim
