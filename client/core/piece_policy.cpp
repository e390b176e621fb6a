#include "client/core/piece_policy.hpp"

#include <algorithm>
#include <cmath>

namespace toast::client {
namespace {

// A fixed pseudo-random key per (seed, piece): rarest-first ties break the same way in every plan, so the
// order does not churn between plans, and differently for different clients (different seeds).
std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

int availability_of(const SwarmSnapshot& s, PieceIndex p) {
    auto i = static_cast<std::size_t>(p.value());
    return i < s.availability.size() ? s.availability[i] : 0;
}

// The pieces a policy may order, computed the same way for every policy.
struct Ranges {
    std::int32_t n = 0;
    std::int32_t playhead = 0;
    std::int32_t start = 0;       // first piece beyond the give-up horizon
    std::int32_t urgent_end = 0;  // [start, urgent_end) goes first, in playback order
    std::int32_t end = 0;         // one past the last piece that may be wanted
};

bool eligible(const SwarmSnapshot& s, PieceIndex p) {
    return !s.had.has(p) && !s.server_fetching.has(p);
}

bool refused(const SwarmSnapshot& s, PieceIndex p) {
    return s.refused.has(p) && !s.had.has(p);
}

Ranges ranges_of(const SwarmSnapshot& s) {
    Ranges r;
    r.n = s.piece_count.value();
    r.playhead = std::clamp(s.playhead.value(), 0, r.n);
    r.start = std::min<std::int64_t>(static_cast<std::int64_t>(r.playhead) + s.horizon.value(), r.n);
    r.end = s.request_end ? std::clamp(s.request_end->value(), 0, r.n) : r.n;
    r.end = std::max(r.end, r.start);  // a request end inside the horizon wants nothing: [start, start)
    if (s.lookahead) {
        // Counted from the first piece peers are asked for anew: what is had or with the server moves the
        // lookahead on, so a viewer whose peers keep up keeps fetching ahead.
        auto anchor = r.start;
        while (anchor < r.end && !eligible(s, PieceIndex(anchor)))
            ++anchor;
        r.end = static_cast<std::int32_t>(
            std::min<std::int64_t>(r.end, static_cast<std::int64_t>(anchor) + s.lookahead->value()));
    }
    r.urgent_end = static_cast<std::int32_t>(
        std::clamp<std::int64_t>(static_cast<std::int64_t>(r.playhead) + s.urgent.value(), r.start, r.end));
    return r;
}

std::vector<PieceIndex> eligible_in(const SwarmSnapshot& s, std::int32_t from, std::int32_t to) {
    std::vector<PieceIndex> out;
    for (std::int32_t i = from; i < to; ++i)
        if (eligible(s, PieceIndex(i))) out.emplace_back(i);
    return out;
}

// Efraimidis-Spirakis weighted shuffle: key = ln(u) / w, largest first. The first piece is piece i with
// probability w_i / sum(w), and the whole order is a weighted sample without replacement.
void beta_order(std::vector<PieceIndex>& pieces, std::int32_t range_start, std::int32_t range_end,
                const std::vector<double>& u) {
    const std::int64_t len = std::max<std::int64_t>(1, static_cast<std::int64_t>(range_end) - range_start);
    std::vector<std::pair<double, PieceIndex>> keyed;
    keyed.reserve(pieces.size());
    for (auto p : pieces) {
        double w = beta_1_2_cell_mass(p.value() - range_start, len);
        keyed.emplace_back(std::log(u[static_cast<std::size_t>(p.value())]) / w, p);
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t i = 0; i < keyed.size(); ++i)
        pieces[i] = keyed[i].second;
}

// Turns a policy's order of [urgent_end, end) into a plan: the urgent pieces before it in playback order,
// availability partition, past pieces, give-up set, priorities and deadlines. `in_order` is how many leading
// entries of `order` are in playback order (for deadlines).
PiecePlan finish_plan(const SwarmSnapshot& s, const Ranges& r, std::vector<PieceIndex> order,
                      std::size_t in_order, const PolicyConfig& config, bool uniform_priority) {
    // The urgent pieces in playback order: the server's zone when it cannot take it, and the pieces it
    // refused, wherever the policy put them (counted out of the policy's in-order prefix if they were in it).
    std::vector<PieceIndex> urgent;
    for (std::int32_t i = r.playhead; i < r.end; ++i) {
        const PieceIndex p(i);
        if (refused(s, p) || (i >= r.start && i < r.urgent_end && eligible(s, p))) urgent.push_back(p);
    }
    if (s.refused.count().value() > 0) {
        const auto is_refused = [&](PieceIndex p) { return refused(s, p); };
        const auto prefix = static_cast<std::ptrdiff_t>(std::min(in_order, order.size()));
        in_order = static_cast<std::size_t>(prefix -
                                            std::count_if(order.begin(), order.begin() + prefix, is_refused));
        std::erase_if(order, is_refused);
    }
    order.insert(order.begin(), urgent.begin(), urgent.end());
    in_order += urgent.size();
    PiecePlan plan;
    plan.priority.assign(static_cast<std::size_t>(r.n), 0);
    for (std::int32_t i = r.playhead; i < r.start; ++i)
        if (!s.had.has(PieceIndex(i)) && !refused(s, PieceIndex(i))) plan.give_up.emplace_back(i);

    std::vector<bool> ordered_flag(static_cast<std::size_t>(r.n), false);
    for (std::size_t i = 0; i < in_order && i < order.size(); ++i)
        ordered_flag[static_cast<std::size_t>(order[i].value())] = true;
    std::stable_partition(order.begin(), order.end(),
                          [&](PieceIndex p) { return availability_of(s, p) > 0; });

    for (std::size_t rank = 0; rank < order.size(); ++rank) {
        auto p = order[rank];
        plan.priority[static_cast<std::size_t>(p.value())] =
            uniform_priority ? config.rarest_priority : priority_for_rank(rank, config.top_tier);
    }
    plan.wanted = std::move(order);

    for (auto p : plan.wanted) {
        if (static_cast<std::int32_t>(plan.deadlines.size()) >= config.deadline_pieces) break;
        if (!ordered_flag[static_cast<std::size_t>(p.value())] || availability_of(s, p) <= 0) continue;
        plan.deadlines.push_back({p, s.time_until_needed(p)});
    }

    if (s.want_past_pieces) {
        for (std::int32_t i = 0; i < r.playhead; ++i) {
            PieceIndex p(i);
            if (!eligible(s, p)) continue;
            plan.wanted.push_back(p);
            plan.priority[static_cast<std::size_t>(i)] = 1;
        }
    }
    return plan;
}

class RarestPolicy final : public PiecePolicy {
  public:
    explicit RarestPolicy(PolicyConfig c) : config_(c) {}
    PickerKind kind() const override { return PickerKind::rarest; }
    PiecePlan plan(const SwarmSnapshot& s) override {
        auto r = ranges_of(s);
        auto order = eligible_in(s, r.urgent_end, r.end);
        std::sort(order.begin(), order.end(), [&](PieceIndex a, PieceIndex b) {
            auto aa = availability_of(s, a), ab = availability_of(s, b);
            if (aa != ab) return aa < ab;
            auto ka =
                splitmix64(config_.seed ^ static_cast<std::uint64_t>(a.value()) * 0xD1B54A32D192ED03ull);
            auto kb =
                splitmix64(config_.seed ^ static_cast<std::uint64_t>(b.value()) * 0xD1B54A32D192ED03ull);
            return ka != kb ? ka < kb : a < b;
        });
        // Pieces no peer has sort first by availability; finish_plan moves them behind the available ones.
        return finish_plan(s, r, std::move(order), 0, config_, true);
    }

