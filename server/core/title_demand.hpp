// Each title's recent demand, as the catalogue publishes it and the push planner reads it: sessions started
// per hour, an exponentially decayed rate. Every start a box reports adds to its title; between starts every
// title's rate fades with the same half-life, so the titles' shares of the total do not change while nothing
// happens (last evening's ranking is still this morning's). A forecast (sessions per hour, per title) is the
// estimator's starting value: a new deployment has a ranking before any box has watched anything, and the
// counted starts take over as it fades. Pure: the time is passed in.
//
// A steady rate of r starts per hour reads r once the estimator has seen a few half-lives of them.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

namespace toast::server {

class TitleDemand {
  public:
    using Time = std::chrono::steady_clock::time_point;

    // `half_life` > 0.
    explicit TitleDemand(std::chrono::nanoseconds half_life);

    // Sets `title`'s rate to `per_hour` at `now` (a forecast), replacing what it had.
    void seed(const std::string& title, double per_hour, Time now);
    // One session of `title` started at `now`.
    void record_start(const std::string& title, Time now);
    // Sessions per hour at `now` (0 for a title never seen). `now` may not be earlier than the last update.
    double rate(std::string_view title, Time now) const;
    // Every title's rate at `now`, by name.
    std::map<std::string, double> rates(Time now) const;
    // Starts counted since construction (forecasts not included).
    std::uint64_t starts() const { return starts_; }
    std::chrono::nanoseconds half_life() const { return half_life_; }

  private:
    struct Entry {
        double per_hour = 0;  // at `at`
        Time at{};
    };
    double decayed(const Entry& e, Time now) const;

    std::chrono::nanoseconds half_life_;
    std::map<std::string, Entry, std::less<>> titles_;
    std::uint64_t starts_ = 0;
};

}  // namespace toast::server
