// One simulation: a single-title scenario (its clients arriving on the testbed's schedule, the operator's
// seed beside the server) or a catalogue evening (its boxes holding their warm titles, sessions as planned,
// each box's cache kept by the scenario's policy afterwards). Builds the platform and the world, runs the
// SimGrid engine, and returns the records the report is made from. SimGrid's engine runs once per process:
// the caller forks for each run (sim/app/main.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "client/core/client_options.hpp"
#include "sim/core/catalogue_sessions.hpp"
#include "sim/core/platform_spec.hpp"
#include "sim/core/report.hpp"
#include "sim/core/scenario.hpp"
#include "sim/core/server_model.hpp"
#include "sim/sg/world.hpp"

namespace toast::sim {

struct RunOptions {
    SimTuning tuning;
    PlatformConfig platform;
    ServerSetup server;
    std::vector<std::string> simgrid_args;  // --cfg=... passed to the engine
};

// The engine's own settings the simulator needs (sim/README.md): no TCP cross-traffic (it doubles the flows
// and couples every uplink with a downlink), warnings only.
std::vector<std::string> default_simgrid_args();

// The toast-client command line the testbed gives client `index` of `s` (testbed/toastbed/run.py
// client_argv), parsed by the client's own parser.
client::ClientOptions title_client_options(const TitleScenario& s, int index);
client::ClientOptions catalogue_client_options(const CatalogueScenario& s, int box, double uplink_bps);

RunRecords run_title(const TitleScenario& s, const RunOptions& options);
RunRecords run_catalogue(const CatalogueScenario& s, const EveningPlan& plan, const RunOptions& options);

// Shared by run_title and run_catalogue: the engine with `args`, a title's geometry and swarm, the run's
// cost.
std::unique_ptr<simgrid::s4u::Engine> make_sim_engine(const std::vector<std::string>& args);
TitleState make_sim_title(const std::string& name, int index, double seconds, double bitrate,
                          double piece_size);
void fill_sim_cost(RunRecords& r, const World& w, std::chrono::steady_clock::time_point started,
                   double tick_s);

// The testbed's ceiling for a single-title scenario: 1 - 1/N, and upload / bitrate for streamers uploading
// below it.
double ceiling_pct(const TitleScenario& s);

}  // namespace toast::sim
