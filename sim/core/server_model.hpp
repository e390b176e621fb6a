// The VoD server nodes' disks, by the thesis's ch. 3 model: a title is stored in blocks of r_c x t_b bytes
// (the server's ingest), each on two disks of its node drawn by Random Duplicate Allocation
// (server/core/placement); a read of B bytes of a block costs t_a + B / r_d on the replica's disk that is
// free first (RDA reads the less loaded copy), each disk serving one read at a time on its own clock
// (server::EmulatedClock). With several nodes each block lives on the node that wins rendezvous hashing of
// (node, title, block). Pure: times in, times out; the adapter sends the bytes once they are read.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "server/core/disk_model.hpp"
#include "server/core/placement.hpp"

namespace toast::sim {

struct ServerSetup {
    int nodes = 1;
    server::DiskArrayModel disks{4, std::chrono::milliseconds(0), BitRate(0)};  // per node; r_d 0: free reads
    std::chrono::nanoseconds time_slice = std::chrono::seconds(5);              // t_b
    std::uint64_t placement_seed = 1;
    double request_overhead_s = 0.002;  // an HTTP request's handling before its first read
};

struct ServerTitle {
    std::string name;
    std::uint64_t bytes = 0;
    double bitrate = 0;  // bits per second
};

class ServerModel {
  public:
    ServerModel(ServerSetup setup, std::vector<ServerTitle> titles);

    struct Read {
        int node = 0;
        double ready = 0;  // seconds: the last byte is read and can go out
    };
    // Bytes [offset, offset + length) of `title`, asked at `at` (seconds, when the request reaches the node).
    Read read(int title, std::uint64_t offset, std::uint64_t length, double at);

    int node_of(int title, std::uint64_t block) const;
    std::uint64_t block_bytes(int title) const;
    std::uint64_t reads() const { return reads_; }
    // Seconds each disk of each node spent reading.
    const std::vector<std::vector<double>>& busy() const { return busy_; }
    const ServerSetup& setup() const { return setup_; }

  private:
    const server::Placement& placement(int title, int node);

    ServerSetup setup_;
    std::vector<ServerTitle> titles_;
    std::vector<std::vector<server::EmulatedClock>> clocks_;  // [node][disk]
    std::vector<std::vector<double>> busy_;
    std::vector<std::vector<server::Placement>> placements_;  // [title][node], filled on first use
    std::vector<std::vector<bool>> placed_;
    std::uint64_t reads_ = 0;
};

}  // namespace toast::sim
