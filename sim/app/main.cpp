// toast-sim SCENARIO.json --out DIR: the testbed's scenario (or experiment) file, simulated on SimGrid with
// the client's own decisions. sim/README.md documents every option.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/catalogue_sessions.hpp"
#include "sim/core/experiment.hpp"
#include "sim/core/report.hpp"
#include "sim/core/scenario.hpp"
#include "sim/core/scenario_values.hpp"
#include "sim/sg/run.hpp"

namespace fs = std::filesystem;
using namespace toast::sim;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

const char* kHelp = R"(usage: toast-sim SCENARIO.json --out DIR [options]
       toast-sim SCENARIO.json --print-sessions

Simulates the testbed's scenario file (a single title, a catalogue evening, or an experiment file with its
_base.json) on SimGrid, the boxes deciding with toast-client's own core. Writes DIR/report.json and
DIR/report.md (an experiment: DIR/runs/NAME/ for each row, DIR/report.md and DIR/results.json).

options:
  --out DIR                 where the reports go (required unless --print-sessions)
  --print-sessions          a catalogue scenario: print its sessions as JSON (the testbed's sessions.json) and exit
  --tick MS                 a viewer's controller tick in milliseconds (default 200, the client's)
  --jobs N                  experiment rows simulated at once (default 1)
  --progress SECONDS        a catalogue run: a progress line on stderr every SECONDS simulated (default: none)
  --only LABEL              an experiment: run only the rows whose label contains LABEL (repeatable)
  --box-downlink RATE       each box's downlink (default: unbounded, 1 Gbps)
  --access-latency MS       one way, box to its aggregation node (default 0.5)
  --aggregation-boxes N     boxes per aggregation node (default 1000)
  --aggregation-uplink RATE the aggregation node's link to the core (default: not modelled)
  --aggregation-downlink RATE
                            the core's link to the aggregation node (default: not modelled)
  --server-nodes N          VoD server nodes (default 1)
  --server-link RATE        each server node's NIC (default: unconstrained)
  --disks N                 disks per server node (default 4)
  --disk-access-ms MS       t_a of the thesis's disk model (default 0: reads cost nothing, as on the testbed)
  --disk-rate RATE          r_d (default 0: reads cost nothing)
  --cfg=NAME:VALUE          a SimGrid setting, passed to the engine
  -h, --help                this text
)";

struct Args {
    fs::path scenario;
    std::optional<fs::path> out;
    bool print_sessions = false;
    int jobs = 1;
    std::vector<std::string> only;
    RunOptions run;
};

[[noreturn]] void usage_error(const std::string& message) {
    std::cerr << "toast-sim: " << message << "\n";
    std::exit(2);
}

double rate_arg(const std::string& option, const std::string& text) {
    auto v = bitrate_value(json(text));
    if (!v || *v <= 0) usage_error(option + ": expected a bitrate such as \"100Mbps\", got \"" + text + "\"");
    return *v;
}

double number_arg(const std::string& option, const std::string& text, double min) {
    try {
        std::size_t used = 0;
        double v = std::stod(text, &used);
        if (used == text.size() && v >= min) return v;
    } catch (const std::exception&) {
    }
    usage_error(option + ": expected a number of at least " + std::to_string(static_cast<long long>(min)) +
                ", got \"" + text + "\"");
}

