#include "toast/common/tier.hpp"

#include <algorithm>
#include <set>

#include "toast/common/endpoint.hpp"

namespace toast {

namespace {

std::uint64_t fnv1a64(std::string_view bytes) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

// splitmix64's finaliser: FNV-1a alone mixes the last bytes poorly into the high bits.
std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

}  // namespace

std::uint64_t rendezvous_weight(std::string_view node_id, std::string_view title, std::uint64_t block) {
    const auto key = mix(fnv1a64(title) + block * 0x9e3779b97f4a7c15ull);
    return mix(fnv1a64(node_id) ^ key);
}

std::optional<TierPlacement> parse_tier_placement(std::string_view text) {
    if (text == "block") return TierPlacement::block;
    if (text == "title") return TierPlacement::title;
    return std::nullopt;
}

std::string_view to_string(TierPlacement placement) {
    return placement == TierPlacement::title ? "title" : "block";
}

std::vector<NodeIndex> TierLayout::holders(std::string_view title, std::uint64_t block) const {
    // Title-level placement: every block is keyed as block 0, so the whole title has one set of holders.
    const std::uint64_t key = placement == TierPlacement::title ? 0 : block;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> ranked;
    ranked.reserve(nodes.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        ranked.emplace_back(rendezvous_weight(nodes[i].id, title, key), i);
    const auto count = std::min<std::size_t>(replicas, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(count), ranked.end(),
                      [](const auto& a, const auto& b) {
                          return a.first != b.first ? a.first > b.first : a.second < b.second;
                      });
    std::vector<NodeIndex> out;
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
        out.emplace_back(ranked[i].second);
    return out;
}

std::optional<NodeIndex> TierLayout::find(std::string_view id) const {
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].id == id) return NodeIndex(i);
    return std::nullopt;
}

bool is_valid_node_id(std::string_view id) {
    if (id.empty() || id.size() > 64) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
               c == '_' || c == '-';
    });
}

std::string tier_url_problem(std::string_view url) {
    constexpr std::string_view kScheme = "http://";
    if (url.substr(0, kScheme.size()) != kScheme)
        return "expected http://HOST:PORT, got \"" + std::string(url) + "\"";
    const auto authority = url.substr(kScheme.size());
    if (authority.find_first_of("/?#") != std::string_view::npos)
        return "expected http://HOST:PORT without a path, got \"" + std::string(url) + "\"";
    if (!parse_endpoint(authority, false))
        return "expected http://HOST:PORT with a non-zero port, got \"" + std::string(url) + "\"";
    return {};
}

std::optional<TierProblem> tier_problem(const TierLayout& tier) {
    if (tier.nodes.empty() || tier.nodes.size() > kMaxTierNodes)
        return TierProblem{"nodes", "expected 1.." + std::to_string(kMaxTierNodes) + " nodes, got " +
                                        std::to_string(tier.nodes.size())};
    std::set<std::string, std::less<>> ids;
    std::set<std::string, std::less<>> urls;
    for (std::size_t i = 0; i < tier.nodes.size(); ++i) {
        const auto& n = tier.nodes[i];
        const auto field = "nodes[" + std::to_string(i) + "]";
        if (!is_valid_node_id(n.id))
            return TierProblem{field + ".id", "expected 1-64 of A-Z a-z 0-9 . _ -, got \"" + n.id + "\""};
        if (!ids.insert(n.id).second) return TierProblem{field + ".id", "\"" + n.id + "\" names two nodes"};
        if (auto problem = tier_url_problem(n.url); !problem.empty())
            return TierProblem{field + ".url", problem};
        if (!urls.insert(n.url).second)
            return TierProblem{field + ".url", "\"" + n.url + "\" is given for two nodes"};
    }
    const auto most = std::min<std::size_t>(tier.nodes.size(), kMaxTierReplicas);
    if (tier.replicas < 1 || tier.replicas > most)
        return TierProblem{"replicas", "expected 1.." + std::to_string(most) +
                                           " (at most one per node), got " + std::to_string(tier.replicas)};
    return std::nullopt;
}

