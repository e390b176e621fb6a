// How many block requests libtorrent 2.0.8 keeps outstanding with one peer, which a box reads as that peer's
// queue (peer_info::download_queue_length). The model moves what a peer sends of a piece as one transfer, so
// what it has asked a peer for is the rest of the piece; libtorrent asks for 16 KiB blocks, only as many as
// the peer delivers in request_queue_time (3 s), at least 2 (peer_connection::update_desired_queue_size). A
// connection starts in slow start: 4 requests and one more for every block received, until a second's bytes
// no longer exceed the second before's by 5 kB while the peer unchokes us, or we lose interest.
// The box's controller samples its peers' rate only while some peer's queue holds ClientTuning's
// saturated_queue (4) blocks: a peer sending under 4 blocks in 3 s (about 175 kbit/s), such as the
// operator's peer shared by every viewer that needs it, never shows such a queue once slow start is over.
// The time-critical requests (a piece with a deadline) go to a peer while its queue drains in at most 2 s,
// never deeper than this.
#pragma once

#include <cstdint>

namespace toast::sim {

class RequestPipeline {
  public:
    static constexpr int kInitial = 4;               // m_desired_queue_size's first value
    static constexpr int kMin = 2;                   // min_request_queue
    static constexpr int kMax = 500;                 // max_out_request_queue's default
    static constexpr double kQueueSeconds = 3.0;     // request_queue_time's default
    static constexpr double kSlowStartSlack = 5000;  // bytes: a second's growth that keeps slow start on
    static constexpr std::uint64_t kBlock = 16 * 1024;

    // A measurement of the payload the peer delivered over the last `seconds` (libtorrent: once a second).
    void on_rate(double bytes_per_second, double seconds, bool unchoked);
    // The downloader told the peer it wants nothing more (NOT_INTERESTED after INTERESTED).
    void on_not_interested() { slow_start_ = false; }
    bool slow_start() const { return slow_start_; }
    // The requests libtorrent keeps outstanding with the peer: in slow start the first 4 plus one per block
    // delivered so far (`delivered` bytes on this connection), after it the blocks the measured rate
    // delivers in 3 s; within [kMin, kMax].
    int depth(double bytes_per_second, std::uint64_t delivered) const;

  private:
    bool slow_start_ = true;
    double last_second_bytes_ = 0;
};

// What the box reads as the peer's queue: of the blocks the model has asked the peer for, as many as
// libtorrent keeps requested.
inline int reported_queue(int asked_blocks, int depth) {
    return asked_blocks < depth ? asked_blocks : depth;
}

}  // namespace toast::sim
