#include "server/core/push_planner.hpp"
#include "toast/common/text.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

namespace toast::server {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The rendezvous weight of `box` for one stripe: the boxes in descending weight are that stripe's random
// order, and a box's weight does not depend on which other boxes exist.
std::uint64_t rendezvous(std::uint64_t seed, std::uint64_t title, std::uint32_t stripe, std::uint64_t box) {
    return mix(mix(mix(mix(seed) ^ title) ^ stripe) ^ box);
}

std::uint32_t piece_count(Bytes size, Bytes piece_size) {
    if (piece_size.value() == 0) return 0;
    return static_cast<std::uint32_t>((size.value() + piece_size.value() - 1) / piece_size.value());
}

struct BoxState {
    std::uint64_t hash = 0;
    double idle = 0;       // idle upload at the peak, bits/s
    double committed = 0;  // bits/s
    std::uint64_t bytes = 0;
    std::uint64_t quota = 0;
    // The larger of its committed share of idle upload and its used share of quota.
    double load() const {
        const double up = idle > 0 ? committed / idle : 1.0;
        const double room = quota > 0 ? static_cast<double>(bytes) / static_cast<double>(quota) : 1.0;
        return std::max(up, room);
    }
};

// Boxes compared for each holder, in the stripe's random order: more choices even the load out, fewer keep
// a box's holdings independent of the others'.
constexpr std::size_t kChoices = 4;

struct Placement {
    std::size_t box;
    std::uint32_t stripe;
    double upload;
};

}  // namespace

double expected_deficit(double viewers, double bitrate, double upload) {
    if (viewers <= 0) return 0;
    const double spread = std::sqrt(viewers);
    const auto first = static_cast<long>(std::max(0.0, std::floor(viewers - 12 * spread - 10)));
    const auto last = static_cast<long>(std::ceil(viewers + 12 * spread + 20));
    double sum = 0;
    for (long n = first; n <= last; ++n) {
        const double dn = static_cast<double>(n);
        const double p = std::exp(-viewers + dn * std::log(viewers) - std::lgamma(dn + 1));
        const double supply = std::min(dn * upload, std::max(0.0, dn - 1) * bitrate);
        sum += p * (dn * bitrate - supply);
    }
    return std::max(0.0, sum);
}

std::vector<PieceSpan> stripe_pieces(std::uint32_t pieces, std::uint32_t chunk_pieces, std::uint32_t stripes,
                                     std::uint32_t stripe) {
    std::vector<PieceSpan> out;
    if (chunk_pieces == 0 || stripes == 0) return out;
    const std::uint32_t chunks = (pieces + chunk_pieces - 1) / chunk_pieces;
    for (std::uint32_t c = stripe; c < chunks; c += stripes) {
        const std::uint32_t first = c * chunk_pieces;
        out.push_back({first, std::min(first + chunk_pieces, pieces) - 1});
    }
    return out;
}

Bytes span_bytes(const std::vector<PieceSpan>& spans, Bytes size, Bytes piece_size) {
    std::uint64_t total = 0;
    const auto ps = piece_size.value();
    for (const auto& s : spans) {
        const std::uint64_t begin = std::uint64_t(s.first) * ps;
        const std::uint64_t end = std::min<std::uint64_t>((std::uint64_t(s.last) + 1) * ps, size.value());
        if (end > begin) total += end - begin;
    }
    return Bytes(total);
}

std::vector<PieceSpan> merge_spans(std::vector<PieceSpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const PieceSpan& a, const PieceSpan& b) {
        return a.first != b.first ? a.first < b.first : a.last < b.last;
    });
    std::vector<PieceSpan> out;
    for (const auto& s : spans) {
        if (!out.empty() && std::uint64_t(s.first) <= std::uint64_t(out.back().last) + 1) {
            out.back().last = std::max(out.back().last, s.last);
        } else {
            out.push_back(s);
        }
    }
    return out;
}

