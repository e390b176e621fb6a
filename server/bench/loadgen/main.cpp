// toast-loadgen: opens rate-paced /stream viewers against a toast-server and reports whether any starved
// (seed 002 §3.3, §4.3). With --search it finds, by binary search, the largest number of viewers no one of
// which starves. A benchmark tool: it prints one JSON object per trial on stdout and a summary line per trial
// on stderr.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/bench/loadgen/trial.hpp"
#include "toast/common/endpoint.hpp"

namespace {

using namespace toast;
using namespace toast::loadgen;

constexpr const char* kUsage =
    "usage: toast-loadgen --server HOST:PORT... (--titles A,B,... | --titles-file FILE) --bitrate RATE\n"
    "                     (--viewers N | --search LO:HI) [options]\n"
    "  --server HOST:PORT   repeat for a tier's nodes: viewer i asks server i mod N; a 307 (a node sending\n"
    "                       the viewer to one with room) is followed\n"
    "  --tier IDS           the servers are a tier's nodes with these ids (comma-separated, in --server\n"
    "                       order): viewers fetch /titles block by block from a block's holders, as\n"
    "                       toast-client does (Toast-Direct, the holder drawn by loads and their age,\n"
    "                       the other on failure)\n"
    "  --block-size N       the tier's block size in bytes (with --tier)\n"
    "  --replicas N         holders per block (with --tier; 2)\n"
    "  --placement P        the tier's placement, block or title (with --tier; block)\n"
    "  --ties T             split (each viewer draws between holders by a salt of its own, as boxes do)\n"
    "                       or first (tie-break 0: the first holder the draw allows) (with --tier; split)\n"
    "  --loads L            aged (a load counts for less as it ages, as boxes weigh it) or fresh (every\n"
    "                       load taken as just heard) (with --tier; aged)\n"
    "  --retry-for DUR      a refused viewer (503) asks again after Retry-After for this long (0: never)\n"
    "  --titles-file FILE   one title per line, optionally followed by a weight (for --pick weighted)\n"
    "  --bitrate RATE       playback rate of constant-rate titles, e.g. 6Mbps\n"
    "  --time-slice DUR     the server's time slice t_b: a viewer starts playing once it holds one (5s)\n"
    "  --traces FILE        JSON {\"round\": SECONDS, \"titles\": {NAME: [bytes per round, ...]}}: titles "
    "paced\n"
    "                       by a demand trace are played by it\n"
    "  --arrival A          ramp:DUR (starts spread evenly over DUR) or poisson:MEAN_GAP (ramp:0s)\n"
    "  --pick P             distinct (viewer i gets title i), weighted, zipf:S (distinct)\n"
    "  --watch DUR          each viewer leaves after this much playback (default: the whole title)\n"
    "  --seed N             seed of arrivals and picks (1)\n"
    "  --search LO:HI       binary search for the most viewers without starvation; LO should pass\n"
    "  --precision N        stop the search when HI - LO <= N (1)\n"
    "  --settle DUR         pause between trials (2s)\n"
    "  --slack DUR          a viewer this far behind its schedule is cut off and counted as an error (30s)\n"
    "  --path PREFIX        request PREFIX + title (/stream/)\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "toast-loadgen: %s\n%s", message.c_str(), kUsage);
    return 2;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

nlohmann::json to_json(const TrialResult& r) {
    nlohmann::json j;
    j["viewers"] = r.viewers;
    j["admitted"] = r.admitted;
    j["refused"] = r.refused;
    j["errors"] = r.errors;
    j["starved"] = r.starved;
    j["stalls"] = r.stalls;
    j["stall_seconds"] = r.stall_seconds;
    j["stall_mean"] = r.stalls ? r.stall_seconds / static_cast<double>(r.stalls) : 0.0;
    j["stall_max"] = r.stall_max;
    j["start_latency_median"] = median(r.start_latencies);
    j["start_latency_max"] = r.start_latencies.empty()
                                 ? 0.0
                                 : *std::max_element(r.start_latencies.begin(), r.start_latencies.end());
    j["retry_after_median"] = median(r.retry_after);
    j["refusals"] = r.refusals;
    j["redirects"] = r.redirects;
    j["peak_streams"] = r.peak_streams;
    j["median_streams"] = r.median_streams;
    j["node_reads"] = r.node_reads;
    j["node_bytes"] = r.node_bytes;
    j["ask_peak_median"] = r.ask_peak_median;
    j["ask_peak_p90"] = r.ask_peak_p90;
    j["disk_reads"] = r.disk_reads;
    j["disk_bytes"] = r.disk_bytes;
    j["seconds"] = r.seconds;
    j["passed"] = r.passed();
    j["error_samples"] = r.error_samples;
    return j;
}

void report(const TrialResult& r) {
    std::cout << to_json(r).dump() << std::endl;
    std::fprintf(
        stderr,
        "trial: %zu viewers: %zu admitted, %zu refused, %zu errors; %zu starved (%zu stalls, max %.2f s); "
        "start latency median %.2f s; %s\n",
        r.viewers, r.admitted, r.refused, r.errors, r.starved, r.stalls, r.stall_max,
        median(r.start_latencies), r.passed() ? "pass" : "FAIL");
    for (const auto& e : r.error_samples)
        std::fprintf(stderr, "  error: %s\n", e.c_str());
}

// What the command line asks for.
struct Command {
    TrialSpec spec;
    std::optional<std::size_t> viewers;
    std::optional<std::pair<std::size_t, std::size_t>> search;
    std::size_t precision = 1;
    double settle = 2;
    bool have_bitrate = false;
};

// --titles-file: one title a line, optionally followed by its weight.
bool read_titles_file(const std::string& path, TrialSpec& spec) {
    std::ifstream in(path);
    if (!in) return false;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name;
        double weight = 1;
        if (!(fields >> name)) continue;
        if (!(fields >> weight)) weight = 1;
        spec.titles.push_back(name);
        spec.weights.push_back(weight);
    }
    return true;
}

