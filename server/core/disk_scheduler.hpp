// The order in which one disk serves its queued reads. The block store keeps one scheduler per disk and asks
// it, each time a worker is free, which read to serve next; the scheduler sees only what a disk scheduler
// needs to know about a read (its size, where on the disk it lies, when it arrived, and when its bytes are
// needed), never the read itself. Pure and single-threaded: the store calls it under the disk's queue lock.
//
// Plug-in point for other orders (a C-SCAN sweep by position, earliest deadline first): implement
// DiskScheduler and pass a factory in BlockStoreOptions.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>

namespace toast::server {

// What a scheduler may look at. `id`s are unique per disk and increase with arrival.
struct DiskRequest {
    std::uint64_t id = 0;
    std::uint64_t bytes = 0;
    // Where the read starts in the disk's logical address space (see disk_address()); reads of one block
    // file are contiguous there.
    std::uint64_t position = 0;
    std::chrono::steady_clock::time_point arrival{};
    std::optional<std::chrono::steady_clock::time_point> deadline;  // none: best effort
};

class DiskScheduler {
  public:
    virtual ~DiskScheduler() = default;
    virtual void push(const DiskRequest& request) = 0;
    // Removes and returns the id of the request to serve next. `head` is where the previous read on this
    // disk ended (a position as above). Precondition: size() > 0.
    virtual std::uint64_t pop(std::chrono::steady_clock::time_point now, std::uint64_t head) = 0;
    virtual std::size_t size() const = 0;
};

// First come, first served: what a disk without a scheduler of its own does.
class FifoScheduler final : public DiskScheduler {
  public:
    void push(const DiskRequest& request) override { ids_.push_back(request.id); }
    std::uint64_t pop(std::chrono::steady_clock::time_point, std::uint64_t) override {
        const auto id = ids_.front();
        ids_.pop_front();
        return id;
    }
    std::size_t size() const override { return ids_.size(); }

  private:
    std::deque<std::uint64_t> ids_;
};

// The size of a disk's logical address space (2^48 bytes, larger than any disk): positions lie in
// [0, kDiskAddressSpace).
inline constexpr std::uint64_t kDiskAddressSpace = 1ull << 48;

// A logical disk address for byte `offset` of block `block` of a title version: each block file is
// contiguous, from a start derived from the version's identity and the block number, so the blocks a disk
// holds are scattered over its whole space like the files of an allocator that spreads a title over the
// zones (seed 001 §3.2). Independent reads then lie at independent positions, which is what the thesis's
// average access time t_a assumes; reads inside one block stay contiguous. Deterministic: position-ordered
// schedulers and seek models get the same geometry on every run.
std::uint64_t disk_address(std::string_view version, std::uint64_t block, std::uint64_t block_size,
                           std::uint64_t offset);

}  // namespace toast::server
