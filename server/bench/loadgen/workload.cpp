#include "server/bench/loadgen/workload.hpp"

#include <algorithm>
#include <cmath>

#include "toast/common/units.hpp"

namespace toast::loadgen {

namespace {

std::optional<double> seconds_of(std::string_view text) {
    auto d = parse_duration(text);
    if (!d) return std::nullopt;
    return std::chrono::duration<double>(*d).count();
}

// Index drawn from a cumulative table.
std::size_t draw(const std::vector<double>& cumulative, std::mt19937_64& rng) {
    const double u = uniform01(rng) * cumulative.back();
    auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
    return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

}  // namespace

double uniform01(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

std::optional<Arrivals> parse_arrivals(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const auto kind = text.substr(0, colon);
    const auto s = seconds_of(text.substr(colon + 1));
    if (!s || *s < 0) return std::nullopt;
    if (kind == "ramp") return Arrivals{Arrivals::Kind::ramp, *s};
    if (kind == "poisson" && *s > 0) return Arrivals{Arrivals::Kind::poisson, *s};
    return std::nullopt;
}

std::optional<Pick> parse_pick(std::string_view text) {
    if (text == "distinct") return Pick{Pick::Kind::distinct, 0};
    if (text == "weighted") return Pick{Pick::Kind::weighted, 0};
    if (text.substr(0, 5) == "zipf:") {
        try {
            std::size_t used = 0;
            const std::string number(text.substr(5));
            const double s = std::stod(number, &used);
            if (used != number.size() || !(s >= 0)) return std::nullopt;
            return Pick{Pick::Kind::zipf, s};
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

std::vector<double> arrival_times(const Arrivals& arrivals, std::size_t n, std::mt19937_64& rng) {
    std::vector<double> t(n, 0.0);
    if (arrivals.kind == Arrivals::Kind::ramp) {
        for (std::size_t i = 0; i < n; ++i)
            t[i] = n > 1 ? arrivals.seconds * static_cast<double>(i) / static_cast<double>(n) : 0.0;
        return t;
    }
    for (std::size_t i = 1; i < n; ++i)
        t[i] = t[i - 1] - arrivals.seconds * std::log1p(-uniform01(rng));
    return t;
}

std::vector<std::size_t> pick_titles(const Pick& pick, std::size_t n, const std::vector<double>& weights,
                                     std::mt19937_64& rng) {
    std::vector<std::size_t> out(n, 0);
    if (pick.kind == Pick::Kind::distinct) {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = i % weights.size();
        return out;
    }
    std::vector<double> cumulative;
    double sum = 0;
    for (std::size_t k = 0; k < weights.size(); ++k) {
        sum += pick.kind == Pick::Kind::zipf ? std::pow(static_cast<double>(k + 1), -pick.zipf_s)
                                             : std::max(0.0, weights[k]);
        cumulative.push_back(sum);
    }
    for (auto& o : out)
        o = draw(cumulative, rng);
    return out;
}

}  // namespace toast::loadgen