namespace {

// The boxes before any title is placed, and the upload one holder of a stripe is asked to commit.
struct Fleet {
    std::vector<BoxState> state;
    double mean_upload = 0;  // bits/s
    double target = 0;       // bits/s: the median idle box's upload times holder_share
};

Fleet fleet_at_peak(const std::vector<PlanBox>& boxes, const PlannerSettings& settings) {
    Fleet f;
    const double n = static_cast<double>(boxes.size());
    const double idle_share = n > 0 ? std::clamp(1.0 - settings.peak_viewers / n, 0.0, 1.0) : 0.0;
    f.state.resize(boxes.size());
    std::vector<double> idle;
    double upload_sum = 0;
    for (std::size_t b = 0; b < boxes.size(); ++b) {
        f.state[b].hash = fnv1a(boxes[b].id);
        f.state[b].idle = static_cast<double>(boxes[b].upload.value()) * idle_share;
        f.state[b].quota = boxes[b].quota.value();
        upload_sum += static_cast<double>(boxes[b].upload.value());
        if (f.state[b].idle > 0) idle.push_back(f.state[b].idle);
    }
    f.mean_upload = n > 0 ? upload_sum / n : 0;
    double median_idle = 0;
    if (!idle.empty()) {
        std::nth_element(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(idle.size() / 2),
                         idle.end());
        median_idle = idle[idle.size() / 2];
    }
    f.target = median_idle * std::clamp(settings.holder_share, 0.01, 1.0);
    return f;
}

// The titles, most demanded first (ties by name), so that the hottest get the boxes' room first.
std::vector<std::size_t> by_demand(const std::vector<PlanTitle>& titles) {
    std::vector<std::size_t> order(titles.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (titles[a].demand != titles[b].demand) return titles[a].demand > titles[b].demand;
        return titles[a].name < titles[b].name;
    });
    return order;
}

// A title's expected peak deficit, and in `note` why it gets no stripes (empty: it gets some).
TitlePlan title_need(const PlanTitle& t, double viewers_share, double scale, const Fleet& fleet,
                     const PlannerSettings& settings) {
    TitlePlan tp;
    tp.name = t.name;
    tp.info_hash = t.info_hash;
    tp.size = t.size;
    tp.piece_size = t.piece_size;
    tp.bitrate = t.bitrate;
    tp.demand = t.demand;
    const double bitrate = static_cast<double>(t.bitrate.value());
    tp.expected_viewers = settings.peak_viewers * viewers_share;
    tp.deficit_bps = expected_deficit(tp.expected_viewers * scale, bitrate, fleet.mean_upload);
    if (tp.deficit_bps < 0.01 * bitrate) tp.deficit_bps = 0;
    if (t.demand <= 0) {
        tp.note = "no demand";
    } else if (tp.deficit_bps <= 0) {
        tp.note = "deficit under 1% of its bitrate";
    } else if (piece_count(t.size, t.piece_size) == 0) {
        tp.note = "empty title";
    } else if (fleet.target <= 0) {
        tp.note = "no idle upload";
    }
    return tp;
}

// One stripe's candidate holders and what the title's placement has used so far.
struct StripeChoice {
    const std::vector<std::pair<std::uint64_t, std::size_t>>& ranking;  // the stripe's random order
    const std::vector<BoxState>& state;
    const std::vector<char>& holds_stripe;
    const std::vector<char>& holds_title;
    std::uint64_t bytes;  // the stripe's
};