  private:
    PolicyConfig config_;
};

class InOrderPolicy final : public PiecePolicy {
  public:
    explicit InOrderPolicy(PolicyConfig c) : config_(c) {}
    PickerKind kind() const override { return PickerKind::inorder; }
    PiecePlan plan(const SwarmSnapshot& s) override {
        auto r = ranges_of(s);
        auto order = eligible_in(s, r.urgent_end, r.end);
        auto n = order.size();
        return finish_plan(s, r, std::move(order), n, config_, false);
    }

  private:
    PolicyConfig config_;
};

// Beta and hybrid keep one uniform draw per piece, made once from the seeded engine in piece order. Plans are
// then a pure function of (seed, snapshot), and a piece's rank only drifts as the range moves.
class RandomKeys {
  public:
    explicit RandomKeys(std::uint64_t seed) : engine_(seed) {}
    const std::vector<double>& for_pieces(std::int32_t n) {
        while (static_cast<std::int32_t>(u_.size()) < n)
            u_.push_back(1.0 - uniform_01(engine_));  // (0, 1]: ln(u) is finite
        return u_;
    }

  private:
    std::mt19937_64 engine_;
    std::vector<double> u_;
};

class BetaPolicy final : public PiecePolicy {
  public:
    explicit BetaPolicy(PolicyConfig c) : config_(c), keys_(c.seed) {}
    PickerKind kind() const override { return PickerKind::beta; }
    PiecePlan plan(const SwarmSnapshot& s) override {
        auto r = ranges_of(s);
        auto order = eligible_in(s, r.urgent_end, r.end);
        beta_order(order, r.urgent_end, r.end, keys_.for_pieces(r.n));
        return finish_plan(s, r, std::move(order), 0, config_, false);
    }

  private:
    PolicyConfig config_;
    RandomKeys keys_;
};

// Also the adaptive policy: the same order, with the window the controller tuned.
class HybridPolicy final : public PiecePolicy {
  public:
    HybridPolicy(PolicyConfig c, PickerKind kind) : config_(c), keys_(c.seed), kind_(kind) {}
    PickerKind kind() const override { return kind_; }
    PiecePlan plan(const SwarmSnapshot& s) override {
        auto r = ranges_of(s);
        auto window_end = static_cast<std::int32_t>(std::clamp<std::int64_t>(
            static_cast<std::int64_t>(r.playhead) + s.inorder_window.value(), r.urgent_end, r.end));
        auto order = eligible_in(s, r.urgent_end, window_end);
        auto in_order = order.size();
        auto beyond = eligible_in(s, window_end, r.end);
        beta_order(beyond, window_end, r.end, keys_.for_pieces(r.n));
        order.insert(order.end(), beyond.begin(), beyond.end());
        return finish_plan(s, r, std::move(order), in_order, config_, false);
    }

