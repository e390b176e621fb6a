// One load-generator trial: N viewers of paced streams against a server, each judged by its Playback, and
// what they saw added up. Also the server's per-disk counters read from /metrics around the trial.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/bench/loadgen/playback.hpp"
#include "server/bench/loadgen/workload.hpp"
#include "toast/common/tier.hpp"
#include "toast/common/units.hpp"

namespace toast::loadgen {

struct TrialSpec {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    // More servers (a tier's nodes): viewer i asks server i mod N, the first being host:port.
    std::vector<std::pair<std::string, std::uint16_t>> more_servers;
    // Direct viewers (direct_viewer.hpp): the tier's node ids, one per server in order (the first server's
    // first); empty: /stream viewers. Blocks of block_size bytes, `tier_replicas` holders each.
    std::vector<std::string> tier_ids;
    std::uint64_t block_size = 0;
    std::uint32_t tier_replicas = 2;
    TierPlacement tier_placement = TierPlacement::block;
    bool ties_to_first = false;  // direct viewers draw with tie-break 0 (the first holder with any weight)
    bool loads_fresh = false;    // direct viewers take every load as just heard (no weighing by age)
    // A refused viewer (503) asks again after its Retry-After (at least 1 s), as players do, for this long
    // after its first request; 0: it gives up at once.
    double retry_for = 0;
    std::string path_prefix = "/stream/";
    std::vector<std::string> titles;
    std::vector<double> weights;  // one per title
    // Playback: constant rate unless the title has a trace here (bytes per round, `trace_round` rounds).
    BitRate bitrate{0};
    std::chrono::nanoseconds time_slice{std::chrono::seconds(5)};  // initial buffer = one round
    std::map<std::string, std::vector<std::uint64_t>> traces;
    std::chrono::nanoseconds trace_round{0};
    Arrivals arrivals;
    Pick pick;
    std::uint64_t seed = 1;
    std::optional<double> watch;  // seconds of playback per viewer; nullopt: the whole title
    double slack = 30;            // seconds a viewer may overrun its schedule before it is cut off
};

struct TrialResult {
    std::size_t viewers = 0;
    std::size_t admitted = 0;      // 200 answers
    std::size_t refused = 0;       // viewers refused for good (503, no retry left)
    std::size_t refusals = 0;      // 503 answers, retried ones included
    std::size_t redirects = 0;     // 307 answers followed (a tier node sending the viewer to another)
    std::size_t peak_streams = 0;  // the most viewers receiving their streams at once
    double median_streams = 0;     // the median of once-a-second counts while any viewer was streaming
    std::size_t errors = 0;        // anything else: other statuses, broken connections, cut off
    std::size_t starved = 0;       // admitted viewers that starved at least once after starting
    std::size_t stalls = 0;
    double stall_seconds = 0;
    double stall_max = 0;
    std::vector<double> start_latencies;  // of viewers that started
    std::vector<double> retry_after;      // seconds, of refused viewers that were told
    std::vector<std::string> error_samples;
    double seconds = 0;  // wall time of the trial
    // Per disk, from /metrics (empty when the scrape failed); with several servers, every server's disks in
    // turn, and each server's totals in node_reads and node_bytes.
    std::vector<std::uint64_t> disk_reads;
    std::vector<std::uint64_t> disk_bytes;
    std::vector<std::uint64_t> node_reads;
    std::vector<std::uint64_t> node_bytes;
    // Direct viewers on two nodes or more: each second, the requests the most asked node got over the
    // nodes' mean (1: even), over the seconds with at least 10 requests a node on average; median and
    // 90th percentile (0 when not measured).
    double ask_peak_median = 0;
    double ask_peak_p90 = 0;

    bool passed() const { return errors == 0 && starved == 0 && admitted > 0; }
};

TrialResult run_trial(const TrialSpec& spec, std::size_t viewers);

// The numeric samples of a Prometheus text page, keyed by the metric name with its labels as written
// ("toast_disk_reads_total{disk=\"0\"}"). Empty on any failure.
std::map<std::string, double> scrape_metrics(const std::string& host, std::uint16_t port);

}  // namespace toast::loadgen
