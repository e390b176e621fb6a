// Writes a title's stats records as JSON lines (common/docs/client-stats.md): one line per record, flushed
// at once so the testbed can follow the file while the client runs.
#pragma once

#include <filesystem>
#include <fstream>

#include "client/core/stats.hpp"

namespace toast::client {

class StatsFile {
  public:
    // Creates (truncates) `path`, then appends to it (a copytruncate rotation is safe). Throws
    // std::runtime_error naming it when it cannot be written.
    explicit StatsFile(const std::filesystem::path& path);
    void write(const StatsRecord& record);

  private:
    std::filesystem::path path_;
    std::ofstream out_;
};

}  // namespace toast::client