  private:
    PolicyConfig config_;
    RandomKeys keys_;
    PickerKind kind_;
};

}  // namespace

std::optional<PickerKind> parse_picker_kind(std::string_view text) {
    if (text == "rarest") return PickerKind::rarest;
    if (text == "inorder") return PickerKind::inorder;
    if (text == "beta") return PickerKind::beta;
    if (text == "hybrid") return PickerKind::hybrid;
    if (text == "adaptive") return PickerKind::adaptive;
    return std::nullopt;
}

std::string_view to_string(PickerKind k) {
    switch (k) {
        case PickerKind::rarest:
            return "rarest";
        case PickerKind::inorder:
            return "inorder";
        case PickerKind::beta:
            return "beta";
        case PickerKind::hybrid:
            return "hybrid";
        case PickerKind::adaptive:
            return "adaptive";
    }
    return "unknown";
}

void set_zone(SwarmSnapshot& s, PieceCount zone, bool server_takes) {
    s.horizon = server_takes ? zone : PieceCount(0);
    s.urgent = server_takes ? PieceCount(0) : zone;
}

void drop_from_plan(PiecePlan& plan, const PieceSet& pieces) {
    std::erase_if(plan.wanted, [&](PieceIndex p) { return pieces.has(p); });
    std::erase_if(plan.deadlines, [&](const PieceDeadline& d) { return pieces.has(d.piece); });
    for (auto p : pieces.pieces()) {
        auto i = static_cast<std::size_t>(p.value());
        if (i < plan.priority.size()) plan.priority[i] = 0;
    }
}

std::chrono::milliseconds SwarmSnapshot::time_until_needed(PieceIndex p) const {
    if (p <= playhead) return std::chrono::milliseconds(0);
    auto t = piece_duration * (p - playhead).value() - into_playhead_piece;
    return t.count() > 0 ? t : std::chrono::milliseconds(0);
}

SwarmSnapshot SwarmSnapshot::empty(PieceCount n) {
    SwarmSnapshot s;
    s.piece_count = n;
    s.had = PieceSet(n);
    s.in_flight = PieceSet(n);
    s.server_fetching = PieceSet(n);
    s.availability.assign(static_cast<std::size_t>(n.value()), 1);
    return s;
}

std::unique_ptr<PiecePolicy> make_policy(PickerKind kind, const PolicyConfig& config) {
    switch (kind) {
        case PickerKind::rarest:
            return std::make_unique<RarestPolicy>(config);
        case PickerKind::inorder:
            return std::make_unique<InOrderPolicy>(config);
        case PickerKind::beta:
            return std::make_unique<BetaPolicy>(config);
        case PickerKind::hybrid:
        case PickerKind::adaptive:
            return std::make_unique<HybridPolicy>(config, kind);
    }
    return nullptr;
}

double uniform_01(std::mt19937_64& engine) {
    return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

double sample_beta_1_2(std::mt19937_64& engine) {
    return 1.0 - std::sqrt(1.0 - uniform_01(engine));
}

double beta_1_2_cell_mass(std::int64_t i, std::int64_t n) {
    if (n <= 0 || i < 0 || i >= n) return 0.0;
    // F(b) - F(a) = (1 - a)^2 - (1 - b)^2 with a = i/n, b = (i+1)/n, exactly (2(n - i) - 1) / n^2.
    auto nn = static_cast<double>(n);
    return (2.0 * static_cast<double>(n - i) - 1.0) / (nn * nn);
}

std::vector<std::pair<PieceIndex, std::uint8_t>> priority_changes(const std::vector<std::uint8_t>& applied,
                                                                  const std::vector<std::uint8_t>& planned) {
    std::vector<std::pair<PieceIndex, std::uint8_t>> out;
    for (std::size_t i = 0; i < planned.size(); ++i) {
        auto before = i < applied.size() ? applied[i] : std::uint8_t{0};
        if (before != planned[i]) out.emplace_back(PieceIndex(static_cast<std::int32_t>(i)), planned[i]);
    }
    return out;
}

std::uint8_t priority_for_rank(std::size_t rank, std::int32_t top_tier) {
    std::size_t a = top_tier > 0 ? static_cast<std::size_t>(top_tier) : 1;
    std::size_t bound = a;
    std::uint8_t prio = 7;
    // Tier boundaries: a, 2a, 4a, 8a, 16a, 32a.
    while (prio > 1) {
        if (rank < bound) return prio;
        bound = (prio == 7) ? 2 * a : 2 * bound;
        --prio;
    }
    return 1;
}

}  // namespace toast::client
