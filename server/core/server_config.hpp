// toast-server's one typed configuration, loaded from JSON and validated once at start-up.
// docs/server.md describes every field (tier: docs/server-storage.md; demand and push:
// docs/server-catalogue.md); the defaults are the ones written here.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/access_policy.hpp"
#include "server/core/push_config.hpp"
#include "server/core/tier_config.hpp"
#include "toast/common/endpoint.hpp"
#include "toast/common/units.hpp"

namespace toast {
class ConfigReader;
}

namespace toast::server {

enum class PlacementPolicy { naive, raid0, raid1, random, rda };
std::optional<PlacementPolicy> parse_placement_policy(std::string_view text);
std::string_view to_string(PlacementPolicy p);

// The order each disk serves its queue in (disk_orders.hpp).
enum class QueueOrder { fifo, cscan, edf };
std::optional<QueueOrder> parse_queue_order(std::string_view text);
std::string_view to_string(QueueOrder order);

// When an admitted stream starts (seed 004 §3; admission.hpp).
enum class StartPolicy { greedy, minimal_load, last_scheduled };
std::optional<StartPolicy> parse_start_policy(std::string_view text);
std::string_view to_string(StartPolicy policy);

// Admission control for paced streams (config `admission`): a /stream is admitted only if, in every round
// of time_slice it will last, each disk's reserved read time stays within disk_share of the round, the sent
// bytes within `network` and the held bytes within `buffer`; otherwise 503 with Retry-After.
struct AdmissionConfig {
    // On unless the config says "admission": {"enabled": false}: without it, more viewers than the disks
    // carry all get 200 and all of them starve.
    bool enabled = true;
    // The whole round: every read of a round is released one round before it is sent and all have the same
    // relative deadline, so the disk's FIFO serves them in deadline order and reads that fit in the round are
    // done in time; the costs come from each disk's service model fitted to its own reads. A lower share
    // leaves headroom for a disk the fitted model does not follow.
    double disk_share = 1.0;
    BitRate network{0};  // 0: no limit
    Bytes buffer{0};     // 0: no limit
    // A stream may start this much later than asked; none: one time_slice, so that a stream that does not fit
    // in what is left of the current round waits for the next one instead of being refused.
    std::optional<std::chrono::nanoseconds> start_latency;
    StartPolicy start_policy = StartPolicy::greedy;
    bool reserve_peak = false;  // reserve every round at the schedule's peak instead of round by round
    bool operator==(const AdmissionConfig&) const = default;
};

// Faults injected into one disk (thesis §4.3); also settable at run time through the admin endpoint.
struct DiskFault {
    double stutter_pct = 0;  // read this % of extra useless data with every request (fail-stutter)
    std::chrono::nanoseconds added_latency{0};
    bool offline = false;
    bool operator==(const DiskFault&) const = default;
};

// Emulated-disk timing: each read costs t_a + bytes / r_d on the disk's own clock (disk_model.hpp). With a
// full-stroke seek time the access time depends on how far the head moves (t_a stays the mean over random
// positions), so the order in which the queue is served matters.
struct DiskEmulation {
    std::chrono::nanoseconds access_time{0};  // t_a
    BitRate transfer_rate{0};                 // r_d
    std::chrono::nanoseconds full_seek{0};    // 0: every access costs t_a
};

struct DiskConfig {
    std::filesystem::path path;
    unsigned workers = 1;
    std::optional<DiskEmulation> emulation;
    DiskFault fault;
};

// Bounds shared by the config file and the ingest command line. Blocks: what ingest accepts (a block is read
// whole into memory at ingest and placed as one file). Bitrates: from an audio stream to far beyond 8K video.
inline constexpr Bytes kMinBlockSize{4 * 1024};
inline constexpr Bytes kMaxBlockSize{256 * 1024 * 1024};
inline constexpr BitRate kMinBitrate{1'000};
inline constexpr BitRate kMaxBitrate{100'000'000'000};

// TLS on the main listener (config "tls"): PEM files, read at start-up and again on SIGHUP (a renewed
// certificate applies to new connections).
struct TlsConfig {
    std::filesystem::path certificate_chain;  // the server's certificate first, then intermediates
    std::filesystem::path private_key;
    bool operator==(const TlsConfig&) const = default;
};

// Boxes' QoE reports (POST /telemetry): bounded in size and rate, per subscriber and overall.
struct TelemetryConfig {
    bool enabled = true;
    std::size_t max_body = 8 * 1024;        // bytes; larger reports are refused (413)
    double per_subscriber_per_minute = 6;   // sustained reports a subscriber may send
    std::size_t per_subscriber_burst = 10;  // reports a subscriber may send at once
    double overall_per_second = 200;        // every subscriber together
    std::size_t overall_burst = 400;
    std::size_t tracked_subscribers = 100'000;  // rate-limit buckets kept; the longest idle go first
    bool operator==(const TelemetryConfig&) const = default;
};

struct ServerConfig {
    Endpoint listen{"127.0.0.1", 8080};
    std::vector<DiskConfig> disks;
    PlacementPolicy policy = PlacementPolicy::rda;
    std::string public_url;  // base URL written into torrents; default "http://" + listen
    std::uint64_t placement_seed = 1;

    // Block size for ingest: block_size if set, else bitrate x time_slice (the thesis's r_c * t_b).
    std::chrono::nanoseconds time_slice = std::chrono::seconds(5);  // t_b
    std::optional<Bytes> block_size;
    QueueOrder disk_order = QueueOrder::fifo;
    BitRate default_bitrate{2'000'000};
    Bytes piece_size{256 * 1024};  // torrent piece size
    // Defaults of ingest's --private and --peer-ca: torrents private (BEP 27), and the CA certificate whose
    // signed certificates the peers of every new title's swarm must present (an SSL torrent).
    bool private_torrents = false;
    std::optional<std::filesystem::path> peer_ca;

    // Block files the store keeps open (for sendfile and to skip open() per read); lowered at start-up when
    // RLIMIT_NOFILE cannot hold them next to max_connections sockets.
    std::size_t open_files = 4096;
    // A disk's learned service time fades back to its prior with this half-life while the disk serves no
    // reads (after a grace of a tenth of it), so a disk avoided as slow is tried again once it may have
    // recovered.
    std::chrono::nanoseconds service_model_half_life = std::chrono::seconds(10);

    // HTTP
    unsigned io_threads = 1;
    std::size_t max_connections = 1024;
    std::chrono::nanoseconds idle_timeout = std::chrono::seconds(30);  // keep-alive and header reads
    std::size_t header_limit = 8 * 1024;
    std::size_t max_pipelined = 16;               // queued requests per connection
    std::size_t max_ranges = 16;                  // more ranges than this: the Range header is ignored
    Bytes max_multipart_bytes{64 * 1024 * 1024};  // total of a multipart/byteranges answer, else ignored
    std::optional<Endpoint> admin_listen;  // separate admin listener; admin routes always loopback-only
    std::optional<std::filesystem::path> access_log;  // one line per request (toast/common/access_log.hpp)

    AdmissionConfig admission;
    // This node's tier (config `tier`); none: a server on its own, holding every block of every title.
    std::optional<TierConfig> tier;
    DemandConfig demand;  // each title's demand in the catalogue
    PushConfig push;      // pre-placement on idle boxes; disabled unless the config has a "push" object

    // Signed URLs: no keys, every content route answers everyone.
    AccessPolicy access;
    std::optional<TlsConfig> tls;
    TelemetryConfig telemetry;

    std::string log_level = "info";
};

// Reads the fields of a fault object ("stutter_pct", "added_latency", "offline") into `fault`; absent fields
// keep their value. Shared by the config file and the admin route, so both accept exactly the same values.
// Throws ConfigError naming the field.
void read_disk_fault(toast::ConfigReader& reader, DiskFault& fault);

// The disks' paths in the config's order.
std::vector<std::filesystem::path> disk_paths(const ServerConfig& config);

// Throws ConfigError naming the field and the value.
ServerConfig load_server_config(const nlohmann::json& json);
ServerConfig load_server_config_file(const std::filesystem::path& path);

}  // namespace toast::server
