#include "server/http/stream_admission.hpp"

#include <algorithm>
#include <cmath>

namespace toast::server {

namespace {

AdmissionLimits limits_of(const ServerConfig& config) {
    const auto& a = config.admission;
    AdmissionLimits l;
    l.round = config.time_slice;
    l.disk_share = a.disk_share;
    l.network_bytes_per_round = a.network.value() == 0 ? 0 : bytes_in(a.network, config.time_slice).value();
    l.buffer_bytes = a.buffer.value();
    const auto latency = a.start_latency.value_or(config.time_slice);
    l.latency_rounds = static_cast<std::uint32_t>((latency.count() + config.time_slice.count() - 1) /
                                                  config.time_slice.count());
    l.policy = a.start_policy;
    return l;
}

const char* refusal_text(AdmissionLedger::Refusal r) {
    switch (r) {
        case AdmissionLedger::Refusal::disk:
            return "disk time";
        case AdmissionLedger::Refusal::network:
            return "network";
        case AdmissionLedger::Refusal::buffer:
            return "buffer memory";
        default:
            return "unavailable";
    }
}

}  // namespace

StreamAdmission::StreamAdmission(const ServerConfig& config, DiskControl& disks, MetricsRegistry& metrics,
                                 std::uint64_t max_read, Clock::time_point epoch)
    : round_(config.time_slice),
      reserve_peak_(config.admission.reserve_peak),
      max_read_(std::max<std::uint64_t>(1, max_read)),
      epoch_(epoch),
      disks_(disks),
      disk_count_(config.disks.size()),
      ledger_(limits_of(config), config.disks.size()),
      admitted_(metrics.counter("toast_admission_decisions_total", "Paced streams admitted or refused",
                                Labels{{"result", "admitted"}})),
      active_(
          metrics.gauge("toast_admission_active_streams", "Admitted paced streams holding reservations")) {
    const char* reasons[] = {"disk", "network", "buffer", "unavailable"};
    for (int i = 0; i < 4; ++i) {
        refused_[i] = &metrics.counter("toast_admission_decisions_total", "Paced streams admitted or refused",
                                       Labels{{"result", std::string("refused_") + reasons[i]}});
    }
}

StreamAdmission::Ticket::~Ticket() {
    owner_.release(id_);
}

std::int64_t StreamAdmission::round_of(Clock::time_point t) const {
    const auto since = std::max(Clock::duration::zero(), t - epoch_);
    return static_cast<std::int64_t>(since / round_);
}

StreamAdmission::Decision StreamAdmission::admit(const TitleInfo& title, Clock::time_point now) {
    Decision d;
    if (title.size == 0 || title.bitrate.value() == 0 || title.block_size == 0 ||
        title.block_disks.size() < (title.size + title.block_size - 1) / title.block_size) {
        d.reason = "the title has no layout to admit against";
        d.retry_after = std::chrono::seconds(1);
        return d;
    }
    std::vector<DiskCost> costs;
    for (const auto& s : disks_.disk_status())
        costs.push_back(DiskCost{!s.fault.offline, s.access_seconds, s.seconds_per_byte});
    const auto schedule = title_schedule(title.size, title.bitrate, title.trace.get(), round_);
    const auto demand = stream_demand(schedule, title.block_size, title.block_disks, max_read_,
                                      reserve_peak_ ? Reservation::peak : Reservation::trace);

    const auto now_round = round_of(now);
    const double elapsed = std::chrono::duration<double>(now - (epoch_ + now_round * round_)) /
                           std::chrono::duration<double>(round_);
    std::lock_guard lock(mutex_);
    ledger_.forget_before(now_round - 1);
    auto decision = ledger_.admit(demand, costs, now_round, std::clamp(elapsed, 0.0, 1.0));
    if (decision.admitted) {
        admitted_.inc();
        active_.set(static_cast<double>(ledger_.active()));
        d.ticket = std::make_shared<Ticket>(*this, decision.admitted->id);
        d.start = std::max(now, epoch_ + decision.admitted->start_round * round_);
        return d;
    }
    const auto refusal = decision.refusal == AdmissionLedger::Refusal::none ? AdmissionLedger::Refusal::disk
                                                                            : decision.refusal;
    refused_[static_cast<int>(refusal) - 1]->inc();
    d.reason = std::string("admission control: not enough ") + refusal_text(refusal) +
               " for another stream of \"" + title.name + "\"";
    const auto horizon = decision.retry_round ? epoch_ + *decision.retry_round * round_
                                              : now + ledger_.limits().retry_search_rounds * round_;
    const double wait = std::chrono::duration<double>(horizon - now).count();
    d.retry_after =
        std::chrono::seconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(wait))));
    return d;
}

StreamAdmission::Room StreamAdmission::room(Clock::time_point now) {
    const auto now_round = round_of(now);
    const double limit = ledger_.limits().disk_share * std::chrono::duration<double>(round_).count();
    std::lock_guard lock(mutex_);
    double busiest = 0;
    for (auto r = now_round; r <= now_round + kRoomRounds; ++r)
        for (std::size_t d = 0; d < disk_count_; ++d)
            busiest = std::max(busiest, ledger_.disk_seconds(r, d) / limit);
    return Room{std::clamp(1.0 - busiest, 0.0, 1.0), ledger_.active()};
}

void StreamAdmission::release(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    ledger_.release(id, round_of(Clock::now()));
    active_.set(static_cast<double>(ledger_.active()));
}

}  // namespace toast::server
