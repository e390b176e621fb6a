// Pre-placement ("push") and the demand the catalogue's boxes and server see, decided by their own code: the
// scenario's `push` field read as the testbed reads it (quota, rate, window, and the server's planner
// fields), the operator's demand forecast the testbed hands the server (the workload's expected sessions per
// hour per title), the server's planner (`server/core/push_planner`, toast_server_push_core) striping titles
// over the boxes, and each box's fetch of its assignment in the night before the evening paced by the
// client's own `PushFetchPolicy` (client/core/push_fetch_policy). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/core/push_planner.hpp"
#include "sim/core/scenario.hpp"

namespace toast::sim {

struct PushSpec {
    double quota_bytes = 0;                       // each box's --push-quota
    double rate_bps = 0;                          // each box's --push-rate
    double window_start_s = 0, window_end_s = 0;  // from the evening's start; a negative start is the night
    server::PlannerSettings planner;              // peak_viewers already resolved for the scenario's boxes
    std::vector<std::string> unread;              // the server's own fields that decide nothing here
    double night_s() const { return window_start_s < 0 ? -window_start_s : 0.0; }
};

// nullopt when the scenario has no push. Throws ScenarioError with the testbed's wording for a bad value.
std::optional<PushSpec> read_push(const CatalogueScenario& s);

// Sessions started per hour of each title (0-based rank), as the testbed's forecast for the server: the peak
// arrival rate times the profile's mean over the evening, split by the Zipf weights, rounded to 6 decimals.
std::vector<double> demand_forecast(const CatalogueScenario& s, double lambda_peak);

// The testbed's name for box `box` ("box000"...), which the planner hashes.
std::string box_name(int box);

struct PushHolding {
    int title = 0;
    std::vector<int> pieces;  // fetched before the evening, ascending
};

struct PushPlacement {
    server::PushPlan plan;
    std::vector<std::vector<PushHolding>> held;  // per box: what it holds when the evening starts
    std::uint64_t assigned_bytes = 0;            // every box's assignment
    std::uint64_t night_bytes = 0;               // fetched from the server in the night
    std::vector<double> night_bins;              // the night's server bytes per bin of `bin_s`, oldest first
    int titles_placed = 0;
};

// Plans with the server's planner (boxes as registered: every box, its uplink as its upload, the push quota)
// and fetches each box's assignment in the part of the window before the evening at the client's pace.
// A window inside the evening is not fetched (the boxes hold nothing by push then; the caller says so).
// An assigned title a box already holds (`warm`, per box: its cache's titles) is not fetched and counts
// nothing against the quota, as the client's push agent leaves a title it holds to its cache.
PushPlacement place_push(const CatalogueScenario& s, const PushSpec& spec,
                         const std::vector<double>& forecast, const std::vector<double>& uplink_bps,
                         double bin_s = 10, const std::vector<std::vector<int>>& warm = {});

}  // namespace toast::sim
