// What the server fuzz targets stand in for the block store: two disks that take any fault, and the answer
// of a store that reads nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "server/core/disk_control.hpp"
#include "server/core/title_store.hpp"

namespace toast::fuzz {

// A read that failed with `message` (500 for that request only).
inline server::ReadResult failed_read(std::string message) {
    server::ReadResult r;
    r.status = server::ReadStatus::io_error;
    r.message = std::move(message);
    return r;
}

class TwoDisks : public server::DiskControl {
  public:
    TwoDisks() : disks_{disk(0, "d0", "/d0"), disk(1, "d1", "/d1")} {}
    std::vector<server::DiskStatus> disk_status() const override { return disks_; }
    bool set_fault(std::size_t disk, const server::DiskFault& fault) override {
        if (disk >= disks_.size()) return false;
        disks_[disk].fault = fault;
        return true;
    }

  private:
    static server::DiskStatus disk(std::size_t index, const char* id, const char* path) {
        server::DiskStatus d;
        d.index = index;
        d.id = id;
        d.path = path;
        return d;
    }
    std::vector<server::DiskStatus> disks_;
};

}  // namespace toast::fuzz
