// SIGHUP for `toast-server serve`: re-reads the config file, applies what plan_reload() allows (log level,
// changed disk faults, HTTP limits, the access log), re-scans the catalogue, and logs one line with every
// change and one line for each thing it could not apply. A file that does not load changes nothing but the
// catalogue, and says why. toast_server_config_reloads_total{result} counts reloads: "failed" when the file did
// not load or anything was not applied.
#pragma once

#include <filesystem>

#include "server/core/server_config.hpp"
#include "server/http/http_service.hpp"
#include "server/io/block_store.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

class ConfigReloader {
  public:
    ConfigReloader(std::filesystem::path path, ServerConfig in_force, BlockStore& store, HttpService& http,
                   MetricsRegistry& metrics);
    void reload();

  private:
    std::filesystem::path path_;
    ServerConfig in_force_;
    BlockStore& store_;
    HttpService& http_;
    Counter& ok_;
    Counter& failed_;
};

}  // namespace toast::server