// --traces: {"round": SECONDS, "titles": {NAME: [bytes per round, ...]}}.
bool read_traces(const std::string& path, TrialSpec& spec) {
    std::ifstream in(path);
    if (!in) return false;
    auto j = nlohmann::json::parse(in);
    spec.trace_round = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(j.at("round").get<double>()));
    for (auto& [name, bytes] : j.at("titles").items())
        spec.traces[name] = bytes.get<std::vector<std::uint64_t>>();
    return true;
}

// One option `a` with its value `v`; an exit code on a usage error. Bad numbers throw.
std::optional<int> apply_option(const std::string& a, const std::string& v, Command& c) {
    auto& spec = c.spec;
    auto duration = [&](const std::string& name) {
        auto d = parse_duration(v);
        if (!d) throw std::invalid_argument("bad " + name + " '" + v + "'");
        return std::chrono::duration<double>(*d).count();
    };
    if (a == "--server") {
        auto e = parse_endpoint(v);
        if (!e) return usage_error("bad --server '" + v + "' (HOST:PORT)");
        const auto host = e->host == "localhost" ? std::string("127.0.0.1") : e->host;
        if (spec.port == 0) {
            spec.host = host;
            spec.port = e->port;
        } else {
            spec.more_servers.emplace_back(host, e->port);
        }
    } else if (a == "--tier") {
        spec.tier_ids = split(v, ',');
    } else if (a == "--block-size") {
        spec.block_size = std::stoull(v);
    } else if (a == "--placement") {
        auto p = parse_tier_placement(v);
        if (!p) return usage_error("bad --placement '" + v + "' (block, title)");
        spec.tier_placement = *p;
    } else if (a == "--ties") {
        if (v != "split" && v != "first") return usage_error("bad --ties '" + v + "' (split, first)");
        spec.ties_to_first = v == "first";
    } else if (a == "--loads") {
        if (v != "aged" && v != "fresh") return usage_error("bad --loads '" + v + "' (aged, fresh)");
        spec.loads_fresh = v == "fresh";
    } else if (a == "--replicas") {
        spec.tier_replicas = static_cast<std::uint32_t>(std::stoul(v));
    } else if (a == "--retry-for") {
        spec.retry_for = duration("--retry-for");
    } else if (a == "--titles") {
        spec.titles = split(v, ',');
    } else if (a == "--titles-file") {
        if (!read_titles_file(v, spec)) return usage_error("cannot read --titles-file '" + v + "'");
    } else if (a == "--bitrate") {
        auto r = parse_bitrate(v);
        if (!r || r->value() == 0) return usage_error("bad --bitrate '" + v + "'");
        spec.bitrate = *r;
        c.have_bitrate = true;
    } else if (a == "--time-slice") {
        auto d = parse_duration(v);
        if (!d || d->count() <= 0) return usage_error("bad --time-slice '" + v + "'");
        spec.time_slice = *d;
    } else if (a == "--traces") {
        if (!read_traces(v, spec)) return usage_error("cannot read --traces '" + v + "'");
    } else if (a == "--arrival") {
        auto p = parse_arrivals(v);
        if (!p) return usage_error("bad --arrival '" + v + "' (ramp:DUR or poisson:DUR)");
        spec.arrivals = *p;
    } else if (a == "--pick") {
        auto p = parse_pick(v);
        if (!p) return usage_error("bad --pick '" + v + "' (distinct, weighted, zipf:S)");
        spec.pick = *p;
    } else if (a == "--watch") {
        spec.watch = duration("--watch");
    } else if (a == "--seed") {
        spec.seed = std::stoull(v);
    } else if (a == "--viewers") {
        c.viewers = std::stoul(v);
    } else if (a == "--search") {
        auto parts = split(v, ':');
        if (parts.size() != 2) return usage_error("bad --search '" + v + "' (LO:HI)");
        c.search = std::make_pair(std::stoul(parts[0]), std::stoul(parts[1]));
        if (c.search->first >= c.search->second) return usage_error("--search needs LO < HI");
    } else if (a == "--precision") {
        c.precision = std::max<std::size_t>(1, std::stoul(v));
    } else if (a == "--settle") {
        c.settle = duration("--settle");
    } else if (a == "--slack") {
        spec.slack = duration("--slack");
    } else if (a == "--path") {
        spec.path_prefix = v;
    } else {
        return usage_error("unknown option '" + a + "'");
    }
    return std::nullopt;
}

