#include "client/lt/stats_file.hpp"

#include <stdexcept>

namespace toast::client {

StatsFile::StatsFile(const std::filesystem::path& path) : path_(path) {
    // Emptied once, then appended to: each line goes to the file's end as it is then (O_APPEND), so the file
    // of a client that runs for months (the operator's seed) can be rotated with logrotate's copytruncate
    // without the next line leaving a hole of the old size before it.
    std::ofstream(path, std::ios::trunc).close();
    out_.open(path, std::ios::app);
    if (!out_) throw std::runtime_error("cannot write the stats file " + path.string());
}

void StatsFile::write(const StatsRecord& record) {
    out_ << to_json_line(record);
    out_.flush();
}

}  // namespace toast::client
