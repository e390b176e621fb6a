#include "server/app/config_reload.hpp"

#include <spdlog/spdlog.h>

#include "server/core/reload_plan.hpp"
#include "toast/common/log.hpp"

namespace toast::server {

namespace {

std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines)
        out += (out.empty() ? "" : "; ") + l;
    return out;
}

}  // namespace

ConfigReloader::ConfigReloader(std::filesystem::path path, ServerConfig in_force, BlockStore& store,
                               HttpService& http, MetricsRegistry& metrics)
    : path_(std::move(path)),
      in_force_(std::move(in_force)),
      store_(store),
      http_(http),
      ok_(metrics.counter("toast_server_config_reloads_total", "Config reloads (SIGHUP) by result",
                          {{"result", "ok"}})),
      failed_(metrics.counter("toast_server_config_reloads_total", "Config reloads (SIGHUP) by result",
                              {{"result", "failed"}})) {}

void ConfigReloader::reload() {
    ServerConfig loaded;
    try {
        loaded = load_server_config_file(path_);
    } catch (const std::exception& e) {
        const auto titles = store_.rescan();
        spdlog::error("reload: {} not applied, nothing changed: {} (catalogue re-read: {} titles)", path_.string(),
                      e.what(), titles);
        failed_.inc();
        return;
    }
    auto plan = plan_reload(in_force_, loaded);
    if (plan.log_level) spdlog::set_level(*parse_log_level(plan.in_force.log_level));
    for (auto d : plan.faults)
        store_.set_fault(d, plan.in_force.disks[d].fault);
    auto problems = http_.reload(plan.in_force);
    if (!problems.empty() && plan.access_log) plan.in_force.access_log = in_force_.access_log;  // retried next time
    const auto titles = store_.rescan();
    in_force_ = std::move(plan.in_force);

    spdlog::info("reload: {}{} (catalogue re-read: {} titles)", path_.string(),
                 plan.applied.empty() ? ": nothing to change" : ": " + join(plan.applied), titles);
    for (const auto& line : plan.not_applied)
        spdlog::warn("reload: not applied: {}", line);
    for (const auto& line : problems)
        spdlog::error("reload: {}", line);
    (plan.not_applied.empty() && problems.empty() ? ok_ : failed_).inc();
}

}  // namespace toast::server