nlohmann::json tier_to_json(const TierLayout& tier) {
    auto nodes = nlohmann::json::array();
    for (const auto& n : tier.nodes)
        nodes.push_back({{"id", n.id}, {"url", n.url}});
    return {{"nodes", std::move(nodes)},
            {"replicas", tier.replicas},
            {"placement", std::string(to_string(tier.placement))}};
}

TierParse parse_tier_json(const nlohmann::json& json) {
    TierParse out;
    if (!json.is_object()) {
        out.error = "tier: expected an object";
        return out;
    }
    TierLayout tier;
    const auto nodes = json.find("nodes");
    if (nodes == json.end() || !nodes->is_array()) {
        out.error = "tier.nodes: expected an array";
        return out;
    }
    for (std::size_t i = 0; i < nodes->size(); ++i) {
        const auto& n = (*nodes)[i];
        const auto id = n.is_object() ? n.find("id") : n.end();
        const auto url = n.is_object() ? n.find("url") : n.end();
        if (!n.is_object() || id == n.end() || url == n.end() || !id->is_string() || !url->is_string()) {
            out.error = "tier.nodes[" + std::to_string(i) + "]: expected {\"id\": STRING, \"url\": STRING}";
            return out;
        }
        tier.nodes.push_back({id->get<std::string>(), url->get<std::string>()});
    }
    if (const auto r = json.find("replicas"); r != json.end()) {
        if (!r->is_number_integer() || r->get<std::int64_t>() < 1) {
            out.error = "tier.replicas: expected a positive integer";
            return out;
        }
        tier.replicas = static_cast<std::uint32_t>(std::min<std::int64_t>(r->get<std::int64_t>(), 1 << 30));
    }
    if (const auto pl = json.find("placement"); pl != json.end()) {
        const auto parsed = pl->is_string() ? parse_tier_placement(pl->get<std::string>()) : std::nullopt;
        if (!parsed) {
            out.error = "tier.placement: expected \"block\" or \"title\"";
            return out;
        }
        tier.placement = *parsed;
    }
    if (auto problem = tier_problem(tier)) {
        out.error = "tier." + problem->field + ": " + problem->problem;
        return out;
    }
    out.tier = std::move(tier);
    return out;
}

std::optional<NodeIndex> choose_holder(std::span<const HolderView> holders, std::uint64_t tie_break) {
    // The candidates: usable, and on time when any usable one is.
    const bool any_on_time =
        std::any_of(holders.begin(), holders.end(), [](const HolderView& h) { return h.usable && !h.late; });
    std::vector<const HolderView*> candidates;
    for (const auto& h : holders)
        if (h.usable && (!h.late || !any_on_time)) candidates.push_back(&h);
    if (candidates.empty()) return std::nullopt;
    // An unknown load counts as idle and as just heard.
    auto load = [](const HolderView* h) { return std::max(0.0, h->load.value_or(0.0)); };
    auto age = [](const HolderView* h) { return h->load ? std::max(0.0, h->load_age_ms) : 0.0; };
    double lowest = load(candidates.front()), tolerance = 0;
    for (const auto* h : candidates) {
        lowest = std::min(lowest, load(h));
        tolerance = std::max(tolerance, age(h));
    }
    std::vector<double> weights;
    double total = 0;
    for (const auto* h : candidates) {
        const double w = tolerance > 0       ? std::max(0.0, lowest + tolerance - load(h))
                         : load(h) == lowest ? 1.0
                                             : 0.0;
        weights.push_back(w);
        total += w;
    }
    // The draw: tie_break's top 53 bits as a fraction of the total weight.
    const double target = static_cast<double>(tie_break >> 11) * 0x1.0p-53 * total;
    double sum = 0;
    std::size_t chosen = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (weights[i] <= 0) continue;
        chosen = i;
        sum += weights[i];
        if (target < sum) break;
    }
    return candidates[chosen]->node;
}

std::uint64_t holder_tie_break(std::uint64_t salt, std::uint64_t block) {
    return mix(salt ^ mix(block + 0x9e3779b97f4a7c15ull));
}

}  // namespace toast