// Reads the command line into `c`; an exit code when the program ends here (--help, a usage error).
std::optional<int> parse_command_line(const std::vector<std::string>& args, Command& c) {
    try {
        for (std::size_t i = 0; i < args.size(); ++i) {
            const auto& a = args[i];
            if (a == "--help") {
                std::fputs(kUsage, stdout);
                return 0;
            }
            if (i + 1 >= args.size()) return usage_error(a + " needs a value");
            if (auto exit_code = apply_option(a, args[++i], c)) return exit_code;
        }
    } catch (const std::exception& e) {
        return usage_error(e.what());
    }
    auto& spec = c.spec;
    if (spec.port == 0) return usage_error("--server HOST:PORT is required");
    if (spec.titles.empty()) return usage_error("no titles (--titles or --titles-file)");
    if (!c.have_bitrate) return usage_error("--bitrate is required");
    if (!c.viewers == !c.search) return usage_error("give exactly one of --viewers and --search");
    if (!spec.tier_ids.empty()) {
        if (spec.tier_ids.size() != spec.more_servers.size() + 1)
            return usage_error("--tier names " + std::to_string(spec.tier_ids.size()) + " nodes for " +
                               std::to_string(spec.more_servers.size() + 1) + " servers");
        if (spec.block_size == 0) return usage_error("--tier needs --block-size");
        if (spec.tier_replicas == 0) return usage_error("--replicas must be at least 1");
    }
    if (spec.weights.size() != spec.titles.size()) spec.weights.assign(spec.titles.size(), 1.0);
    const std::size_t most = c.search ? c.search->second : *c.viewers;
    if (spec.pick.kind == Pick::Kind::distinct && most > spec.titles.size())
        return usage_error("--pick distinct needs a title per viewer: " + std::to_string(most) +
                           " viewers, " + std::to_string(spec.titles.size()) + " titles");
    return std::nullopt;
}

// --search: the most viewers that pass, by binary search between LO (should pass) and HI.
int search_capacity(const Command& c) {
    auto [lo, hi] = *c.search;
    while (hi - lo > c.precision) {
        const std::size_t mid = lo + (hi - lo) / 2;
        auto r = run_trial(c.spec, mid);
        report(r);
        (r.passed() ? lo : hi) = mid;
        std::this_thread::sleep_for(std::chrono::duration<double>(c.settle));
    }
    nlohmann::json summary;
    summary["max_viewers"] = lo;
    summary["first_failing"] = hi;
    std::cout << summary.dump() << std::endl;
    std::fprintf(stderr, "search: %zu viewers pass, %zu fail\n", lo, hi);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Command c;
    if (auto exit_code = parse_command_line(std::vector<std::string>(argv + 1, argv + argc), c))
        return *exit_code;
    if (c.search) return search_capacity(c);
    auto r = run_trial(c.spec, *c.viewers);
    report(r);
    return r.passed() ? 0 : 1;
}
