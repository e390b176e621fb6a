#include "server/core/reload_plan.hpp"

#include <cstdio>

namespace toast::server {

namespace {

std::string seconds(std::chrono::nanoseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%gs", std::chrono::duration<double>(d).count());
    return buf;
}

std::string fault_text(const DiskFault& f) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "{stutter_pct %g, added_latency %s, offline %s}", f.stutter_pct,
                  seconds(f.added_latency).c_str(), f.offline ? "true" : "false");
    return buf;
}

std::string endpoint_text(const std::optional<Endpoint>& e) {
    return e ? e->to_string() : "(none)";
}
std::string path_text(const std::optional<std::filesystem::path>& p) {
    return p ? p->string() : "(none)";
}

class Planner {
  public:
    explicit Planner(ReloadPlan& plan) : plan_(plan) {}

    // Records a change of `field` as applied or not; true when it changed.
    template <class T, class Show>
    bool compare(const std::string& field, const T& before, const T& after, bool applies, Show show) {
        if (before == after) return false;
        auto line = field + ": " + show(before) + " -> " + show(after);
        if (applies) {
            plan_.applied.push_back(std::move(line));
        } else {
            plan_.not_applied.push_back(std::move(line) + " (needs a restart)");
        }
        return true;
    }

  private:
    ReloadPlan& plan_;
};

// Signed URLs, telemetry limits and TLS: what a reload changes of who may ask and how.
void plan_access_reload(const ServerConfig& running, const ServerConfig& loaded, ReloadPlan& plan) {
    auto& c = plan.in_force;
    // Signed URLs: the keys (never shown, only their ids), the signing key and the revoked subscribers apply
    // to the next request.
    auto key_ids = [](const AccessPolicy& a) {
        std::string ids;
        for (const auto& k : a.keys)
            ids += (ids.empty() ? "" : ",") + k.id;
        return ids.empty() ? std::string("(none)") : ids;
    };
    if (!(running.access == loaded.access)) {
        std::string line = "access: keys " + key_ids(running.access) + " -> " + key_ids(loaded.access);
        if (running.access.keys != loaded.access.keys && key_ids(running.access) == key_ids(loaded.access))
            line += " (secrets changed)";
        if (running.access.signing_key != loaded.access.signing_key)
            line += ", signing " + running.access.signing_key + " -> " + loaded.access.signing_key;
        if (running.access.revoked_subscribers != loaded.access.revoked_subscribers)
            line += ", revoked subscribers " + std::to_string(running.access.revoked_subscribers.size()) +
                    " -> " + std::to_string(loaded.access.revoked_subscribers.size());
        plan.applied.push_back(std::move(line));
        c.access = loaded.access;
        plan.http_limits = true;
    }
    if (!(running.telemetry == loaded.telemetry)) {
        plan.applied.push_back("telemetry limits changed");
        c.telemetry = loaded.telemetry;
        plan.http_limits = true;
    }
    // The certificate and key are read again on every reload (renewed certificates keep their paths); a
    // change between TLS and plain HTTP needs a restart.
    if (running.tls.has_value() != loaded.tls.has_value()) {
        plan.not_applied.push_back(std::string("tls ") + (loaded.tls ? "added" : "removed") +
                                   " (needs a restart)");
    } else if (loaded.tls) {
        if (!(*running.tls == *loaded.tls))
            plan.applied.push_back("tls: " + running.tls->certificate_chain.string() + " -> " +
                                   loaded.tls->certificate_chain.string());
        c.tls = loaded.tls;
        plan.tls = true;
    }
}

}  // namespace

