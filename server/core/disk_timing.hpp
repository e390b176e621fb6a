// How long an emulated disk takes to serve one read: the emulation sleeps until that much time has passed
// since the read started, whatever the real disk took. Pure.
//
// Plug-in point for other disk models (a seek time that grows with the distance from the head): implement
// DiskTimingModel and pass a factory in BlockStoreOptions.
#pragma once

#include <chrono>
#include <cstdint>

#include "toast/common/units.hpp"

namespace toast::server {

class DiskTimingModel {
  public:
    virtual ~DiskTimingModel() = default;
    // `head`: where the previous read on this disk ended; `position`: where this one starts (logical
    // addresses, see disk_address()); `bytes`: what it reads, fail-stutter bytes included.
    virtual std::chrono::nanoseconds service_time(std::uint64_t head, std::uint64_t position,
                                                  std::uint64_t bytes) const = 0;
};

// The thesis's disk (§3.1): every read costs the access time t_a plus bytes / r_d, wherever it lies.
class AccessTransferTiming final : public DiskTimingModel {
  public:
    AccessTransferTiming(std::chrono::nanoseconds access_time, BitRate transfer_rate)
        : access_time_(access_time), transfer_rate_(transfer_rate) {}
    std::chrono::nanoseconds service_time(std::uint64_t, std::uint64_t, std::uint64_t bytes) const override {
        return access_time_ + duration_of(Bytes(bytes), transfer_rate_);
    }

  private:
    std::chrono::nanoseconds access_time_;
    BitRate transfer_rate_;
};

}  // namespace toast::server
