// Who asks for what, and when (seed 002 §4.3): arrival times and title picks for a load generator trial.
//
// Arrivals: `ramp` spreads N starts evenly over a span (the thesis's "nearly simultaneous" parallel requests,
// spread over a round or two so the first reads do not all queue at once); `poisson` draws exponential gaps
// of a given mean. Picks: `distinct` gives viewer i title i (the list is ordered by whoever builds it, e.g.
// round-robin over naive disks for a balanced load); `weighted` draws by per-title weights (uniform when all
// are equal, an overloaded disk when its titles weigh more); `zipf` draws rank r with probability ∝ r^-s in
// list order.
//
// Deterministic: every draw comes from one std::mt19937_64 seeded by the caller, with our own sampling.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace toast::loadgen {

struct Arrivals {
    enum class Kind { ramp, poisson } kind = Kind::ramp;
    double seconds = 0;  // ramp: the span; poisson: the mean gap
};
// "ramp:10s", "poisson:1s" (durations as the config parses them); nullopt when malformed.
std::optional<Arrivals> parse_arrivals(std::string_view text);

struct Pick {
    enum class Kind { distinct, weighted, zipf } kind = Kind::distinct;
    double zipf_s = 0;
};
// "distinct", "weighted", "zipf:0.5"; nullopt when malformed.
std::optional<Pick> parse_pick(std::string_view text);

// Start offsets in seconds for `n` viewers, non-decreasing, the first at 0.
std::vector<double> arrival_times(const Arrivals& arrivals, std::size_t n, std::mt19937_64& rng);

// Title index per viewer. `weights` has one entry per title (used by `weighted`; all 1 for uniform).
// Precondition: weights non-empty; for `distinct`, n <= weights.size().
std::vector<std::size_t> pick_titles(const Pick& pick, std::size_t n, const std::vector<double>& weights,
                                     std::mt19937_64& rng);

// A uniform double in [0, 1) from the raw engine (53 bits).
double uniform01(std::mt19937_64& rng);

}  // namespace toast::loadgen
