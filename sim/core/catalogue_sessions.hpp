// The sessions of a catalogue evening, generated exactly as the shared spec says (testbed/README.md,
// "Catalogue scenarios"), so that the testbed and the simulator watch the same sessions for the same file:
// the boxes' uplinks, the titles each box holds at the evening's start, and each session's box, title, start
// and length. Every random number is a raw mt19937_64 draw turned into [0, 1) as (next() >> 11) * 2^-53, in
// the spec's order.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/scenario.hpp"

namespace toast::sim {

struct Session {
    int box = 0;
    int title = 0;  // 0-based rank: 0 is the most popular ("t001")
    double start_s = 0;
    double watch_s = 0;
    double watched_fraction = 1;
};

struct EveningPlan {
    std::vector<double> uplink_bps;      // per box
    std::vector<std::vector<int>> warm;  // per box: titles held at the start, in the order drawn
    std::vector<Session> sessions;       // by start
    std::uint64_t dropped = 0;           // arrivals with no idle box
    double lambda_peak = 0;              // sessions per second at the profile's 1.0
    double mean_watch_s = 0;
};

// [0, 1) from one raw draw.
double unit_draw(std::mt19937_64& engine);
// Shares x boxes rounded by largest remainder (ties: the lower index first).
std::vector<int> largest_remainder(const std::vector<double>& shares, int total);
// The arrival rate's shape at `fraction` of the evening: piecewise linear through `profile`.
double profile_at(const std::vector<std::pair<double, double>>& profile, double fraction);
// Cumulative Zipf weights c_i = sum_{k<=i} (1/k^alpha) / W for `titles` titles.
std::vector<double> zipf_cumulative(int titles, double alpha);
// The first i with u < c_i (the last title if rounding leaves u above every c_i).
int zipf_pick(const std::vector<double>& cumulative, double u);

EveningPlan plan_evening(const CatalogueScenario& s);

// "t001"...: the title's name (at least three digits).
std::string title_name(int title);
// The sessions as the testbed's sessions.json lists them.
nlohmann::ordered_json sessions_json(const EveningPlan& plan);

}  // namespace toast::sim
