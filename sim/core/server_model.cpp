#include "sim/core/server_model.hpp"

#include <algorithm>

namespace toast::sim {

using Clock = std::chrono::steady_clock;

namespace {

Clock::time_point at_seconds(double s) {
    return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)));
}

double seconds_of(Clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// Rendezvous (highest random weight) hashing: splitmix64 of the key.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

}  // namespace

ServerModel::ServerModel(ServerSetup setup, std::vector<ServerTitle> titles)
    : setup_(setup), titles_(std::move(titles)) {
    const auto nodes = static_cast<std::size_t>(std::max(1, setup_.nodes));
    const auto disks = std::max<std::size_t>(2, setup_.disks.disks);
    setup_.disks.disks = disks;
    clocks_.assign(nodes, std::vector<server::EmulatedClock>(disks));
    busy_.assign(nodes, std::vector<double>(disks, 0.0));
    placements_.assign(titles_.size(), std::vector<server::Placement>(nodes));
    placed_.assign(titles_.size(), std::vector<bool>(nodes, false));
}

std::uint64_t ServerModel::block_bytes(int title) const {
    const auto& t = titles_.at(static_cast<std::size_t>(title));
    const double seconds = std::chrono::duration<double>(setup_.time_slice).count();
    return std::max<std::uint64_t>(4096, static_cast<std::uint64_t>(t.bitrate / 8 * seconds));
}

int ServerModel::node_of(int title, std::uint64_t block) const {
    const auto nodes = clocks_.size();
    if (nodes == 1) return 0;
    std::uint64_t best = 0;
    int winner = 0;
    for (std::size_t n = 0; n < nodes; ++n) {
        const auto w = mix(mix(mix(n) ^ static_cast<std::uint64_t>(title)) ^ block);
        if (n == 0 || w > best) {
            best = w;
            winner = static_cast<int>(n);
        }
    }
    return winner;
}

const server::Placement& ServerModel::placement(int title, int node) {
    const auto t = static_cast<std::size_t>(title);
    const auto n = static_cast<std::size_t>(node);
    if (!placed_[t][n]) {
        const auto blocks = (titles_[t].bytes + block_bytes(title) - 1) / block_bytes(title);
        placements_[t][n] = server::place_blocks(server::PlacementPolicy::rda, blocks, clocks_[n].size(),
                                                 setup_.placement_seed + n, titles_[t].name);
        placed_[t][n] = true;
    }
    return placements_[t][n];
}

ServerModel::Read ServerModel::read(int title, std::uint64_t offset, std::uint64_t length, double at) {
    Read r;
    r.ready = at;
    const auto bb = block_bytes(title);
    const bool free_reads = setup_.disks.transfer_rate.value() == 0;
    for (auto pos = offset; pos < offset + length;) {
        const auto block = pos / bb;
        const auto end = std::min(offset + length, (block + 1) * bb);
        const int node = node_of(title, block);
        r.node = node;
        ++reads_;
        if (!free_reads) {
            const auto& replicas = placement(title, node).replicas.at(static_cast<std::size_t>(block));
            auto& clocks = clocks_[static_cast<std::size_t>(node)];
            // The replica whose disk is free first; ties by the block number so an idle array uses both.
            std::size_t pick = static_cast<std::size_t>(block) % replicas.size();
            for (std::size_t k = 0; k < replicas.size(); ++k) {
                const auto i = (static_cast<std::size_t>(block) + k) % replicas.size();
                if (clocks[replicas[i]].free_at() < clocks[replicas[pick]].free_at()) pick = i;
            }
            const auto disk = replicas[pick];
            const auto service =
                server::read_time(setup_.disks.access_time, setup_.disks.transfer_rate, Bytes(end - pos));
            const auto slot = clocks[disk].serve(at_seconds(at), service);
            busy_[static_cast<std::size_t>(node)][disk] += std::chrono::duration<double>(service).count();
            r.ready = std::max(r.ready, seconds_of(slot.done));
        }
        pos = end;
    }
    return r;
}

}  // namespace toast::sim
