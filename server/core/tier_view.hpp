// What a node knows of the other nodes of its tier, and the decisions it takes from it: which holder of a
// block to relay a read from (the power of two choices over their reported loads, passing over a node that
// failed until its backoff ends), and which node to send a paced stream to when this one has no room (the one
// with the most room that reported lately). Fed by relayed answers (their Toast-Load) and by each node's
// status (GET /tier, polled every status_interval). Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/disk_control.hpp"
#include "toast/common/tier.hpp"

namespace toast::server {

// A node's load as it reports it (Toast-Load, and "load" in GET /tier): the milliseconds of reads queued on
// its average online disk, priced by each disk's fitted service model; with every disk offline, kOfflineLoad.
// Comparable across nodes, so a client can ask the less loaded of a block's holders.
inline constexpr double kOfflineLoad = 1e6;
double node_load_ms(const std::vector<DiskStatus>& disks);

// What GET /tier answers: the node, its load, and its room for paced streams.
struct NodeStatus {
    std::string node;  // this node's id
    double load_ms = 0;
    bool admission = false;  // admission control for /stream is on
    // The share of its disks' time (under admission's disk_share) still free in the coming rounds, 0..1; 1
    // without admission control.
    double room = 1;
    std::size_t streams = 0;  // admitted paced streams
};
nlohmann::json node_status_json(const NodeStatus& status);
std::optional<NodeStatus> parse_node_status(const nlohmann::json& json);

class TierView {
  public:
    using Clock = std::chrono::steady_clock;
    struct Options {
        std::chrono::milliseconds backoff_initial{200};
        std::chrono::milliseconds backoff_max{3000};
        // A status older than this does not count when looking for a node with room.
        std::chrono::milliseconds status_fresh{3000};
        // A node needs at least this much room to be sent a stream.
        double min_room = 0.02;
    };

    TierView(std::vector<std::string> node_urls, std::size_t self, Options options);

    // The holder of a block to relay from: never this node, none of `tried`, the power of two choices among
    // the rest that are not backing off (toast::choose_holder: the loads heard weighed by their age at
    // `now`, drawn by `tie_break`, as a box chooses); if all of those are backing off, the one whose backoff
    // ends first. None when no other holder is left.
    std::optional<std::size_t> choose(std::span<const std::size_t> holders,
                                      std::span<const std::size_t> tried, Clock::time_point now,
                                      std::uint64_t tie_break = 0) const;
    // Another node with room for a paced stream: the most room among fresh statuses, not backing off, none
    // of `exclude`; none when no node has room.
    std::optional<std::size_t> node_with_room(std::span<const std::size_t> exclude,
                                              Clock::time_point now) const;

    void on_answer(std::size_t node, std::optional<double> load, bool late, Clock::time_point now);
    void on_failure(std::size_t node, Clock::time_point now);
    void on_status(std::size_t node, const NodeStatus& status, Clock::time_point now);

    std::size_t size() const { return nodes_.size(); }
    const std::string& url(std::size_t node) const { return nodes_.at(node).url; }
    std::optional<std::size_t> find(std::string_view url) const;
    // The node at `url`, added if unknown (a title ingested on a tier that listed it).
    std::size_t index_of(std::string_view url);
    bool backing_off(std::size_t node, Clock::time_point now) const { return nodes_.at(node).ready_at > now; }

  private:
    struct Node {
        std::string url;
        std::optional<double> load;
        Clock::time_point load_at{};  // when `load` was heard
        Clock::time_point late_until{};
        int failures = 0;
        Clock::time_point ready_at{};
        std::optional<NodeStatus> status;
        Clock::time_point status_at{};
    };
    Options options_;
    std::size_t self_;
    std::vector<Node> nodes_;
};

}  // namespace toast::server
