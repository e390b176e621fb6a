#include "client/core/cache_policy.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace toast::client {

std::optional<CachePolicy> parse_cache_policy(std::string_view text) {
    if (text == "none") return CachePolicy::none;
    if (text == "lru") return CachePolicy::lru;
    if (text == "popularity") return CachePolicy::popularity;
    return std::nullopt;
}

std::string_view to_string(CachePolicy policy) {
    switch (policy) {
        case CachePolicy::none:
            return "none";
        case CachePolicy::popularity:
            return "popularity";
        case CachePolicy::lru:
            break;
    }
    return "lru";
}

namespace {

double size_of(const CacheEntry& e) {
    return static_cast<double>(std::max<std::uint64_t>(e.size.value(), 1));
}

double copies_of(const CacheEntry& e) {
    return static_cast<double>(std::max<std::int64_t>(e.copies, 0));
}

// The tie-break: demand over the copies, per byte.
double share_per_byte(const CacheEntry& e) {
    return std::max(0.0, e.demand) / (copies_of(e) + 1) / size_of(e);
}

}  // namespace

double need_per_byte(const CacheEntry& e) {
    const double viewers = std::max(0.0, e.demand) / 3600.0 * std::max(0.0, e.duration_s);
    const double bitrate = static_cast<double>(e.bitrate.value());
    const double upload = e.upload.value() > 0 ? static_cast<double>(e.upload.value()) : bitrate / 4;
    return std::max(0.0, viewers * bitrate - (viewers + copies_of(e)) * upload) / size_of(e);
}

EvictionPlan plan_cache_evictions(std::vector<CacheEntry> titles, Bytes quota, CachePolicy policy,
                                  Bytes incoming) {
    EvictionPlan plan;
    std::uint64_t used = incoming.value();
    for (const auto& t : titles)
        used += t.bytes.value();
    plan.used_after = Bytes(used);
    if (used <= quota.value()) return plan;
    auto by_age = [](const CacheEntry& a, const CacheEntry& b) {
        if (a.last_watched != b.last_watched) return a.last_watched < b.last_watched;
        return a.id < b.id;
    };
    if (policy == CachePolicy::popularity) {
        std::sort(titles.begin(), titles.end(), [&](const CacheEntry& a, const CacheEntry& b) {
            const double na = need_per_byte(a), nb = need_per_byte(b);
            if (na != nb) return na < nb;
            const double sa = share_per_byte(a), sb = share_per_byte(b);
            if (sa != sb) return sa < sb;
            return by_age(a, b);
        });
    } else {
        std::sort(titles.begin(), titles.end(), by_age);
    }
    std::vector<std::string> evict;
    for (const auto& t : titles) {
        if (used <= quota.value()) break;
        if (t.pinned) continue;
        evict.push_back(t.id);
        used -= t.bytes.value();
    }
    if (used > quota.value()) {
        plan.fits = false;
        return plan;
    }
    plan.evict = std::move(evict);
    plan.used_after = Bytes(used);
    return plan;
}

std::optional<std::map<std::string, double>> parse_catalog_demand(std::string_view text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("titles") || !j["titles"].is_array())
        return std::nullopt;
    std::map<std::string, double> out;
    for (const auto& t : j["titles"]) {
        if (!t.is_object() || !t.contains("info_hash") || !t["info_hash"].is_string() ||
            !t.contains("demand") || !t["demand"].is_number())
            continue;
        const auto d = t["demand"].get<double>();
        if (d >= 0) out[t["info_hash"].get<std::string>()] = d;
    }
    return out;
}

}  // namespace toast::client
