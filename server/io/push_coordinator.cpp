#include "server/io/push_coordinator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "server/io/title_torrent.hpp"
#include "toast/common/read_file.hpp"

namespace toast::server {

using SteadyTime = std::chrono::steady_clock::time_point;

PushCoordinator::Clocks PushCoordinator::real_clocks() {
    return {[] { return std::chrono::steady_clock::now(); },
            [] {
                return std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                    .count();
            }};
}

PushCoordinator::PushCoordinator(const DemandConfig& demand, const PushConfig& push, const TitleStore& store,
                                 Clocks clocks)
    : config_(push),
      store_(store),
      clocks_(std::move(clocks)),
      started_ms_(clocks_.unix_ms()),
      demand_(demand.half_life) {
    if (!demand.forecast) return;
    std::string text;
    try {
        text = read_file(*demand.forecast);
    } catch (const std::exception& e) {
        throw std::runtime_error("demand.forecast: " + std::string(e.what()));
    }
    std::string error;
    auto forecast = parse_forecast(text, &error);
    if (!forecast) throw std::runtime_error("demand.forecast " + demand.forecast->string() + ": " + error);
    const auto now = clocks_.steady();
    for (const auto& [name, per_hour] : *forecast)
        demand_.seed(name, per_hour, now);
}

std::map<std::string, double> PushCoordinator::demand() {
    std::lock_guard lock(mutex_);
    return demand_.rates(clocks_.steady());
}

bool PushCoordinator::record_play(std::string_view info_hash, std::string_view) {
    for (const auto& t : store_.titles()) {
        if (t->info_hash != info_hash) continue;
        std::lock_guard lock(mutex_);
        demand_.record_start(t->name, clocks_.steady());
        return true;
    }
    return false;
}

std::vector<PlanTitle> PushCoordinator::current_titles(SteadyTime now) {
    std::vector<PlanTitle> out;
    for (const auto& t : store_.titles()) {
        if (t->info_hash.empty() || t->size == 0 || t->bitrate.value() == 0) continue;
        auto known = piece_sizes_.find(t->etag);
        if (known == piece_sizes_.end()) {
            auto bytes = store_.torrent(*t);
            auto size = bytes ? torrent_piece_size(*bytes) : std::nullopt;
            if (!size || *size == 0) continue;  // no intact torrent: no box could check what it fetches
            known = piece_sizes_.emplace(t->etag, *size).first;
        }
        out.push_back(PlanTitle{.name = t->name,
                                .info_hash = t->info_hash,
                                .size = Bytes(t->size),
                                .piece_size = Bytes(known->second),
                                .bitrate = t->bitrate,
                                .demand = demand_.rate(t->name, now)});
    }
    std::sort(out.begin(), out.end(), [](const PlanTitle& a, const PlanTitle& b) { return a.name < b.name; });
    return out;
}

bool PushCoordinator::needs_plan(const std::vector<PlanTitle>& titles) const {
    if (boxes_changed_ || generation_ == 0 || titles.size() != planned_.size()) return true;
    double total_now = 0, total_then = 0;
    for (std::size_t i = 0; i < titles.size(); ++i) {
        const auto& a = titles[i];
        const auto& b = planned_[i];
        if (a.name != b.name || a.info_hash != b.info_hash || a.size != b.size || a.bitrate != b.bitrate)
            return true;
        total_now += a.demand;
        total_then += b.demand;
    }
    if ((total_now > 0) != (total_then > 0)) return true;
    if (total_now <= 0) return false;
    double distance = 0;
    for (std::size_t i = 0; i < titles.size(); ++i)
        distance += std::abs(titles[i].demand / total_now - planned_[i].demand / total_then);
    return distance / 2 > config_.replan_change;
}

void PushCoordinator::replan(std::vector<PlanTitle> titles) {
    std::vector<PlanBox> boxes;
    for (const auto& [id, b] : boxes_)
        boxes.push_back(PlanBox{id, b.upload, b.quota});
    PlannerSettings s;
    s.peak_viewers = config_.peak_viewers.value_or(config_.peak_viewers_pct / 100.0 * double(boxes.size()));
    s.headroom = config_.headroom;
    s.replicas = config_.replicas;
    s.holder_share = config_.holder_share;
    s.chunk_pieces = config_.chunk_pieces;
    s.min_stripes = config_.min_stripes;
    s.seed = config_.seed;
    plan_ = plan_push(titles, boxes, s);
    planned_ = std::move(titles);
    boxes_changed_ = false;
    ++generation_;
}

std::optional<BoxAssignment> PushCoordinator::assign(const BoxRegistration& reg) {
    if (!config_.enabled) return std::nullopt;
    std::lock_guard lock(mutex_);
    const auto now = clocks_.steady();
    for (auto it = boxes_.begin(); it != boxes_.end();) {
        if (it->first != reg.box && now - it->second.seen > config_.box_ttl) {
            it = boxes_.erase(it);
            boxes_changed_ = true;
        } else {
            ++it;
        }
    }
    Box box{reg.upload.value_or(config_.box_upload), reg.quota.value_or(config_.box_quota), now};
    auto [it, fresh] = boxes_.try_emplace(reg.box, box);
    if (fresh || it->second.upload != box.upload || it->second.quota != box.quota) boxes_changed_ = true;
    it->second = box;
    auto titles = current_titles(now);
    if (needs_plan(titles)) replan(std::move(titles));

    BoxAssignment a;
    a.box = reg.box;
    a.generation = generation_;
    a.window = window_times(config_.window, clocks_.unix_ms(), started_ms_);
    a.rate = config_.rate;
    a.quota = box.quota;
    a.upload = box.upload;
    a.refresh = std::chrono::duration_cast<std::chrono::seconds>(config_.refresh);
    for (const auto& b : plan_.boxes) {
        if (b.id != reg.box) continue;
        for (const auto& h : b.holdings) {
            const auto& t = plan_.titles[h.title];
            const auto pieces = static_cast<std::uint32_t>((t.size.value() + t.piece_size.value() - 1) /
                                                           t.piece_size.value());
            a.titles.push_back(AssignedTitle{.name = t.name,
                                             .info_hash = t.info_hash,
                                             .piece_size = t.piece_size,
                                             .pieces = pieces,
                                             .ranges = h.pieces,
                                             .bytes = h.bytes});
        }
    }
    return a;
}

std::optional<std::pair<PushPlan, std::uint64_t>> PushCoordinator::plan() {
    if (!config_.enabled) return std::nullopt;
    std::lock_guard lock(mutex_);
    return std::pair{plan_, generation_};
}

std::uint64_t PushCoordinator::generation() const {
    std::lock_guard lock(mutex_);
    return generation_;
}

std::size_t PushCoordinator::boxes() const {
    std::lock_guard lock(mutex_);
    return boxes_.size();
}

}  // namespace toast::server
