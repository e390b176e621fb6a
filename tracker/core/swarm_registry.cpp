#include "tracker/core/swarm_registry.hpp"

#include <algorithm>
#include <cstring>

namespace toast::tracker {

std::string_view failure_reason(AnnounceRefusal r) {
    switch (r) {
        case AnnounceRefusal::not_whitelisted:
            return "info_hash is not served by this tracker";
        case AnnounceRefusal::too_many_swarms:
            return "tracker is full: too many swarms";
    }
    return "refused";
}

IpAddress effective_ip(const IpAddress& source, const std::optional<IpAddress>& requested,
                       const AddressSet& trusted) {
    if (requested && trusted.contains(source)) return *requested;
    return source;
}

std::size_t SwarmRegistry::KeyHasher::operator()(const InfoHash& h) const {
    return static_cast<std::size_t>(siphash24(key, h.view()));
}

std::size_t SwarmRegistry::KeyHasher::operator()(const PeerKey& k) const {
    char buf[20 + 16 + 1];
    std::memcpy(buf, k.id.bytes.data(), 20);
    std::memcpy(buf + 20, k.ip.bytes.data(), 16);
    buf[36] = k.ip.v6 ? 1 : 0;
    return static_cast<std::size_t>(siphash24(key, std::string_view(buf, sizeof buf)));
}

SwarmRegistry::SwarmRegistry(RegistryPolicy policy, SipKey hash_key)
    : policy_(policy), hasher_{hash_key}, swarms_(64, hasher_) {}

void SwarmRegistry::set_whitelist(std::optional<Whitelist> whitelist) {
    whitelist_ = std::move(whitelist);
}

bool SwarmRegistry::allowed(const InfoHash& info_hash) const {
    return !whitelist_ || whitelist_->contains(info_hash);
}

SwarmCounts SwarmRegistry::counts_of(const Swarm& s) {
    return SwarmCounts{.seeders = static_cast<std::uint32_t>(s.seeders.peers.size()),
                       .leechers = static_cast<std::uint32_t>(s.leechers.peers.size()),
                       .completed = s.completed,
                       .partial_seeds = static_cast<std::uint32_t>(s.partials)};
}

void SwarmRegistry::add_peer(Swarm& swarm, PeerRecord record, bool seeder) {
    auto& list = seeder ? swarm.seeders : swarm.leechers;
    swarm.slots[record.key] = Slot{seeder, list.peers.size()};
    if (record.partial) {
        swarm.partials++;
        total_partials_++;
    }
    list.peers.push_back(std::move(record));
    (seeder ? total_seeders_ : total_leechers_)++;
}

void SwarmRegistry::remove_peer(Swarm& swarm, const PeerKey& key) {
    auto it = swarm.slots.find(key);
    if (it == swarm.slots.end()) return;
    Slot slot = it->second;
    swarm.slots.erase(it);
    auto& list = slot.seeder ? swarm.seeders : swarm.leechers;
    if (list.peers[slot.index].partial) {
        swarm.partials--;
        total_partials_--;
    }
    // Removal keeps the list in the order peers joined (take_neighbours relies on it); the records after
    // the removed one move up a place, and their slots with them.
    list.peers.erase(list.peers.begin() + static_cast<std::ptrdiff_t>(slot.index));
    for (std::size_t i = slot.index; i < list.peers.size(); ++i)
        swarm.slots[list.peers[i].key].index = i;
    (slot.seeder ? total_seeders_ : total_leechers_)--;
}

std::size_t SwarmRegistry::take(PeerList& list, std::size_t& cursor, Pick pick, std::size_t limit,
                                const PeerKey& self, const PeerEndpoint& self_ep, Families families,
                                std::vector<PeerInfo>& out) {
    const std::size_t n = list.peers.size();
    if (n == 0 || limit == 0) return 0;
    std::size_t start = cursor % n;
    std::size_t taken = 0;
    std::size_t steps = 0;
    for (; steps < n && taken < limit; ++steps) {
        const PeerRecord& p = list.peers[(start + steps) % n];
        if (pick == Pick::downloaders && p.partial) continue;
        if (pick == Pick::partial_seeds && !p.partial) continue;
        if (take_one(p, self, self_ep, families, out)) ++taken;
    }
    cursor = (start + steps) % n;
    return taken;
}

bool SwarmRegistry::take_one(const PeerRecord& p, const PeerKey& self, const PeerEndpoint& self_ep,
                             Families families, std::vector<PeerInfo>& out) {
    if (p.key == self) return false;
    if (p.key.ip == self_ep.ip && p.port == self_ep.port) return false;
    if (families == Families::v4_only && p.key.ip.v6) return false;
    if (families == Families::v6_only && !p.key.ip.v6) return false;
    out.push_back(PeerInfo{p.key.id, PeerEndpoint{p.key.ip, p.port}});
    return true;
}

void SwarmRegistry::take_neighbours(const PeerList& list, std::size_t at, std::size_t limit,
                                    const PeerKey& self, const PeerEndpoint& self_ep, Families families,
                                    std::vector<PeerInfo>& out) {
    const std::size_t n = list.peers.size();
    // A partial seed already named as a source (out's first `sources` entries) is not named twice.
    const auto sources = static_cast<std::ptrdiff_t>(out.size());
    auto named = [&](const PeerRecord& p) {
        if (!p.partial) return false;
        const PeerInfo info{p.key.id, PeerEndpoint{p.key.ip, p.port}};
        return std::find(out.begin(), out.begin() + sources, info) != out.begin() + sources;
    };
    auto one = [&](const PeerRecord& p) { return !named(p) && take_one(p, self, self_ep, families, out); };
    std::size_t taken = 0;
    for (std::size_t d = 1; taken < limit && (d <= at || at + d < n); ++d) {
        if (d <= at && one(list.peers[at - d])) ++taken;
        if (taken < limit && at + d < n && one(list.peers[at + d])) ++taken;
    }
}

Result<AnnounceReply, AnnounceRefusal> SwarmRegistry::announce(const AnnounceRequest& request,
                                                               const IpAddress& source, TimePoint now,
                                                               const AnnounceOptions& options) {
    if (!allowed(request.info_hash)) return AnnounceRefusal::not_whitelisted;

    AnnounceReply reply;
    reply.interval = policy_.interval;
    reply.min_interval = policy_.min_interval;

    const IpAddress ip = effective_ip(source, request.ip, policy_.ip_param_from);
    const PeerKey key{request.peer_id, ip};
    const bool stopping = request.event == AnnounceEvent::stopped;

    auto it = swarms_.find(request.info_hash);
    if (it == swarms_.end()) {
        if (stopping) return reply;  // nothing to remove, and no reason to create a swarm
        if (swarms_.size() >= policy_.max_swarms) return AnnounceRefusal::too_many_swarms;
        it = swarms_.emplace(request.info_hash, Swarm(hasher_)).first;
        order_.insert(request.info_hash);
    }
    Swarm& swarm = it->second;
    swarm.announces++;
    total_announces_++;
    swarm.last_active = now;

    if (stopping) {
        remove_peer(swarm, key);
        reply.counts = counts_of(swarm);
        return reply;
    }

    const bool seeder = request.left == 0;
    const bool partial = !seeder && request.event == AnnounceEvent::paused;
    bool was_seeder = false;
    if (auto slot = swarm.slots.find(key); slot != swarm.slots.end()) {
        was_seeder = slot->second.seeder;
        if (was_seeder == seeder) {
            auto& rec = (seeder ? swarm.seeders : swarm.leechers).peers[slot->second.index];
            rec.port = request.port;
            rec.last_seen = now;
            rec.owner = options.owner;
            if (rec.partial != partial) {  // in place: a viewer keeps its place in the join order
                rec.partial = partial;
                swarm.partials += partial ? 1 : -1;
                total_partials_ += partial ? 1 : -1;
            }
        } else {
            remove_peer(swarm, key);
            add_peer(swarm, PeerRecord{key, request.port, now, options.owner, partial}, seeder);
        }
    } else {
        add_peer(swarm, PeerRecord{key, request.port, now, options.owner, partial}, seeder);
    }
    if (request.event == AnnounceEvent::completed && !was_seeder) {
        swarm.completed++;
        total_completed_++;
    }

    std::uint64_t want = request.numwant.value_or(policy_.numwant_default);
    want = std::min<std::uint64_t>({want, policy_.numwant_max, options.peer_cap});
    const PeerEndpoint self_ep{ip, request.port};
    if (want > 0) {
        if (seeder || partial) {
            take(swarm.leechers, swarm.leechers.cursor, Pick::downloaders, want, key, self_ep,
                 options.families, reply.peers);
        } else {
            // Sources (seeders, then partial seeds in turn) and the leechers that joined nearest.
            const std::size_t other_leechers = swarm.leechers.peers.size() - swarm.partials - 1;
            std::size_t seed_quota = (want + 1) / 2;
            if (want > other_leechers) seed_quota = std::max<std::size_t>(seed_quota, want - other_leechers);
            std::size_t sources = take(swarm.seeders, swarm.seeders.cursor, Pick::any, seed_quota, key,
                                       self_ep, options.families, reply.peers);
            if (sources < seed_quota && swarm.partials > 0) {
                take(swarm.leechers, swarm.partial_cursor, Pick::partial_seeds, seed_quota - sources, key,
                     self_ep, options.families, reply.peers);
            }
            take_neighbours(swarm.leechers, swarm.slots.at(key).index, want - reply.peers.size(), key,
                            self_ep, options.families, reply.peers);
        }
    }
    reply.counts = counts_of(swarm);
    return reply;
}

std::optional<SwarmCounts> SwarmRegistry::scrape(const InfoHash& info_hash) const {
    if (!allowed(info_hash)) return std::nullopt;
    auto it = swarms_.find(info_hash);
    if (it == swarms_.end()) return SwarmCounts{};
    return counts_of(it->second);
}

std::size_t SwarmRegistry::remove_expired(Swarm& swarm, PeerList& list, bool seeder, TimePoint now) {
    return remove_if(swarm, list, seeder,
                     [&](const PeerRecord& p) { return p.last_seen + policy_.peer_expiry <= now; });
}

bool SwarmRegistry::remove_peer(const InfoHash& info_hash, const PeerId& peer_id, const IpAddress& ip) {
    auto it = swarms_.find(info_hash);
    if (it == swarms_.end()) return false;
    const PeerKey key{peer_id, ip};
    if (!it->second.slots.contains(key)) return false;
    remove_peer(it->second, key);
    return true;
}

std::size_t SwarmRegistry::expire(TimePoint now) {
    std::size_t removed = 0;
    for (auto it = swarms_.begin(); it != swarms_.end();) {
        Swarm& swarm = it->second;
        removed += remove_expired(swarm, swarm.seeders, true, now);
        removed += remove_expired(swarm, swarm.leechers, false, now);
        if (swarm.slots.empty() && swarm.last_active + policy_.peer_expiry <= now) {
            order_.erase(it->first);
            it = swarms_.erase(it);
        } else {
            ++it;
        }
    }
    return removed;
}

RegistryState SwarmRegistry::export_state(TimePoint now) const {
    auto age = [now](TimePoint t) {
        return std::max(std::chrono::milliseconds(0),
                        std::chrono::duration_cast<std::chrono::milliseconds>(now - t));
    };
    auto peers = [&](const PeerList& list) {
        std::vector<PeerState> out;
        out.reserve(list.peers.size());
        for (const auto& p : list.peers)
            out.push_back(PeerState{p.key.id, PeerEndpoint{p.key.ip, p.port}, age(p.last_seen), p.partial});
        return out;
    };
    RegistryState out;
    out.swarms.reserve(order_.size());
    for (const auto& hash : order_) {
        const Swarm& swarm = swarms_.find(hash)->second;
        out.swarms.push_back(SwarmState{.info_hash = hash,
                                        .completed = swarm.completed,
                                        .idle = age(swarm.last_active),
                                        .seeders = peers(swarm.seeders),
                                        .leechers = peers(swarm.leechers)});
    }
    return out;
}

ImportCounts SwarmRegistry::import_state(const RegistryState& state, TimePoint now,
                                         std::chrono::milliseconds down_for) {
    using std::chrono::milliseconds;
    const milliseconds expiry = policy_.peer_expiry;
    down_for = std::max(down_for, milliseconds(0));
    // When something was last heard of, capped at peer_expiry ago: older is expired all the same, and the
    // cap keeps the arithmetic in range whatever ages a state holds.
    auto heard = [&](milliseconds age) {
        age = std::max(age, milliseconds(0));
        if (age >= expiry || down_for >= expiry - age) return now - expiry;
        return now - (age + down_for);
    };

    ImportCounts counts;
    std::vector<std::pair<InfoHash, bool>> restored;  // and whether this import created it
    std::size_t added = 0;
    for (const SwarmState& s : state.swarms) {
        const std::size_t listed = s.seeders.size() + s.leechers.size();
        if (!allowed(s.info_hash)) {
            counts.swarms_not_whitelisted++;
            counts.peers_refused += listed;
            continue;
        }
        auto it = swarms_.find(s.info_hash);
        if (it == swarms_.end()) {
            if (swarms_.size() >= policy_.max_swarms) {
                counts.swarms_over_limit++;
                counts.peers_refused += listed;
                continue;
            }
            it = swarms_.emplace(s.info_hash, Swarm(hasher_)).first;
            order_.insert(s.info_hash);
            it->second.completed = s.completed;
            it->second.last_active = heard(s.idle);
            restored.emplace_back(s.info_hash, true);
        } else {
            restored.emplace_back(s.info_hash, false);
        }
        Swarm& swarm = it->second;
        for (const bool seeder : {true, false}) {
            for (const PeerState& p : seeder ? s.seeders : s.leechers) {
                PeerKey key{p.id, p.endpoint.ip};
                if (swarm.slots.contains(key)) {
                    counts.peers_duplicate++;
                    continue;
                }
                add_peer(swarm, PeerRecord{key, p.endpoint.port, heard(p.age), 0, !seeder && p.partial},
                         seeder);
                ++added;
            }
        }
    }

    const std::size_t held = swarms_.size();
    counts.peers_expired = expire(now);
    counts.swarms_expired = held - swarms_.size();
    counts.peers = added - std::min(added, counts.peers_expired);
    // Completions count from the swarms this import created and kept; a forgotten swarm's count would
    // otherwise stay in the totals of a tracker that never served it.
    for (const auto& [hash, created] : restored) {
        auto it = swarms_.find(hash);
        if (it == swarms_.end()) continue;
        counts.swarms++;
        if (created) total_completed_ += it->second.completed;
    }
    return counts;
}

std::vector<SwarmStats> SwarmRegistry::swarm_stats(const std::optional<InfoHash>& after,
                                                   std::size_t limit) const {
    std::vector<SwarmStats> out;
    out.reserve(std::min(limit, order_.size()));
    for (auto it = after ? order_.upper_bound(*after) : order_.begin();
         it != order_.end() && out.size() < limit; ++it) {
        const Swarm& swarm = swarms_.find(*it)->second;
        out.push_back(SwarmStats{*it, counts_of(swarm), swarm.announces});
    }
    return out;
}

RegistryTotals SwarmRegistry::totals() const {
    return RegistryTotals{.swarms = swarms_.size(),
                          .seeders = total_seeders_,
                          .leechers = total_leechers_,
                          .partial_seeds = total_partials_,
                          .completed = total_completed_,
                          .announces = total_announces_};
}

}  // namespace toast::tracker
