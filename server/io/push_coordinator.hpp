// The server's side of catalogue demand and pre-placement: counts the session starts boxes report into each
// title's demand (seeded from the operator's forecast file), keeps the boxes that asked for an assignment
// (a box not heard from for `box_ttl` leaves), and keeps one plan (server/core/push_planner) of the store's
// titles over those boxes. It plans again when a box joins, leaves or changes its upload or quota, when the
// titles change, or when the titles' demand shares have moved by more than `replan_change` since the last
// plan; otherwise every box keeps its assignment. Thread-safe: the HTTP threads call it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "server/core/push_config.hpp"
#include "server/core/push_planner.hpp"
#include "server/core/push_routes.hpp"
#include "server/core/title_demand.hpp"
#include "server/core/title_store.hpp"

namespace toast::server {

class PushCoordinator final : public PushControl {
  public:
    struct Clocks {
        std::function<std::chrono::steady_clock::time_point()> steady;
        std::function<std::int64_t()> unix_ms;
    };
    static Clocks real_clocks();

    // Reads the forecast file if the config names one; throws std::runtime_error naming the file and what is
    // wrong with it.
    PushCoordinator(const DemandConfig& demand, const PushConfig& push, const TitleStore& store,
                    Clocks clocks = real_clocks());

    std::map<std::string, double> demand() override;
    bool record_play(std::string_view info_hash, std::string_view box) override;
    std::optional<BoxAssignment> assign(const BoxRegistration& box) override;
    std::optional<std::pair<PushPlan, std::uint64_t>> plan() override;

    std::uint64_t generation() const;
    std::size_t boxes() const;

  private:
    struct Box {
        BitRate upload{0};
        Bytes quota{0};
        std::chrono::steady_clock::time_point seen{};
    };
    std::vector<PlanTitle> current_titles(std::chrono::steady_clock::time_point now);
    bool needs_plan(const std::vector<PlanTitle>& titles) const;
    void replan(std::vector<PlanTitle> titles);

    PushConfig config_;
    const TitleStore& store_;
    Clocks clocks_;
    std::int64_t started_ms_;
    mutable std::mutex mutex_;
    TitleDemand demand_;
    std::map<std::string, Box> boxes_;
    std::map<std::string, std::uint64_t> piece_sizes_;  // by the title's ETag
    bool boxes_changed_ = true;
    PushPlan plan_;
    std::vector<PlanTitle> planned_;  // the titles as the plan saw them
    std::uint64_t generation_ = 0;
};

}  // namespace toast::server
