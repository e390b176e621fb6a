#include "server/core/admission.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "server/core/block_math.hpp"

namespace toast::server {

namespace {

// The stream round in which chunk j is read: chunks 0 and 1 in round 0, chunk j one round before it is sent.
std::size_t read_round(std::size_t chunk) {
    return chunk == 0 ? 0 : chunk - 1;
}

}  // namespace

StreamDemand stream_demand(const StreamSchedule& schedule, std::uint64_t block_size,
                           std::vector<std::vector<std::uint32_t>> replicas, std::uint64_t max_read,
                           Reservation reservation) {
    StreamDemand d;
    d.replicas = std::move(replicas);
    const std::size_t n = schedule.chunks.size();
    d.reads.resize(n);
    d.send.assign(n, 0);
    d.buffer.assign(n, 0);
    const std::uint64_t size = schedule.total();
    if (size == 0) return d;

    // Each chunk's reads as the server issues them.
    std::vector<std::vector<StreamDemand::Read>> chunk_reads(n);
    std::uint64_t offset = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const std::uint64_t bytes = schedule.chunks[j];
        for (std::uint64_t pos = offset; pos < offset + bytes;) {
            const std::uint64_t window = std::min(max_read, offset + bytes - pos);
            for (const auto& piece : split_range(pos, window, size, block_size))
                chunk_reads[j].push_back({piece.block, piece.length});
            pos += window;
        }
        if (reservation == Reservation::peak && chunk_reads[j].empty()) {
            // A round that needs nothing new is reserved on the block it would read next.
            chunk_reads[j].push_back({std::min(offset, size - 1) / block_size, 0});
        }
        offset += bytes;
    }

    // Peak-rate reservation: every chunk costs what the costliest one does, in bytes and in disk accesses
    // (at a disk's access time, the number of reads matters as much as their size).
    std::uint64_t peak_bytes = 0;
    std::size_t peak_reads = 0;
    for (std::size_t j = n == 1 ? 0 : 1; j < n; ++j) {
        peak_bytes = std::max(peak_bytes, schedule.chunks[j]);
        peak_reads = std::max(peak_reads, chunk_reads[j].size());
    }
    if (n == 1) {
        peak_bytes = (schedule.chunks[0] + 1) / 2;
        peak_reads = (peak_reads + 1) / 2;
    }

    for (std::size_t j = 0; j < n; ++j) {
        auto& reads = chunk_reads[j];
        std::uint64_t reserved = schedule.chunks[j];
        if (reservation == Reservation::peak) {
            // Chunk 0 is the initial buffer and the first slice: two peak chunks.
            const std::uint64_t times = j == 0 ? 2 : 1;
            reserved = times * peak_bytes;
            const std::size_t count = std::max<std::size_t>(1, times * peak_reads);
            // Accesses the chunk lacks fall on the last block it touches; the reserved bytes are shared
            // evenly, the last read taking the rounding.
            while (reads.size() < count)
                reads.push_back({reads.back().block, 0});
            for (std::size_t i = 0; i < reads.size(); ++i)
                reads[i].bytes =
                    reserved / reads.size() + (i + 1 == reads.size() ? reserved % reads.size() : 0);
        }
        auto& round_reads = d.reads[read_round(j)];
        round_reads.insert(round_reads.end(), reads.begin(), reads.end());
        d.send[j] = reserved;
        for (std::size_t r = read_round(j); r <= j; ++r)
            d.buffer[r] += reserved;
    }
    return d;
}

AdmissionLedger::AdmissionLedger(AdmissionLimits limits, std::size_t disks)
    : limits_(limits), disks_(disks) {}

const AdmissionLedger::RoundLoad* AdmissionLedger::find(std::int64_t round) const {
    if (!based_ || round < base_ || round - base_ >= static_cast<std::int64_t>(rounds_.size()))
        return nullptr;
    return &rounds_[static_cast<std::size_t>(round - base_)];
}

