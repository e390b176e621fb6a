// Which replica serves a block (thesis §4.1: RDA reads "the less heavily-loaded replica"). A disk's load is
// the time it will need to finish what it already has plus this request, estimated from its observed service
// model, so a fail-stutter disk (slow per byte) loses even when its queue is shorter. Pure: callers pass a
// snapshot of the disks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace toast::server {

struct DiskLoad {
    bool online = true;
    std::uint64_t outstanding_bytes = 0;  // queued or in service
    std::uint64_t outstanding_ops = 0;
    double seconds_per_byte = 0;  // observed transfer cost
    double access_seconds = 0;    // observed fixed cost per read
};

// Seconds until `disk` would finish a new read of `request_bytes` after everything it already has.
double expected_finish_seconds(const DiskLoad& disk, std::uint64_t request_bytes);

// Index into `candidates` (disk numbers) of the online disk that finishes soonest; nullopt when none is
// online or known. Ties (finish times within 1% of each other) go to the candidate at position
// tie_break % candidates.size() and onwards, so callers that pass the block number spread an idle array's
// reads over both replicas instead of always the first.
//
// Bit i of `suspect` marks candidates[i] as a copy that failed its checksum and has not passed since. A
// suspect copy is chosen only when no other candidate is online, however idle its disk: reading it again
// costs a read, a re-check and a fallback, and rot rarely heals by itself. It is still read when it is the
// last copy, so a file the operator restored is found good again. At most 64 candidates.
std::optional<std::size_t> choose_replica(std::span<const std::uint32_t> candidates,
                                          std::span<const DiskLoad> disks, std::uint64_t request_bytes,
                                          std::uint64_t tie_break, std::uint64_t suspect = 0);

// A disk's service time t(bytes) ~ access + bytes * per_byte, fitted by exponentially weighted least squares
// over its recent reads, starting from a prior (the emulated t_a and r_d, or a fast-disk default) that fades
// as real reads come in. When recent reads all have about the same size the split cannot be fitted; then the
// access estimate is kept and the per-byte cost absorbs the rest.
//
// Evidence also fades with time: age() moves the fit back toward the prior while a disk serves no reads. A
// disk the chooser stopped using because it was slow (fail-stutter) gets no new observations, so without
// this its old estimate would stand until the other replica's queue grew long enough; with it, the estimate
// drifts back to the prior, the disk is tried again, and one read re-measures it: a recovered disk is used
// again, a still-slow one is pushed back up by that read and avoided for another while.
class ServiceModel {
  public:
    ServiceModel(double access_seconds, double seconds_per_byte, double decay = 0.1);
    void observe(std::uint64_t bytes, double seconds);
    // Forgets 1 - 2^(-idle_seconds / half_life_seconds) of the evidence, putting the prior in its place.
    void age(double idle_seconds, double half_life_seconds);
    double access_seconds() const { return access_; }
    double seconds_per_byte() const { return per_byte_; }

  private:
    void add(double x, double y, double w);
    void add_prior(double w);
    void refit();

    double decay_;
    double prior_access_;
    double prior_per_byte_;
    double sw_ = 0, sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;
    double access_;
    double per_byte_;
};

}  // namespace toast::server
