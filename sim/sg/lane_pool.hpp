// Mailboxes for one transfer each (sim/sg/transfer.hpp), reused once both sides of the transfer are done
// (SimGrid keeps every mailbox it has named until the end). Internal to sim/sg.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

namespace toast::sim {

class LanePool {
  public:
    simgrid::s4u::Mailbox* take() {
        if (free_.empty()) return simgrid::s4u::Mailbox::by_name("lane" + std::to_string(named_++));
        auto* m = free_.back();
        free_.pop_back();
        return m;
    }
    void give(simgrid::s4u::Mailbox* m) { free_.push_back(m); }
    std::size_t named() const { return named_; }

  private:
    std::vector<simgrid::s4u::Mailbox*> free_;
    std::size_t named_ = 0;
};

}  // namespace toast::sim