AdmissionLedger::RoundLoad& AdmissionLedger::at(std::int64_t round) {
    if (!based_) {
        base_ = round;
        based_ = true;
    }
    while (round < base_) {
        rounds_.push_front(RoundLoad{std::vector<double>(disks_, 0.0), 0, 0});
        --base_;
    }
    while (round - base_ >= static_cast<std::int64_t>(rounds_.size()))
        rounds_.push_back(RoundLoad{std::vector<double>(disks_, 0.0), 0, 0});
    return rounds_[static_cast<std::size_t>(round - base_)];
}

double AdmissionLedger::disk_seconds(std::int64_t round, std::size_t disk) const {
    const auto* r = find(round);
    return r && disk < r->disk.size() ? r->disk[disk] : 0.0;
}

std::uint64_t AdmissionLedger::network_bytes(std::int64_t round) const {
    const auto* r = find(round);
    return r ? r->network : 0;
}

std::uint64_t AdmissionLedger::buffer_bytes(std::int64_t round) const {
    const auto* r = find(round);
    return r ? r->buffer : 0;
}

AdmissionLedger::Trial AdmissionLedger::evaluate(const StreamDemand& demand, std::span<const DiskCost> disks,
                                                 std::int64_t start, std::int64_t now_round, double elapsed,
                                                 Held* out) const {
    Trial trial;
    const double round_seconds = std::chrono::duration<double>(limits_.round).count();
    std::vector<double> own(disks_, 0.0);
    std::vector<bool> touched(disks_, false);
    if (out) {
        out->start = start;
        out->disk.assign(demand.rounds(), {});
        out->send = demand.send;
        out->buffer = demand.buffer;
    }
    for (std::size_t j = 0; j < demand.rounds(); ++j) {
        const std::int64_t r = start + static_cast<std::int64_t>(j);
        // The current round offers only what is left of it.
        const double part = r == now_round ? std::max(0.0, 1.0 - elapsed) : 1.0;
        const RoundLoad* load = find(r);
        const double disk_cap = round_seconds * limits_.disk_share * part;

        if (limits_.network_bytes_per_round > 0 && demand.send[j] > 0) {
            const double cap = static_cast<double>(limits_.network_bytes_per_round) * part;
            if (static_cast<double>((load ? load->network : 0) + demand.send[j]) > cap * (1 + 1e-9)) {
                trial.refusal = Refusal::network;
                return trial;
            }
        }
        if (limits_.buffer_bytes > 0 && (load ? load->buffer : 0) + demand.buffer[j] > limits_.buffer_bytes) {
            trial.refusal = Refusal::buffer;
            return trial;
        }

        std::fill(own.begin(), own.end(), 0.0);
        std::fill(touched.begin(), touched.end(), false);
        for (const auto& read : demand.reads[j]) {
            std::optional<std::uint32_t> best;
            double best_total = std::numeric_limits<double>::infinity();
            double best_cost = 0;
            for (auto disk : demand.replicas[read.block]) {
                if (disk >= disks_ || disk >= disks.size() || !disks[disk].online) continue;
                const double cost = disks[disk].seconds(read.bytes);
                const double total = (load ? load->disk[disk] : 0.0) + own[disk] + cost;
                if (total < best_total) {
                    best = disk;
                    best_total = total;
                    best_cost = cost;
                }
            }
            if (!best) {
                trial.refusal = Refusal::unavailable;
                return trial;
            }
            // A hair of tolerance so that reads which fill a round exactly fit despite rounding.
            if (best_total > disk_cap * (1 + 1e-9)) {
                trial.refusal = Refusal::disk;
                return trial;
            }
            own[*best] += best_cost;
            touched[*best] = true;
            if (out) out->disk[j].emplace_back(*best, best_cost);
        }
        if (disk_cap > 0) {
            for (std::size_t d = 0; d < disks_; ++d)
                if (touched[d])
                    trial.peak = std::max(trial.peak, ((load ? load->disk[d] : 0.0) + own[d]) / disk_cap);
        }
    }
    trial.fits = true;
    return trial;
}

