#include "client/lt/stats_file.hpp"

#include <stdexcept>

namespace toast::client {

StatsFile::StatsFile(const std::filesystem::path& path) : path_(path), out_(path, std::ios::trunc) {
    if (!out_) throw std::runtime_error("cannot write the stats file " + path.string());
}

void StatsFile::write(const StatsRecord& record) {
    out_ << to_json_line(record);
    out_.flush();
}

}  // namespace toast::client
