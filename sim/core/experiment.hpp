// The testbed's experiment files (testbed/experiments/*.json, read by testbed/run-all): a `base` over the
// directory's _base.json scenario, a `sweep` (field -> values; every combination, in the file's key order)
// and optional `also` rows. Expanded here into the same rows, with the same names
// ("fig5_3[upload_limit=1Mbps,...]"), so the simulator runs the figure the testbed runs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/scenario.hpp"

namespace toast::sim {

struct ExperimentRow {
    std::string label;              // "upload_limit=1Mbps,picker=rarest,random_seed=1"
    nlohmann::ordered_json params;  // the row's swept values
    Scenario scenario;              // a single title, or a catalogue (testbed/experiments/catalogue)
    const std::string& name() const;
};

struct Experiment {
    std::string name;             // the file's stem
    nlohmann::ordered_json meta;  // figure, title, thesis
    std::vector<ExperimentRow> rows;
};

// True when `data` is an experiment file rather than a scenario (it has a "sweep").
bool is_experiment(const nlohmann::json& data);

// Expands the experiment `data` named `name` over `base` (the "scenario" object of _base.json). Throws
// ScenarioError naming the experiment and the row when a row is not a valid scenario.
Experiment expand_experiment(const nlohmann::ordered_json& base, const std::string& name,
                             const nlohmann::ordered_json& data);

// Reads FILE and its directory's _base.json.
Experiment load_experiment(const std::filesystem::path& file);

// The value as the testbed's label shows it (Python's str()): strings bare, numbers as Python prints them.
std::string python_str(const nlohmann::json& value);

}  // namespace toast::sim
