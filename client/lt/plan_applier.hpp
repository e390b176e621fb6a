// PieceControl on a libtorrent torrent_handle: the PlanApplier's three calls (core/plan_applier.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include <libtorrent/torrent_handle.hpp>

#include "client/core/plan_applier.hpp"

namespace toast::client {

class LtPieceControl final : public PieceControl {
  public:
    explicit LtPieceControl(libtorrent::torrent_handle handle) : handle_(std::move(handle)) {}
    void prioritize(const std::vector<std::pair<PieceIndex, std::uint8_t>>& changes) override;
    void set_deadline(PieceIndex piece, std::chrono::milliseconds deadline) override;
    void reset_deadline(PieceIndex piece) override;

  private:
    libtorrent::torrent_handle handle_;
};

}  // namespace toast::client