Args parse_args(int argc, char** argv) {
    Args a;
    a.run.simgrid_args = default_simgrid_args();
    std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& o = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) usage_error(o + ": missing value");
            return args[++i];
        };
        if (o == "-h" || o == "--help") {
            std::cout << kHelp;
            std::exit(0);
        } else if (o == "--out") {
            a.out = value();
        } else if (o == "--print-sessions") {
            a.print_sessions = true;
        } else if (o == "--tick") {
            a.run.tuning.tick_s = number_arg(o, value(), 10) / 1000.0;
        } else if (o == "--jobs") {
            a.jobs = static_cast<int>(number_arg(o, value(), 1));
        } else if (o == "--progress") {
            a.run.tuning.progress_s = number_arg(o, value(), 1);
        } else if (o == "--only") {
            a.only.push_back(value());
        } else if (o == "--box-downlink") {
            a.run.platform.box_downlink_bps = rate_arg(o, value());
        } else if (o == "--access-latency") {
            a.run.platform.access_latency_s = number_arg(o, value(), 0) / 1000.0;
        } else if (o == "--aggregation-boxes") {
            a.run.platform.boxes_per_aggregation = static_cast<int>(number_arg(o, value(), 1));
        } else if (o == "--aggregation-uplink") {
            a.run.platform.aggregation_uplink_bps = rate_arg(o, value());
        } else if (o == "--aggregation-downlink") {
            a.run.platform.aggregation_downlink_bps = rate_arg(o, value());
        } else if (o == "--server-nodes") {
            a.run.platform.server_nodes = static_cast<int>(number_arg(o, value(), 1));
            a.run.server.nodes = a.run.platform.server_nodes;
        } else if (o == "--server-link") {
            a.run.platform.server_link_bps = rate_arg(o, value());
        } else if (o == "--disks") {
            a.run.server.disks.disks = static_cast<std::size_t>(number_arg(o, value(), 2));
        } else if (o == "--disk-access-ms") {
            a.run.server.disks.access_time =
                std::chrono::microseconds(static_cast<std::int64_t>(number_arg(o, value(), 0) * 1000));
        } else if (o == "--disk-rate") {
            a.run.server.disks.transfer_rate =
                toast::BitRate(static_cast<std::uint64_t>(rate_arg(o, value())));
        } else if (o.rfind("--cfg=", 0) == 0) {
            a.run.simgrid_args.push_back(o);
        } else if (!o.empty() && o[0] == '-') {
            usage_error("unknown option " + o + " (see --help)");
        } else if (a.scenario.empty()) {
            a.scenario = o;
        } else {
            usage_error("one scenario file only, got \"" + a.scenario.string() + "\" and \"" + o + "\"");
        }
    }
    if (a.scenario.empty()) usage_error("no scenario file (see --help)");
    if (!a.out && !a.print_sessions) usage_error("--out DIR is required");
    return a;
}

ordered_json read_json(const fs::path& p) {
    std::ifstream in(p);
    if (!in) throw ScenarioError("cannot read scenario " + p.string());
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return ordered_json::parse(ss.str());
    } catch (const json::parse_error& e) {
        throw ScenarioError("scenario " + p.string() + " is not valid JSON: " + e.what());
    }
}

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    const auto tmp = p.string() + ".tmp";
    {
        std::ofstream out(tmp);
        out << text;
        if (!out) throw std::runtime_error("cannot write " + p.string());
    }
    fs::rename(tmp, p);
}

void write_reports(const fs::path& dir, const RunRecords& r, std::optional<double> ceiling,
                   const json& config) {
    auto report = make_report(r, ceiling);
    report["scenario_config"] = config;
    write_file(dir / "report.json", report.dump(2) + "\n");
    write_file(dir / "report.md", render_markdown(report));
}

int run_one(const Scenario& scenario, const fs::path& dir, const RunOptions& options, const json& config,
            bool quiet) {
    if (const auto* t = std::get_if<TitleScenario>(&scenario)) {
        auto r = run_title(*t, options);
        write_reports(dir, r, ceiling_pct(*t), config);
        if (!quiet) std::cout << render_markdown(make_report(r, ceiling_pct(*t))).substr(0, 2000);
        return 0;
    }
    const auto& c = std::get<CatalogueScenario>(scenario);
    const auto plan = plan_evening(c);
    auto r = run_catalogue(c, plan, options);
    write_file(dir / "sessions.json", sessions_json(plan).dump(1) + "\n");
    write_reports(dir, r, std::nullopt, config);
    if (!quiet) {
        auto md = render_markdown(make_report(r, std::nullopt));
        std::cout << md.substr(0, md.find("## Titles"));
    }
    return 0;
}

