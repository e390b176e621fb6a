// A tier of VoD server nodes, and which nodes hold each block of a title: rendezvous (highest random weight)
// hashing of (title, block) over the node ids, `replicas` nodes per block (seed 003's cluster storage one
// level above seed 000's disks). The server (ingest, relaying, verify) and the client (which node to ask for
// a piece) compute the same answer from the same ids, so the hash is fixed here byte for byte and must never
// change:
//   weight(node, title, block) = mix(fnv1a64(node id) ^ mix(fnv1a64(title) + block * 0x9e3779b97f4a7c15))
// with mix = splitmix64's finaliser; the holders are the `replicas` nodes of highest weight (ties: lower
// index first). Adding a node moves only the blocks for which it now ranks among the top `replicas`;
// removing one moves only the blocks it held.
//
// Title-level placement (`placement` "title") hashes the title alone, so every block of a title lands on the
// same nodes: kept for comparison (one popular title then loads only its nodes).
//
// Also here: the power-of-two-choices rule both sides use to pick which holder to ask.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toast {

// A position in a tier's node list.
class NodeIndex {
  public:
    constexpr NodeIndex() = default;
    constexpr explicit NodeIndex(std::uint32_t value) : value_(value) {}
    constexpr std::uint32_t value() const { return value_; }
    constexpr auto operator<=>(const NodeIndex&) const = default;

  private:
    std::uint32_t value_ = 0;
};

struct TierNode {
    std::string id;   // 1-64 of [A-Za-z0-9._-]: what placement hashes, so it must never change
    std::string url;  // "http://host:port", no trailing '/': where the node answers
    bool operator==(const TierNode&) const = default;
};

enum class TierPlacement { block, title };
std::optional<TierPlacement> parse_tier_placement(std::string_view text);
std::string_view to_string(TierPlacement placement);

inline constexpr std::size_t kMaxTierNodes = 256;
inline constexpr std::uint32_t kMaxTierReplicas = 8;

struct TierLayout {
    std::vector<TierNode> nodes;
    std::uint32_t replicas = 2;  // nodes per block; at most nodes.size()
    TierPlacement placement = TierPlacement::block;
    bool operator==(const TierLayout&) const = default;

    // The nodes holding block `block` of `title`, highest weight first: min(replicas, nodes) of them.
    std::vector<NodeIndex> holders(std::string_view title, std::uint64_t block) const;
    std::optional<NodeIndex> find(std::string_view id) const;
    const TierNode& node(NodeIndex i) const { return nodes.at(i.value()); }
};

std::uint64_t rendezvous_weight(std::string_view node_id, std::string_view title, std::uint64_t block);

bool is_valid_node_id(std::string_view id);

// "http://host:port" with a host and a non-zero port, no path: what a tier node's url must be. Empty when
// valid, else what is wrong.
std::string tier_url_problem(std::string_view url);

// The tier as JSON: {"nodes": [{"id": ..., "url": ...}, ...], "replicas": N, "placement": "block"}.
nlohmann::json tier_to_json(const TierLayout& tier);
struct TierParse {
    std::optional<TierLayout> tier;
    std::string error;  // when tier is empty: the field and what is wrong with it
};
// Validates what every reader relies on: 1..kMaxTierNodes nodes with valid, distinct ids and urls, replicas
// in 1..min(nodes, kMaxTierReplicas), a known placement. `replicas` and `placement` may be absent (2, block).
TierParse parse_tier_json(const nlohmann::json& json);
// The same checks on a layout built some other way (config, torrent): none when valid, else the field
// (relative to the tier object, e.g. "nodes[1].id") and what is wrong with it.
struct TierProblem {
    std::string field;
    std::string problem;
};
std::optional<TierProblem> tier_problem(const TierLayout& tier);

// One holder as the node choice sees it.
struct HolderView {
    NodeIndex node;
    bool usable = true;  // not backing off after a failure
    bool late = false;   // answered after a deadline lately: its disks are behind
    // Its last reported load (the node's Toast-Load: milliseconds of reads queued on its average disk);
    // none: never heard from, which counts as idle so every node gets tried.
    std::optional<double> load;
    // How long ago `load` was reported, in milliseconds; ignored without a load, below 0 taken as 0.
    double load_age_ms = 0;
};

// The power of two choices over a block's holders, with loads as old as they are. Of the usable holders,
// those not late first; among them, the choice is drawn by `tie_break` (as a fraction of 2^64) in proportion
// to a weight that falls linearly from the least loaded holder's to nothing at `tolerance` above its load,
// where `tolerance` is the age of the oldest load compared. A load is a queue in milliseconds of disk time:
// while busy it drains at one millisecond per millisecond, and at full load it grows about as fast, so two
// loads closer together than their age do not say which node is less loaded now. Taken as exact, such stale
// loads send every box that heard them to the same node at once, then all back (herding); weighed by their
// age they move only a share of the boxes, which grows with the difference, and a node far behind (a slow or
// failed disk) still gets none. Equal loads (none heard, or all idle) are split evenly, which also keeps a
// popular title from loading each node as the number of its blocks it ranks first for. With every load
// fresh (age 0) only the least loaded are drawn from. tie_break 0 takes the first holder with any weight, in
// the order given (the higher rendezvous weight); a box passes holder_tie_break(its salt, block) so that
// boxes spread their choices. None when no holder is usable.
std::optional<NodeIndex> choose_holder(std::span<const HolderView> holders, std::uint64_t tie_break = 0);
// A box's tie-break for `block`: `salt` (the box's own, drawn once) and the block, mixed.
std::uint64_t holder_tie_break(std::uint64_t salt, std::uint64_t block);

}  // namespace toast
