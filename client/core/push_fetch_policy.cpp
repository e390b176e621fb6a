#include "client/core/push_fetch_policy.hpp"

#include <algorithm>

namespace toast::client {

std::string_view to_string(PushState s) {
    switch (s) {
        case PushState::off:
            return "off";
        case PushState::no_assignment:
            return "no_assignment";
        case PushState::waiting_window:
            return "waiting_window";
        case PushState::paused_playing:
            return "paused_playing";
        case PushState::fetching:
            return "fetching";
        case PushState::complete:
            return "complete";
        case PushState::over_quota:
            return "over_quota";
    }
    return "?";
}

PushFetchPolicy::PushFetchPolicy(Settings settings) : settings_(settings) {}

PushFetchDecision PushFetchPolicy::decide(const PushFetchInput& in, Time now) {
    PushFetchDecision d;
    auto stop = [&](PushState s) {
        filling_ = false;
        d.state = s;
        d.cancel = in.in_flight > 0;
        return d;
    };
    if (!in.assigned) return stop(PushState::no_assignment);
    if (in.playing) return stop(PushState::paused_playing);
    if (in.unix_ms < in.window_start_ms || in.unix_ms >= in.window_end_ms)
        return stop(PushState::waiting_window);
    if (in.missing.empty()) {
        filling_ = false;
        d.state = in.in_flight > 0 ? PushState::fetching : PushState::complete;
        return d;
    }
    const double rate = static_cast<double>(settings_.rate.value()) / 8.0;  // bytes per second
    double largest = 0;
    for (const auto& p : in.missing)
        largest = std::max(largest, static_cast<double>(p.size.value()));
    // A second at the rate on top of the largest piece: a piece never waits for tokens the cap threw away.
    const double depth = rate + largest;
    if (filling_ && now > last_) tokens_ += rate * std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(tokens_, depth);
    filling_ = true;
    last_ = now;

    d.state = PushState::fetching;
    auto committed = in.held.value() + in.in_flight_bytes.value();
    auto in_flight = in.in_flight;
    for (const auto& p : in.missing) {
        if (in_flight >= settings_.max_in_flight) break;
        if (committed + p.size.value() > settings_.quota.value()) {
            if (d.start.empty() && in_flight == 0) d.state = PushState::over_quota;
            break;
        }
        if (tokens_ < static_cast<double>(p.size.value())) break;
        tokens_ -= static_cast<double>(p.size.value());
        committed += p.size.value();
        ++in_flight;
        d.start.push_back(p);
    }
    return d;
}

}  // namespace toast::client