ReloadPlan plan_reload(const ServerConfig& running, const ServerConfig& loaded) {
    ReloadPlan plan;
    plan.in_force = running;
    auto& c = plan.in_force;
    Planner p(plan);
    auto text = [](const auto& v) { return std::string(v); };
    auto number = [](const auto& v) { return std::to_string(v); };
    auto bytes = [](const Bytes& b) { return std::to_string(b.value()); };

    if (p.compare("log_level", running.log_level, loaded.log_level, true, text)) {
        c.log_level = loaded.log_level;
        plan.log_level = true;
    }

    // Limits that new connections, requests and streams read.
    bool limits = false;
    limits |= p.compare("max_connections", running.max_connections, loaded.max_connections, true, number);
    limits |= p.compare("idle_timeout", running.idle_timeout, loaded.idle_timeout, true, seconds);
    limits |= p.compare("header_limit", running.header_limit, loaded.header_limit, true, number);
    limits |= p.compare("max_pipelined", running.max_pipelined, loaded.max_pipelined, true, number);
    limits |= p.compare("max_ranges", running.max_ranges, loaded.max_ranges, true, number);
    limits |= p.compare("max_multipart_bytes", running.max_multipart_bytes, loaded.max_multipart_bytes, true,
                        bytes);
    limits |= p.compare("time_slice", running.time_slice, loaded.time_slice, true, seconds);
    if (limits) {
        c.max_connections = loaded.max_connections;
        c.idle_timeout = loaded.idle_timeout;
        c.header_limit = loaded.header_limit;
        c.max_pipelined = loaded.max_pipelined;
        c.max_ranges = loaded.max_ranges;
        c.max_multipart_bytes = loaded.max_multipart_bytes;
        c.time_slice = loaded.time_slice;
        plan.http_limits = true;
    }

    if (p.compare("access_log.path", running.access_log, loaded.access_log, true, path_text)) {
        c.access_log = loaded.access_log;
        plan.access_log = true;
    }

    // Disks: faults apply; the disks themselves are fixed while serving.
    if (running.disks.size() != loaded.disks.size()) {
        plan.not_applied.push_back("disks: " + std::to_string(running.disks.size()) + " -> " +
                                   std::to_string(loaded.disks.size()) + " disks (needs a restart)");
    }
    for (std::size_t d = 0; d < running.disks.size() && d < loaded.disks.size(); ++d) {
        const auto& before = running.disks[d];
        const auto& after = loaded.disks[d];
        const auto name = "disks[" + std::to_string(d) + "]";
        if (p.compare(name + ".fault", before.fault, after.fault, true, fault_text)) {
            c.disks[d].fault = after.fault;
            plan.faults.push_back(d);
        }
        p.compare(name + ".path", before.path, after.path, false,
                  [](const std::filesystem::path& x) { return x.string(); });
        p.compare(name + ".workers", before.workers, after.workers, false, number);
        const bool emulated_before = before.emulation.has_value(),
                   emulated_after = after.emulation.has_value();
        if (emulated_before != emulated_after ||
            (emulated_before && (before.emulation->access_time != after.emulation->access_time ||
                                 before.emulation->transfer_rate != after.emulation->transfer_rate))) {
            plan.not_applied.push_back(name + ".emulate changed (needs a restart)");
        }
    }

    p.compare("listen", running.listen, loaded.listen, false,
              [](const Endpoint& e) { return e.to_string(); });
    p.compare("admin_listen", running.admin_listen, loaded.admin_listen, false, endpoint_text);
    p.compare("io_threads", running.io_threads, loaded.io_threads, false, number);
    p.compare("open_files", running.open_files, loaded.open_files, false, number);
    p.compare("service_model_half_life", running.service_model_half_life, loaded.service_model_half_life,
              false, seconds);
    // Every disk queue and the admission ledger are built with these at start-up.
    p.compare("disk_order", running.disk_order, loaded.disk_order, false,
              [](QueueOrder o) { return std::string(to_string(o)); });
    if (!(running.admission == loaded.admission))
        plan.not_applied.push_back("admission changed (needs a restart)");
    // The tier client (its peers, timeouts and connections) is built at start-up; ingest reads the tier too.
    if (!(running.tier == loaded.tier)) plan.not_applied.push_back("tier changed (needs a restart)");

    plan_access_reload(running, loaded, plan);
    return plan;
}

}  // namespace toast::server
