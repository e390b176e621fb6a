// What SIGHUP can change in a running server. The adapter re-reads the config file; plan_reload compares it
// with the configuration in force and says, field by field, what it will apply and what needs a restart.
// Pure: two configs in, a plan out.
//
// Applied at once: log_level; each disk's fault when the file's value changed (a fault set through the admin
// API stays until the file changes it); the HTTP limits (max_connections, idle_timeout, header_limit,
// max_pipelined, max_ranges, max_multipart_bytes) and time_slice, for connections and streams that start
// afterwards; the access log (re-opened on every reload, so logrotate can move it away). The catalogue is
// re-scanned on every reload whatever the file says. Also applied: the signed-URL keys, signing key and
// revoked subscribers ("access"), the telemetry limits, and the TLS certificate and key (read again on every
// reload). Needs a restart: tls added or removed, listen, admin_listen, io_threads, the
// disks' number, paths, emulation and workers, open_files, service_model_half_life. Only ingest uses policy,
// placement_seed, block_size, default_bitrate, piece_size and public_url, and ingest reads the file itself.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "server/core/server_config.hpp"

namespace toast::server {

struct ReloadPlan {
    ServerConfig in_force;                 // the running config with every applicable change made
    bool log_level = false;                // apply in_force.log_level
    std::vector<std::size_t> faults;       // disks whose fault to set to in_force.disks[d].fault
    bool http_limits = false;              // publish in_force's limits to the HTTP layer
    bool access_log = false;               // open in_force.access_log instead of the running one
    bool tls = false;                      // load in_force.tls's certificate and key again
    std::vector<std::string> applied;      // "log_level: info -> debug", one per change
    std::vector<std::string> not_applied;  // "listen: 127.0.0.1:8080 -> 0.0.0.0:8080 (needs a restart)"
};

// `running` is the configuration in force (what the last load or reload produced), `loaded` the file as
// read now.
ReloadPlan plan_reload(const ServerConfig& running, const ServerConfig& loaded);

}  // namespace toast::server
