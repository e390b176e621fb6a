#include "server/core/tier_view.hpp"

#include <algorithm>

namespace toast::server {

double node_load_ms(const std::vector<DiskStatus>& disks) {
    double total = 0;
    std::size_t online = 0;
    for (const auto& d : disks) {
        if (d.fault.offline) continue;
        ++online;
        total += static_cast<double>(d.queue_depth) * d.access_seconds +
                 static_cast<double>(d.queued_bytes) * d.seconds_per_byte;
    }
    if (online == 0) return kOfflineLoad;
    return total / static_cast<double>(online) * 1e3;
}

nlohmann::json node_status_json(const NodeStatus& s) {
    return {{"node", s.node},
            {"load", s.load_ms},
            {"admission", s.admission},
            {"room", s.room},
            {"streams", s.streams}};
}

std::optional<NodeStatus> parse_node_status(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    const auto node = j.find("node");
    const auto load = j.find("load");
    const auto admission = j.find("admission");
    const auto room = j.find("room");
    const auto streams = j.find("streams");
    if (node == j.end() || !node->is_string() || load == j.end() || !load->is_number() ||
        admission == j.end() || !admission->is_boolean() || room == j.end() || !room->is_number() ||
        streams == j.end() || !streams->is_number_unsigned())
        return std::nullopt;
    NodeStatus s;
    s.node = node->get<std::string>();
    s.load_ms = std::max(0.0, load->get<double>());
    s.admission = admission->get<bool>();
    s.room = std::clamp(room->get<double>(), 0.0, 1.0);
    s.streams = streams->get<std::size_t>();
    return s;
}

TierView::TierView(std::vector<std::string> node_urls, std::size_t self, Options options)
    : options_(options), self_(self) {
    for (auto& url : node_urls) {
        Node n;
        n.url = std::move(url);
        nodes_.push_back(std::move(n));
    }
}

std::optional<std::size_t> TierView::find(std::string_view url) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].url == url) return i;
    return std::nullopt;
}

std::size_t TierView::index_of(std::string_view url) {
    if (auto i = find(url)) return *i;
    Node n;
    n.url = std::string(url);
    nodes_.push_back(std::move(n));
    return nodes_.size() - 1;
}

std::optional<std::size_t> TierView::choose(std::span<const std::size_t> holders,
                                            std::span<const std::size_t> tried, Clock::time_point now,
                                            std::uint64_t tie_break) const {
    std::vector<HolderView> views;
    std::optional<std::size_t> soonest;
    for (auto h : holders) {
        if (h == self_ || h >= nodes_.size()) continue;
        if (std::find(tried.begin(), tried.end(), h) != tried.end()) continue;
        const auto& n = nodes_[h];
        views.push_back({NodeIndex(static_cast<std::uint32_t>(h)), n.ready_at <= now, n.late_until > now,
                         n.load, std::chrono::duration<double, std::milli>(now - n.load_at).count()});
        if (!soonest || n.ready_at < nodes_[*soonest].ready_at) soonest = h;
    }
    if (auto chosen = choose_holder(views, tie_break)) return chosen->value();
    // Every other holder is backing off: asking the first that may have recovered beats failing the read.
    return soonest;
}

std::optional<std::size_t> TierView::node_with_room(std::span<const std::size_t> exclude,
                                                    Clock::time_point now) const {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const auto& n = nodes_[i];
        if (i == self_ || std::find(exclude.begin(), exclude.end(), i) != exclude.end()) continue;
        if (!n.status || now - n.status_at > options_.status_fresh || n.ready_at > now) continue;
        if (n.status->room < options_.min_room) continue;
        if (!best || n.status->room > nodes_[*best].status->room) best = i;
    }
    return best;
}

void TierView::on_answer(std::size_t node, std::optional<double> load, bool late, Clock::time_point now) {
    auto& n = nodes_.at(node);
    if (load) {
        n.load = load;
        n.load_at = now;
    }
    n.failures = 0;
    n.ready_at = {};
    if (late) n.late_until = now + options_.backoff_max;
}

void TierView::on_failure(std::size_t node, Clock::time_point now) {
    auto& n = nodes_.at(node);
    ++n.failures;
    auto delay = options_.backoff_initial;
    for (int i = 1; i < n.failures && delay < options_.backoff_max; ++i)
        delay *= 2;
    n.ready_at = now + std::min(delay, options_.backoff_max);
}

void TierView::on_status(std::size_t node, const NodeStatus& status, Clock::time_point now) {
    auto& n = nodes_.at(node);
    n.status = status;
    n.status_at = now;
    n.load = status.load_ms;
    n.load_at = now;
    n.failures = 0;
    n.ready_at = {};
}

}  // namespace toast::server