AdmissionLedger::Decision AdmissionLedger::admit(const StreamDemand& demand, std::span<const DiskCost> disks,
                                                 std::int64_t now_round, double elapsed) {
    Decision decision;
    const auto window = static_cast<std::int64_t>(limits_.latency_rounds);
    const std::int64_t last = now_round + window;

    // Candidate start rounds in the order the policy tries them.
    std::vector<std::int64_t> order;
    if (limits_.policy == StartPolicy::last_scheduled && last_start_ && *last_start_ > now_round &&
        *last_start_ <= last) {
        for (auto s = *last_start_; s <= last; ++s)
            order.push_back(s);
        for (auto s = now_round; s < *last_start_; ++s)
            order.push_back(s);
    } else {
        for (auto s = now_round; s <= last; ++s)
            order.push_back(s);
    }

    std::optional<std::int64_t> chosen;
    double chosen_peak = std::numeric_limits<double>::infinity();
    for (auto s : order) {
        const Trial t = evaluate(demand, disks, s, now_round, elapsed, nullptr);
        if (s == now_round) decision.refusal = t.fits ? Refusal::none : t.refusal;
        if (!t.fits) {
            if (t.refusal == Refusal::unavailable) return decision;  // no start round can help
            continue;
        }
        if (limits_.policy != StartPolicy::minimal_load) {
            chosen = s;
            break;
        }
        if (t.peak < chosen_peak) {
            chosen = s;
            chosen_peak = t.peak;
        }
    }
    if (!chosen) {
        for (auto s = last + 1; s <= last + static_cast<std::int64_t>(limits_.retry_search_rounds); ++s) {
            if (evaluate(demand, disks, s, now_round, elapsed, nullptr).fits) {
                decision.retry_round = s;
                break;
            }
        }
        return decision;
    }

    Held held;
    evaluate(demand, disks, *chosen, now_round, elapsed, &held);
    for (std::size_t j = 0; j < demand.rounds(); ++j) {
        auto& load = at(*chosen + static_cast<std::int64_t>(j));
        for (const auto& [disk, seconds] : held.disk[j])
            load.disk[disk] += seconds;
        load.network += held.send[j];
        load.buffer += held.buffer[j];
    }
    Admission a;
    a.id = next_id_++;
    a.start_round = *chosen;
    a.disks.resize(demand.rounds());
    for (std::size_t j = 0; j < demand.rounds(); ++j)
        for (const auto& [disk, seconds] : held.disk[j])
            a.disks[j].push_back(disk);
    held_.emplace(a.id, std::move(held));
    last_start_ = *chosen;
    decision.refusal = Refusal::none;
    decision.admitted = std::move(a);
    return decision;
}

void AdmissionLedger::release(std::uint64_t id, std::int64_t from_round) {
    auto it = held_.find(id);
    if (it == held_.end()) return;
    const Held& h = it->second;
    for (std::size_t j = 0; j < h.send.size(); ++j) {
        const std::int64_t r = h.start + static_cast<std::int64_t>(j);
        if (r < from_round || !find(r)) continue;
        auto& load = at(r);
        for (const auto& [disk, seconds] : h.disk[j])
            load.disk[disk] = std::max(0.0, load.disk[disk] - seconds);
        load.network -= std::min(load.network, h.send[j]);
        load.buffer -= std::min(load.buffer, h.buffer[j]);
    }
    held_.erase(it);
}

void AdmissionLedger::forget_before(std::int64_t round) {
    while (based_ && !rounds_.empty() && base_ < round) {
        rounds_.pop_front();
        ++base_;
    }
    std::erase_if(held_, [&](const auto& kv) {
        return kv.second.start + static_cast<std::int64_t>(kv.second.send.size()) <= round;
    });
}

}  // namespace toast::server
