// toast-cache-sim: the three cache policies (client/core/cache_policy, the service's own code) against each
// other in the same sessions, in a fluid model of a catalogue evening. Not the swarm: a model of what the
// boxes hold and can upload, so the policies can be compared in seconds before the testbed runs them.
//
// Boxes watch Zipf-drawn titles (Poisson arrivals at a constant rate, peak concurrency as asked, 40% of
// sessions abandoned at 5-60%), keep what they watched by the policy within a disk quota, and start with
// `warm` titles each (drawn by Zipf) unless the policy keeps nothing. Every second, for every title with n
// viewers, the server sends max(0, n x bitrate - min(n x u, (n - 1) x bitrate) - idle), where idle is the
// upload of the boxes keeping the title and not watching (each idle box's upload split over the watched
// titles it keeps by the share of each it holds). The popularity policy reads each title's demand as the
// server counts it (session starts, decayed with a half-life of a tenth of the evening) and its copies (the
// other boxes keeping it). Prints, per policy, the server's bytes and 95th-percentile 10 s rate as reductions
// against unicast (every viewer from the server) for the same sessions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "client/core/cache_policy.hpp"

using namespace toast;
using namespace toast::client;

namespace {

struct Params {
    int boxes = 150;
    int titles = 30;
    double alpha = 0.9;
    double title_s = 120;
    double bitrate = 4e6;
    double uplink = 1e6;
    double quota_titles = 4;
    int warm = 3;
    double evening_s = 3600;
    double peak_pct = 10;
    std::uint64_t seed = 1;
};

struct Session {
    int box;
    int title;
    double start;
    double watched;  // fraction
};

double uniform(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

int zipf(const std::vector<double>& cdf, double u) {
    return static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
}

std::vector<double> zipf_cdf(const Params& p) {
    std::vector<double> cdf;
    double total = 0;
    for (int i = 1; i <= p.titles; ++i)
        total += 1 / std::pow(i, p.alpha);
    double acc = 0;
    for (int i = 1; i <= p.titles; ++i) {
        acc += 1 / std::pow(i, p.alpha) / total;
        cdf.push_back(acc);
    }
    cdf.back() = 1.0;
    return cdf;
}

std::vector<Session> sessions(const Params& p, std::mt19937_64& rng, const std::vector<double>& cdf) {
    const double mean_watch = p.title_s * (0.6 + 0.4 * (0.05 + 0.6) / 2);
    const double lambda = p.peak_pct / 100 * p.boxes / mean_watch;
    std::vector<double> busy_until(static_cast<std::size_t>(p.boxes), 0);
    std::vector<Session> out;
    for (double t = 0;;) {
        t += -std::log(1 - uniform(rng)) / lambda;
        if (t >= p.evening_s) break;
        const int title = zipf(cdf, uniform(rng));
        const double watched = uniform(rng) < 0.4 ? 0.05 + 0.55 * uniform(rng) : 1.0;
        std::vector<int> idle;
        for (int b = 0; b < p.boxes; ++b)
            if (busy_until[static_cast<std::size_t>(b)] <= t) idle.push_back(b);
        const double pick = uniform(rng);
        if (idle.empty()) continue;
        const int box = idle[static_cast<std::size_t>(pick * static_cast<double>(idle.size()))];
        busy_until[static_cast<std::size_t>(box)] = t + watched * p.title_s;
        out.push_back({box, title, t, watched});
    }
    return out;
}

struct Result {
    double server_bytes = 0, unicast_bytes = 0, server_p95 = 0, unicast_p95 = 0;
};

double p95(std::vector<double> bins) {
    if (bins.empty()) return 0;
    std::sort(bins.begin(), bins.end());
    return bins[static_cast<std::size_t>(0.95 * static_cast<double>(bins.size() - 1))];
}

Result run(const Params& p, CachePolicy policy, const std::vector<Session>& all,
           const std::vector<double>& cdf) {
    const auto size = static_cast<std::uint64_t>(p.title_s * p.bitrate / 8);
    const Bytes quota(static_cast<std::uint64_t>(p.quota_titles * static_cast<double>(size)));
    // What each box keeps: title -> (held fraction, last watched).
    std::vector<std::map<int, std::pair<double, double>>> kept(static_cast<std::size_t>(p.boxes));
    std::mt19937_64 warm_rng(p.seed + 7);
    if (keeps_watched_titles(policy)) {
        for (auto& box : kept) {
            for (int draws = 0; draws < 50 && static_cast<int>(box.size()) < p.warm; ++draws)
                box[zipf(cdf, uniform(warm_rng))] = {1.0, -1.0};
        }
    }
    const double half_life = p.evening_s / 10;
    std::vector<double> demand(static_cast<std::size_t>(p.titles), 0),
        demand_at(static_cast<std::size_t>(p.titles), 0);
    auto demand_now = [&](int t, double now) {
        return demand[static_cast<std::size_t>(t)] *
               std::exp2(-(now - demand_at[static_cast<std::size_t>(t)]) / half_life);
    };
    Result r;
    std::vector<double> server_bins, unicast_bins;
    double server_bin = 0, unicast_bin = 0;
    std::size_t next = 0;
    std::vector<const Session*> active;
    const double end = p.evening_s + p.title_s;
    for (double now = 0; now < end; now += 1) {
        // Sessions that ended keep (or not) what they watched.
        for (auto it = active.begin(); it != active.end();) {
            const auto* s = *it;
            if (s->start + s->watched * p.title_s > now) {
                ++it;
                continue;
            }
            auto& box = kept[static_cast<std::size_t>(s->box)];
            if (keeps_watched_titles(policy)) {
                auto& e = box[s->title];
                e = {std::max(e.first, s->watched), now};
                std::vector<CacheEntry> entries;
                for (auto& [t, held] : box) {
                    CacheEntry c;
                    c.id = std::to_string(t);
                    c.bytes = Bytes(static_cast<std::uint64_t>(held.first * static_cast<double>(size)));
                    c.size = Bytes(size);
                    c.last_watched = static_cast<std::int64_t>(held.second * 1000);
                    // Starts, decayed, as sessions started per hour.
                    c.demand = demand_now(t, now) * std::log(2.0) / half_life * 3600;
                    c.bitrate = BitRate(static_cast<std::uint64_t>(p.bitrate));
                    c.duration_s = p.title_s;
                    c.upload = BitRate(static_cast<std::uint64_t>(p.uplink));
                    for (const auto& other : kept)
                        c.copies += other.count(t);
                    c.copies -= 1;
                    entries.push_back(std::move(c));
                }
                for (const auto& id : plan_cache_evictions(std::move(entries), quota, policy).evict)
                    box.erase(std::stoi(id));
            }
            it = active.erase(it);
        }
        while (next < all.size() && all[next].start <= now) {
            const auto& s = all[next++];
            auto& d = demand[static_cast<std::size_t>(s.title)];
            d = demand_now(s.title, now) + 1;
            demand_at[static_cast<std::size_t>(s.title)] = now;
            active.push_back(&s);
        }
        std::vector<int> viewers(static_cast<std::size_t>(p.titles), 0);
        std::vector<char> watching(static_cast<std::size_t>(p.boxes), 0);
        for (const auto* s : active) {
            ++viewers[static_cast<std::size_t>(s->title)];
            watching[static_cast<std::size_t>(s->box)] = 1;
        }
        std::vector<double> idle_supply(static_cast<std::size_t>(p.titles), 0);
        for (int b = 0; b < p.boxes; ++b) {
            if (watching[static_cast<std::size_t>(b)]) continue;
            const auto& box = kept[static_cast<std::size_t>(b)];
            double held = 0;
            for (const auto& [t, e] : box)
                if (viewers[static_cast<std::size_t>(t)] > 0) held += e.first;
            // An idle box's upload is shared by the titles it keeps that are being watched, by share held.
            for (const auto& [t, e] : box)
                if (viewers[static_cast<std::size_t>(t)] > 0)
                    idle_supply[static_cast<std::size_t>(t)] += p.uplink * e.first / held;
        }
        double server = 0, unicast = 0;
        for (int t = 0; t < p.titles; ++t) {
            const double n = viewers[static_cast<std::size_t>(t)];
            if (n == 0) continue;
            const double from_viewers = std::min(n * p.uplink, (n - 1) * p.bitrate);
            server += std::max(0.0, n * p.bitrate - from_viewers - idle_supply[static_cast<std::size_t>(t)]);
            unicast += n * p.bitrate;
        }
        r.server_bytes += server / 8;
        r.unicast_bytes += unicast / 8;
        server_bin += server / 8;
        unicast_bin += unicast / 8;
        if (static_cast<long>(now) % 10 == 9) {
            server_bins.push_back(server_bin / 10 * 8);
            unicast_bins.push_back(unicast_bin / 10 * 8);
            server_bin = unicast_bin = 0;
        }
    }
    r.server_p95 = p95(server_bins);
    r.unicast_p95 = p95(unicast_bins);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    Params p;
    int seeds = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const double v = std::atof(argv[i + 1]);
        if (k == "--boxes")
            p.boxes = static_cast<int>(v);
        else if (k == "--titles")
            p.titles = static_cast<int>(v);
        else if (k == "--alpha")
            p.alpha = v;
        else if (k == "--title-s")
            p.title_s = v;
        else if (k == "--bitrate")
            p.bitrate = v;
        else if (k == "--uplink")
            p.uplink = v;
        else if (k == "--quota-titles")
            p.quota_titles = v;
        else if (k == "--warm")
            p.warm = static_cast<int>(v);
        else if (k == "--evening-s")
            p.evening_s = v;
        else if (k == "--peak-pct")
            p.peak_pct = v;
        else if (k == "--seeds")
            seeds = static_cast<int>(v);
        else {
            std::fprintf(stderr, "toast-cache-sim: unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (argc % 2 == 0) {
        std::fprintf(stderr, "toast-cache-sim: options come in pairs (--boxes N ...)\n");
        return 2;
    }
    std::printf(
        "boxes %d, titles %d, zipf %.2f, title %.0f s at %.1f Mbps, uplink %.2f Mbps, quota %.1f titles, "
        "warm %d, evening %.0f s, peak %.0f%%, %d seeds\n",
        p.boxes, p.titles, p.alpha, p.title_s, p.bitrate / 1e6, p.uplink / 1e6, p.quota_titles, p.warm,
        p.evening_s, p.peak_pct, seeds);
    std::printf("%-11s %22s %22s\n", "policy", "total reduction (med)", "peak p95 reduction (med)");
    const auto cdf = zipf_cdf(p);
    for (auto policy : {CachePolicy::none, CachePolicy::lru, CachePolicy::popularity}) {
        std::vector<double> total, peak;
        for (int s = 0; s < seeds; ++s) {
            Params q = p;
            q.seed = p.seed + static_cast<std::uint64_t>(s);
            std::mt19937_64 rng(q.seed);
            const auto all = sessions(q, rng, cdf);
            const auto r = run(q, policy, all, cdf);
            total.push_back(100 * (1 - r.server_bytes / r.unicast_bytes));
            peak.push_back(100 * (1 - r.server_p95 / r.unicast_p95));
        }
        std::sort(total.begin(), total.end());
        std::sort(peak.begin(), peak.end());
        std::printf("%-11s %21.1f%% %23.1f%%\n", std::string(to_string(policy)).c_str(),
                    total[total.size() / 2], peak[peak.size() / 2]);
    }
    return 0;
}
