// Which VoD server URL the fallback fetcher asks next. Servers that failed back off exponentially; among the
// rest a server without recent failures comes first, then one that has not recently answered after the
// request's deadline (Toast-Late: its disks are behind), then one never measured (so every URL gets tried),
// then the fastest observed throughput. A late server is still used when it is the only one left: late bytes
// beat none. Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace toast::client {

class ServerPool {
  public:
    using Clock = std::chrono::steady_clock;
    struct Backoff {
        std::chrono::milliseconds initial{200};
        std::chrono::milliseconds max{3000};
        // How long a server that failed must answer without failing again before it is counted on (see
        // reachable()).
        std::chrono::milliseconds settle{1000};
    };

    ServerPool(std::size_t servers, Backoff backoff);

    // The server to use at `now`, or nullopt while every server is backing off. `avoid` (one that refused
    // the piece) is chosen only when no other server is usable.
    std::optional<std::size_t> choose(Clock::time_point now,
                                      std::optional<std::size_t> avoid = std::nullopt) const;
    // The server to ask for a piece that `holders` hold (a title on a tier, TierRoutes): of those usable and
    // not `avoid`, the power of two choices (toast/common/tier.hpp: on time before late, then by the
    // reported loads weighed by their age at `now`, drawn by `tie_break`). None when no holder is usable: the
    // caller falls back to choose(), whose server relays.
    std::optional<std::size_t> choose_holder(Clock::time_point now, std::span<const std::size_t> holders,
                                             std::optional<std::size_t> avoid = std::nullopt,
                                             std::uint64_t tie_break = 0) const;
    // The load the server reported with its last answer (Toast-Load: milliseconds of reads queued on its
    // average disk), heard at `now`: choose_holder weighs it by its age then.
    void on_load(std::size_t server, double load_ms, Clock::time_point now) {
        servers_.at(server).load = load_ms;
        servers_.at(server).load_at = now;
    }

    // When the first backing-off server becomes usable again.
    Clock::time_point next_ready() const;

    void on_success(std::size_t server, std::uint64_t bytes, std::chrono::nanoseconds took);
    // It failed (see FetchFault::server); `retry_after` is when it said to come back, if it did: it rests at
    // least that long.
    void on_failure(std::size_t server, Clock::time_point now,
                    std::optional<std::chrono::seconds> retry_after = std::nullopt);
    // The server answered, but after the deadline the request carried: it is passed over for backoff.max
    // while another server is usable.
    void on_late(std::size_t server, Clock::time_point now);
    bool late(std::size_t server, Clock::time_point now) const {
        return servers_.at(server).late_until > now;
    }

    // Observed throughput in bytes per second (exponentially weighted), 0 before the first success.
    double throughput(std::size_t server) const { return servers_.at(server).throughput; }
    // Some server can be counted on at `now`: it has not failed, or it answered since its last failure and
    // that failure is `settle` old. Until then the pieces it would take are asked of peers too. One that
    // answers some requests and refuses others (503s from an overloaded server) stays not counted on: the
    // answer would otherwise flip with each refusal and each success, and every flip re-plans which pieces
    // peers are asked for (and can make libtorrent drop every peer's request pipeline).
    bool reachable(Clock::time_point now) const;
    std::size_t size() const { return servers_.size(); }

  private:
    struct Server {
        double throughput = 0;
        int failures = 0;
        std::optional<Clock::time_point> failed_at;
        Clock::time_point ready_at{};
        Clock::time_point late_until{};
        std::optional<double> load;
        Clock::time_point load_at{};
    };
    Backoff backoff_;
    std::vector<Server> servers_;
};

// The delay before attempt `attempt` (1 = first retry): initial x 2^(attempt-1), capped at max.
std::chrono::milliseconds backoff_delay(int attempt, std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max);

}  // namespace toast::client