// A box that can commit a whole share (or, failing that, any upload; or, for the first `replicas`, only
// room), preferring boxes without another stripe of the title: of the first kChoices such in the stripe's
// order, the least loaded. None: the state's size.
std::size_t pick_holder(const StripeChoice& c, double share, bool for_replicas) {
    const std::size_t none = c.state.size();
    std::size_t pick = none;
    for (int pass = 0; pass < 6 && pick == none; ++pass) {
        const bool fresh_only = pass % 2 == 0;
        const int level = pass / 2;  // 0: a whole share, 1: some upload, 2: room only
        if (level == 2 && !for_replicas) break;
        std::size_t seen = 0;
        for (const auto& [weight, b] : c.ranking) {
            const auto& bs = c.state[b];
            if (c.holds_stripe[b] || (fresh_only && c.holds_title[b]) || bs.bytes + c.bytes > bs.quota)
                continue;
            const double left = bs.idle - bs.committed;
            if ((level == 0 && left + 1e-9 < share) || (level == 1 && left <= 1e-9)) continue;
            if (pick == none || bs.load() < c.state[pick].load()) pick = b;
            if (++seen == kChoices) break;
        }
    }
    return pick;
}

struct Striping {
    std::vector<BoxState> state;  // the boxes with the title placed
    std::vector<Placement> placed;
    std::vector<std::vector<std::size_t>> holders;  // per stripe
};

// Places a title's stripes on a copy of the boxes' state, so that a title that cannot be placed whole leaves
// no trace: nullopt when some stripe cannot get `replicas` holders.
std::optional<Striping> stripe_title(const PlanTitle& t, const TitlePlan& tp, std::uint32_t stripes,
                                     double target, const std::vector<BoxState>& state,
                                     const PlannerSettings& settings) {
    const std::uint32_t replicas = std::max<std::uint32_t>(settings.replicas, 2);
    const std::uint32_t chunk = std::max<std::uint32_t>(settings.chunk_pieces, 1);
    const std::uint32_t pieces = piece_count(t.size, t.piece_size);
    const double per_stripe = tp.deficit_bps / stripes;
    const auto k =
        static_cast<std::uint32_t>(std::max<double>(replicas, std::ceil(per_stripe / target - 1e-9)));
    const double commit = per_stripe / k;

    Striping out{.state = state, .placed = {}, .holders = std::vector<std::vector<std::size_t>>(stripes)};
    std::vector<char> holds_title(state.size(), 0);
    const auto title_hash = fnv1a(t.name);
    std::vector<std::pair<std::uint64_t, std::size_t>> ranking(state.size());
    for (std::uint32_t s = 0; s < stripes; ++s) {
        const auto bytes = span_bytes(stripe_pieces(pieces, chunk, stripes, s), t.size, t.piece_size).value();
        for (std::size_t b = 0; b < state.size(); ++b)
            ranking[b] = {rendezvous(settings.seed, title_hash, s, out.state[b].hash), b};
        std::sort(ranking.begin(), ranking.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        std::vector<char> holds_stripe(state.size(), 0);
        const StripeChoice choice{.ranking = ranking,
                                  .state = out.state,
                                  .holds_stripe = holds_stripe,
                                  .holds_title = holds_title,
                                  .bytes = bytes};
        auto& holders = out.holders[s];
        double need = per_stripe;
        // Holders until the stripe's deficit is committed and it has `replicas` of them.
        while (holders.size() < replicas || need > 1e-6) {
            const double share = std::min(commit, std::max(need, 0.0));
            const std::size_t pick = pick_holder(choice, share, holders.size() < replicas);
            if (pick == state.size()) break;
            auto& bs = out.state[pick];
            const double upload = std::max(0.0, std::min(share, bs.idle - bs.committed));
            bs.committed += upload;
            bs.bytes += bytes;
            need -= upload;
            holds_stripe[pick] = 1;
            holds_title[pick] = 1;
            holders.push_back(pick);
            out.placed.push_back({pick, s, upload});
        }
        if (holders.size() < replicas) return std::nullopt;
    }
    return out;
}

// Per box, the holdings being built: (title index in plan.titles -> holding).
using Holdings = std::vector<std::vector<Holding>>;

void record_placements(const std::vector<Placement>& placed, std::size_t title_index, const PlanTitle& t,
                       std::uint32_t stripes, const PlannerSettings& settings, TitlePlan& tp,
                       Holdings& holdings) {
    const std::uint32_t chunk = std::max<std::uint32_t>(settings.chunk_pieces, 1);
    const std::uint32_t pieces = piece_count(t.size, t.piece_size);
    for (const auto& p : placed) {
        tp.covered_bps += p.upload;
        auto& list = holdings[p.box];
        if (list.empty() || list.back().title != title_index)
            list.push_back(Holding{
                .title = title_index, .stripes = {}, .pieces = {}, .bytes = Bytes(0), .upload_bps = 0});
        auto& h = list.back();
        h.stripes.push_back(p.stripe);
        h.upload_bps += p.upload;
        auto spans = stripe_pieces(pieces, chunk, stripes, p.stripe);
        h.pieces.insert(h.pieces.end(), spans.begin(), spans.end());
    }
}

}  // namespace

