#include "server/core/title_demand.hpp"

#include <cmath>

namespace toast::server {

namespace {

constexpr double kSecondsPerHour = 3600.0;

double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

}  // namespace

TitleDemand::TitleDemand(std::chrono::nanoseconds half_life) : half_life_(half_life) {}

double TitleDemand::decayed(const Entry& e, Time now) const {
    if (now <= e.at) return e.per_hour;
    return e.per_hour * std::exp2(-seconds(now - e.at) / seconds(half_life_));
}

void TitleDemand::seed(const std::string& title, double per_hour, Time now) {
    titles_[title] = Entry{per_hour, now};
}

void TitleDemand::record_start(const std::string& title, Time now) {
    // An exponential kernel of time constant tau = half_life / ln 2: each start adds 1/tau (in starts per
    // hour), so a steady rate r accumulates to r.
    const double tau_hours = seconds(half_life_) / std::log(2.0) / kSecondsPerHour;
    auto& e = titles_[title];
    e.per_hour = decayed(e, now) + 1.0 / tau_hours;
    if (now > e.at) e.at = now;
    ++starts_;
}

double TitleDemand::rate(std::string_view title, Time now) const {
    auto it = titles_.find(title);
    return it == titles_.end() ? 0.0 : decayed(it->second, now);
}

std::map<std::string, double> TitleDemand::rates(Time now) const {
    std::map<std::string, double> out;
    for (const auto& [name, e] : titles_)
        out[name] = decayed(e, now);
    return out;
}

}  // namespace toast::server
