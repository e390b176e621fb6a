// Run-time view and control of the store's disks, for the admin endpoint (fault injection) and metrics.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "server/core/server_config.hpp"

namespace toast::server {

struct DiskStatus {
    std::size_t index = 0;  // position in the config's `disks`
    std::string id;         // the disk's stable identity (its disk id file), "" before first use
    std::string path;
    DiskFault fault;
    std::size_t queue_depth = 0;        // reads queued or in service
    std::uint64_t queued_bytes = 0;     // their bytes
    double service_seconds_per_mb = 0;  // observed service time, the replica chooser's weight
    // The fitted service model behind it: a read of B bytes takes access_seconds + B * seconds_per_byte.
    double access_seconds = 0;
    double seconds_per_byte = 0;
    std::uint64_t bytes_read = 0;
    std::uint64_t reads = 0;
};

class DiskControl {
  public:
    virtual ~DiskControl() = default;
    virtual std::vector<DiskStatus> disk_status() const = 0;
    // False when `disk` is out of range. Takes effect for reads queued after the call.
    virtual bool set_fault(std::size_t disk, const DiskFault& fault) = 0;
};

}  // namespace toast::server