// SimGrid's engine runs once per process: each run is a child.
int run_in_child(const Scenario& scenario, const fs::path& dir, const RunOptions& options,
                 const json& config) {
    std::cout.flush();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int rc = 1;
        try {
            rc = run_one(scenario, dir, options, config, true);
        } catch (const std::exception& e) {
            std::cerr << "toast-sim: " << dir.string() << ": " << e.what() << "\n";
        }
        std::fflush(nullptr);
        _exit(rc);
    }
    return pid;
}

int run_experiment(const Experiment& e, const Args& a) {
    std::vector<const ExperimentRow*> rows;
    for (const auto& row : e.rows) {
        bool keep = a.only.empty();
        for (const auto& o : a.only)
            keep = keep || row.label.find(o) != std::string::npos;
        if (keep) rows.push_back(&row);
    }
    std::cout << e.name << ": " << rows.size() << " runs\n";
    std::vector<std::pair<pid_t, std::size_t>> running;
    int failed = 0;
    auto reap = [&]() {
        int status = 0;
        const pid_t pid = wait(&status);
        for (auto it = running.begin(); it != running.end(); ++it) {
            if (it->first != pid) continue;
            const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (!ok) ++failed;
            std::cout << (ok ? "done " : "FAILED ") << rows[it->second]->name() << "\n" << std::flush;
            running.erase(it);
            return;
        }
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
        while (static_cast<int>(running.size()) >= a.jobs)
            reap();
        const auto dir = *a.out / "runs" / rows[i]->label;
        json config = json::parse(nlohmann::ordered_json(rows[i]->params).dump());
        running.emplace_back(run_in_child(rows[i]->scenario, dir, a.run, config), i);
    }
    while (!running.empty())
        reap();
    // The figure's table: one row per run.
    ordered_json results = ordered_json::array();
    std::string md = "# Toast simulator: " + e.name + "\n\n" + e.meta["title"].get<std::string>() +
                     "\n\nThesis: " + e.meta["thesis"].get<std::string>() +
                     "\n\n| run | reduction | peak reduction | stalls | startup median | upload used |\n"
                     "|---|---|---|---|---|---|\n";
    for (const auto* row : rows) {
        const auto file = *a.out / "runs" / row->label / "report.json";
        std::ifstream in(file);
        if (!in) {
            md += "| " + row->label + " | failed | | | | |\n";
            continue;
        }
        auto r = ordered_json::parse(in);
        auto fmt = [](const ordered_json& v, const char* f) {
            if (v.is_null()) return std::string("n/a");
            char buf[64];
            std::snprintf(buf, sizeof buf, f, v.get<double>());
            return std::string(buf);
        };
        md += "| " + row->label + " | " + fmt(r["reduction_pct"], "%.1f%%") + " | " +
              fmt(r["peak_reduction_pct"], "%.1f%%") + " | " +
              std::to_string(r["stalls"]["count"].get<int>()) + " | " +
              fmt(r["startup_ms"]["median"], "%.0f ms") + " | " + fmt(r["upload_used_pct"], "%.1f%%") +
              " |\n";
        r.erase("per_client");
        r.erase("server_bins_bytes");
        results.push_back({{"label", row->label}, {"params", row->params}, {"report", r}});
    }
    write_file(*a.out / "report.md", md);
    write_file(*a.out / "results.json", results.dump(2) + "\n");
    std::cout << md;
    return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const Args a = parse_args(argc, argv);
    try {
        const auto data = read_json(a.scenario);
        if (is_experiment(data)) {
            if (a.print_sessions)
                usage_error("--print-sessions needs a catalogue scenario, not an experiment");
            return run_experiment(load_experiment(a.scenario), a);
        }
        const auto scenario = scenario_from_json(json::parse(data.dump()), a.scenario.stem().string());
        if (a.print_sessions) {
            const auto* c = std::get_if<CatalogueScenario>(&scenario);
            if (!c) usage_error("--print-sessions needs a catalogue scenario (\"type\": \"catalogue\")");
            std::cout << sessions_json(plan_evening(*c)).dump(1) << "\n";
            return 0;
        }
        return run_one(scenario, *a.out, a.run, json::parse(data.dump()), false);
    } catch (const ScenarioError& e) {
        std::cerr << "toast-sim: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "toast-sim: " << e.what() << "\n";
        return 1;
    }
}
