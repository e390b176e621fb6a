#include "sim/core/catalogue_sessions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>

namespace toast::sim {

double unit_draw(std::mt19937_64& engine) {
    return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

std::vector<int> largest_remainder(const std::vector<double>& shares, int total) {
    std::vector<int> n(shares.size(), 0);
    std::vector<std::pair<double, std::size_t>> rest;
    int given = 0;
    for (std::size_t k = 0; k < shares.size(); ++k) {
        const double exact = shares[k] * total;
        n[k] = static_cast<int>(std::floor(exact));
        given += n[k];
        rest.emplace_back(exact - n[k], k);
    }
    std::stable_sort(rest.begin(), rest.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; given < total && i < rest.size(); ++i, ++given)
        ++n[rest[i].second];
    return n;
}

double profile_at(const std::vector<std::pair<double, double>>& profile, double x) {
    if (profile.empty()) return 1.0;
    if (x <= profile.front().first) return profile.front().second;
    for (std::size_t i = 1; i < profile.size(); ++i) {
        const auto [x0, y0] = profile[i - 1];
        const auto [x1, y1] = profile[i];
        if (x <= x1) return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
    return profile.back().second;
}

std::vector<double> zipf_cumulative(int titles, double alpha) {
    std::vector<double> w(static_cast<std::size_t>(titles));
    double total = 0;
    for (int i = 0; i < titles; ++i) {
        w[static_cast<std::size_t>(i)] = 1.0 / std::pow(static_cast<double>(i + 1), alpha);
        total += w[static_cast<std::size_t>(i)];
    }
    std::vector<double> c(w.size());
    double run = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        run += w[i];
        c[i] = run / total;
    }
    return c;
}

int zipf_pick(const std::vector<double>& c, double u) {
    auto it = std::upper_bound(c.begin(), c.end(), u);  // first c_i > u
    if (it == c.end()) return static_cast<int>(c.size()) - 1;
    return static_cast<int>(it - c.begin());
}

namespace {

// Idle boxes in ascending index, with the k-th idle one found in O(log B) (a Fenwick tree over idle flags).
class IdleBoxes {
  public:
    explicit IdleBoxes(int boxes) : tree_(static_cast<std::size_t>(boxes) + 1, 0), count_(boxes) {
        for (int b = 0; b < boxes; ++b)
            add(b, 1);
        for (log_ = 1; (1 << log_) <= boxes; ++log_) {
        }
    }
    int count() const { return count_; }
    void set_busy(int b) {
        add(b, -1);
        --count_;
    }
    void set_idle(int b) {
        add(b, 1);
        ++count_;
    }
    // The k-th idle box (0-based), ascending by index.
    int kth(int k) const {
        int pos = 0;
        int left = k + 1;
        for (int step = 1 << log_; step > 0; step >>= 1) {
            const int next = pos + step;
            if (next < static_cast<int>(tree_.size()) && tree_[static_cast<std::size_t>(next)] < left) {
                pos = next;
                left -= tree_[static_cast<std::size_t>(next)];
            }
        }
        return pos;  // 1-based index pos + 1 -> box pos
    }

  private:
    void add(int b, int d) {
        for (auto i = static_cast<std::size_t>(b) + 1; i < tree_.size(); i += i & (~i + 1))
            tree_[i] += d;
    }
    std::vector<int> tree_;
    int count_;
    int log_ = 0;
};

}  // namespace

EveningPlan plan_evening(const CatalogueScenario& s) {
    EveningPlan plan;
    std::mt19937_64 engine(static_cast<std::uint64_t>(s.random_seed));
    const int boxes = s.boxes;

    // 1. Uplinks.
    std::vector<double> shares;
    for (const auto& m : s.uplink_mix)
        shares.push_back(m.share);
    const auto n = largest_remainder(shares, boxes);
    std::vector<double> factors;
    for (std::size_t k = 0; k < n.size(); ++k)
        for (int i = 0; i < n[k]; ++i)
            factors.push_back(s.uplink_mix[k].factor);
    for (int i = boxes - 1; i >= 1; --i) {
        const auto j = static_cast<int>(std::floor(unit_draw(engine) * (i + 1)));
        std::swap(factors[static_cast<std::size_t>(i)], factors[static_cast<std::size_t>(j)]);
    }
    plan.uplink_bps.resize(static_cast<std::size_t>(boxes));
    for (int b = 0; b < boxes; ++b)
        plan.uplink_bps[static_cast<std::size_t>(b)] = s.uplink * factors[static_cast<std::size_t>(b)];

    // 2. Warm titles.
    const auto cumulative = zipf_cumulative(s.titles, s.zipf_alpha);
    plan.warm.resize(static_cast<std::size_t>(boxes));
    // Drawn whatever the cache, so that every policy sees the same sessions; with "none" nothing is held.
    const double title_bytes = static_cast<double>(s.title_bytes());
    const double quota = s.quota_bytes();
    for (int b = 0; b < boxes; ++b) {
        auto& held = plan.warm[static_cast<std::size_t>(b)];
        double used = 0;
        for (int draw = 0; draw < 50 && static_cast<int>(held.size()) < s.warm_titles; ++draw) {
            const int t = zipf_pick(cumulative, unit_draw(engine));
            if (std::find(held.begin(), held.end(), t) != held.end()) continue;
            if (used + title_bytes > quota) break;
            held.push_back(t);
            used += title_bytes;
        }
    }
    if (s.cache == "none")
        for (auto& held : plan.warm)
            held.clear();

    // 3. Mean watch.
    const double L = s.title_seconds;
    const double a = s.abandon_pct / 100;
    const double lo = s.abandon_lo, hi = s.abandon_hi;
    plan.mean_watch_s = L * ((1 - a) + a * (lo + hi) / 2);
    plan.lambda_peak = s.peak_viewers_pct / 100 * boxes / plan.mean_watch_s;

    // 5. Arrivals.
    IdleBoxes idle(boxes);
    using Ending = std::pair<double, int>;  // planned end, box
    std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ending;
    double t = 0;
    const double E = s.evening_seconds;
    for (;;) {
        t += -std::log(1 - unit_draw(engine)) / plan.lambda_peak;
        if (t >= E) break;
        const double u2 = unit_draw(engine), u3 = unit_draw(engine), u4 = unit_draw(engine),
                     u5 = unit_draw(engine), u6 = unit_draw(engine);
        if (!(u2 < profile_at(s.profile, t / E))) continue;
        const int title = zipf_pick(cumulative, u3);
        const double watched = u4 >= a ? 1.0 : lo + (hi - lo) * u5;
        while (!ending.empty() && ending.top().first <= t) {
            idle.set_idle(ending.top().second);
            ending.pop();
        }
        if (idle.count() == 0) {
            ++plan.dropped;
            continue;
        }
        const int box = idle.kth(static_cast<int>(std::floor(u6 * idle.count())));
        idle.set_busy(box);
        const double watch = watched * L;
        ending.emplace(t + watch, box);
        plan.sessions.push_back({box, title, t, watch, watched});
    }
    return plan;
}

std::string title_name(int title) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "t%03d", title + 1);
    return buf;
}

nlohmann::ordered_json sessions_json(const EveningPlan& plan) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& s : plan.sessions) {
        nlohmann::ordered_json j;
        j["box"] = s.box;
        j["title"] = title_name(s.title);
        j["start_s"] = s.start_s;
        j["watch_s"] = s.watch_s;
        j["watched_fraction"] = s.watched_fraction;
        out.push_back(j);
    }
    auto warm = nlohmann::ordered_json::array();
    for (const auto& w : plan.warm) {
        auto names = nlohmann::ordered_json::array();
        for (int t : w)
            names.push_back(title_name(t));
        warm.push_back(names);
    }
    return {{"sessions", out},     {"dropped", plan.dropped},           {"box_uplinks_bps", plan.uplink_bps},
            {"warm_titles", warm}, {"mean_watch_s", plan.mean_watch_s}, {"lambda_peak", plan.lambda_peak}};
}

}  // namespace toast::sim