PushPlan plan_push(const std::vector<PlanTitle>& titles, const std::vector<PlanBox>& boxes,
                   const PlannerSettings& settings) {
    PushPlan plan;
    const std::uint32_t replicas = std::max<std::uint32_t>(settings.replicas, 2);
    const std::uint32_t chunk = std::max<std::uint32_t>(settings.chunk_pieces, 1);
    Fleet fleet = fleet_at_peak(boxes, settings);
    for (std::size_t b = 0; b < boxes.size(); ++b) {
        plan.boxes.push_back(BoxPlan{.id = boxes[b].id,
                                     .holdings = {},
                                     .bytes = Bytes(0),
                                     .committed_bps = 0,
                                     .idle_upload_bps = fleet.state[b].idle});
    }
    double total_demand = 0;
    for (const auto& t : titles)
        total_demand += std::max(0.0, t.demand);
    const double peak = std::max(0.0, settings.peak_viewers);
    const double scale = peak > 0 ? (peak + std::max(0.0, settings.headroom) * std::sqrt(peak)) / peak : 1.0;

    Holdings holdings(boxes.size());
    for (std::size_t i : by_demand(titles)) {
        const auto& t = titles[i];
        const double share = t.demand > 0 && total_demand > 0 ? t.demand / total_demand : 0.0;
        TitlePlan tp = title_need(t, share, scale, fleet, settings);
        if (!tp.note.empty()) {
            plan.titles.push_back(std::move(tp));
            continue;
        }
        const std::uint32_t chunks = (piece_count(t.size, t.piece_size) + chunk - 1) / chunk;
        const auto wanted_stripes = std::max(std::ceil(tp.deficit_bps / (replicas * fleet.target)),
                                             static_cast<double>(settings.min_stripes));
        const auto stripes =
            static_cast<std::uint32_t>(std::clamp(wanted_stripes, 1.0, static_cast<double>(chunks)));
        auto striping = stripe_title(t, tp, stripes, fleet.target, fleet.state, settings);
        if (!striping) {
            tp.note = "no room for " + std::to_string(replicas) + " holders of every stripe";
            plan.titles.push_back(std::move(tp));
            continue;
        }
        fleet.state = std::move(striping->state);
        tp.stripes = stripes;
        tp.holders = std::move(striping->holders);
        record_placements(striping->placed, plan.titles.size(), t, stripes, settings, tp, holdings);
        if (tp.covered_bps + 1e-6 < tp.deficit_bps) tp.note = "idle upload covers part of its deficit";
        plan.titles.push_back(std::move(tp));
    }

    for (std::size_t b = 0; b < boxes.size(); ++b) {
        auto& bp = plan.boxes[b];
        for (auto& h : holdings[b]) {
            std::sort(h.stripes.begin(), h.stripes.end());
            h.pieces = merge_spans(std::move(h.pieces));
            const auto& tp = plan.titles[h.title];
            h.bytes = span_bytes(h.pieces, tp.size, tp.piece_size);
            bp.bytes += h.bytes;
            bp.committed_bps += h.upload_bps;
            bp.holdings.push_back(std::move(h));
        }
    }
    return plan;
}

}  // namespace toast::server
