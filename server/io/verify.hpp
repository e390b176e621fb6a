// `toast-server verify`: re-reads every replica of every block (or of one title) and checks sizes and chunk
// checksums against the manifest, whatever the running server has already verified.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/core/server_config.hpp"

namespace toast::server {

struct VerifyReport {
    std::vector<std::string> problems;  // missing or corrupt replicas, unreadable manifests, unknown title
    std::vector<std::string> notes;     // harmless: stale manifest copies that the next ingest repairs
    std::size_t titles = 0;
    std::size_t blocks = 0;
    std::size_t replicas = 0;         // on this node's disks
    std::size_t remote_replicas = 0;  // blocks read from other nodes of the tier (verify_tier)
    std::size_t nodes = 0;            // other nodes asked
    std::uint64_t bytes = 0;
    bool clean() const { return problems.empty(); }
};

VerifyReport verify_store(const ServerConfig& config, const std::optional<std::string>& title = std::nullopt);

}  // namespace toast::server
