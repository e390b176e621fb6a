// SwarmRegistry: every swarm's peers and counters, decided from announces and the injected time alone.
//
// What it decides, and its invariants:
//  - A peer is identified within a swarm by (peer_id, IP address): another host cannot stop or move a peer
//    by replaying its peer_id, and a client that changes address appears as a new peer while the old entry
//    expires. A re-announce from the same key updates port, seed/leech state and last-seen time.
//  - Each peer is in exactly one of its swarm's two lists (seeders: left == 0, leechers); the totals equal
//    the sums over swarms. A partial seed (BEP 21: event=paused, left > 0: it holds what it wants and
//    downloads nothing more, e.g. a set-top box holding its pushed share of a title) is a leecher marked
//    as such, in place: a viewer whose whole lookahead is in also announces paused, and must keep its place
//    in the join order. Counted as BEP 21 asks: in "incomplete", not among the "downloaders".
//  - "stopped" removes the peer at once; a peer not heard from for `peer_expiry` is removed by expire().
//    A swarm without peers for `peer_expiry` is forgotten, together with its completed count.
//  - The announcing peer never receives itself, nor any entry at its own IP and port. A seeder and a
//    partial seed are only given leechers that are not partial seeds: seeds have nothing to gain from
//    each other, and in a catalogue of many titles the idle boxes holding a title would otherwise fill
//    each other's connection slots with connections nobody downloads on, and a viewer would find them
//    full. A leecher gets up to half sources (seeders, then partial seeds in turn) and the
//    rest leechers. Seeders are handed out round-robin, so every one gets advertised in turn. A leecher
//    gets the leechers that joined nearest before and after it, alternately: in a video swarm viewers
//    who joined one after the other are one after the other in the title, each serving the next (the
//    client's nearest-behind choker), so the chain needs each connected to its neighbours, and a client
//    that caps its connections would otherwise meet only a random share of them. Leechers stay listed in
//    the order they joined (removal is linear in the swarm's size).
//  - "completed" counts a completion when a peer announces event=completed while not already a seeder.
//  - Under a whitelist, unknown info-hashes are refused and not created; replacing the whitelist keeps
//    every swarm (a swarm that left the list gets no more announces and empties by expiry).
//  - The IP recorded for a peer is the connection's source address; the ip= parameter (UDP: the IP field)
//    is honoured only from sources in `ip_param_from` (a front-end proxy, a testbed), empty by default, so
//    nobody can point a swarm at a third party.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "tracker/core/address_set.hpp"
#include "tracker/core/announce_request.hpp"
#include "tracker/core/ids.hpp"
#include "tracker/core/registry_state.hpp"
#include "tracker/core/result.hpp"
#include "tracker/core/siphash.hpp"
#include "tracker/core/whitelist.hpp"

namespace toast::tracker {

using TimePoint = std::chrono::steady_clock::time_point;

struct RegistryPolicy {
    std::chrono::seconds interval{300};
    std::chrono::seconds min_interval{30};
    std::chrono::seconds peer_expiry{660};
    std::uint32_t numwant_default = 50;
    std::uint32_t numwant_max = 200;
    std::size_t max_swarms = 1'000'000;
    AddressSet ip_param_from;  // sources whose ip= is honoured
};

// Which address families the requester can use: HTTP answers carry both (peers and peers6), a UDP answer
// carries only the family of the socket it goes out on (BEP 15).
enum class Families { both, v4_only, v6_only };

struct AnnounceOptions {
    Families families = Families::both;
    std::size_t peer_cap = std::numeric_limits<std::size_t>::max();  // e.g. what fits in one datagram
    // Who the announcer is to the caller (e.g. a fingerprint of its passkey), recorded with the peer so that
    // remove_owned can drop every peer of a revoked credential; 0: nobody in particular.
    std::uint64_t owner = 0;
};

struct PeerInfo {
    PeerId id;
    PeerEndpoint endpoint;
    bool operator==(const PeerInfo&) const = default;
};

// The scrape's fields: seeders "complete", leechers "incomplete", partial seeds included as BEP 21 asks
// (its "downloaders" are leechers - partial_seeds).
struct SwarmCounts {
    std::uint32_t seeders = 0;
    std::uint32_t leechers = 0;
    std::uint64_t completed = 0;
    std::uint32_t partial_seeds = 0;
    bool operator==(const SwarmCounts&) const = default;
};

struct AnnounceReply {
    std::vector<PeerInfo> peers;
    SwarmCounts counts;  // after this announce
    std::chrono::seconds interval{0};
    std::chrono::seconds min_interval{0};
};

enum class AnnounceRefusal { not_whitelisted, too_many_swarms };
std::string_view failure_reason(AnnounceRefusal r);

struct SwarmStats {
    InfoHash info_hash;
    SwarmCounts counts;
    std::uint64_t announces = 0;
};

// swarms, seeders and leechers are current; completed and announces count since the registry was created,
// including swarms forgotten since.
struct RegistryTotals {
    std::size_t swarms = 0;
    std::size_t seeders = 0;
    std::size_t leechers = 0;  // partial seeds included, as in SwarmCounts
    std::size_t partial_seeds = 0;
    std::uint64_t completed = 0;
    std::uint64_t announces = 0;
};

// The IP to record for a peer whose packet came from `source`.
IpAddress effective_ip(const IpAddress& source, const std::optional<IpAddress>& requested,
                       const AddressSet& trusted);

class SwarmRegistry {
  public:
    // `hash_key` keys the hash tables (client-chosen keys must not be able to collide on purpose).
    SwarmRegistry(RegistryPolicy policy, SipKey hash_key);

    Result<AnnounceReply, AnnounceRefusal> announce(const AnnounceRequest& request, const IpAddress& source,
                                                    TimePoint now, const AnnounceOptions& options = {});

    // Counts for one swarm (zeros for an unknown one); nullopt when the whitelist refuses the hash.
    std::optional<SwarmCounts> scrape(const InfoHash& info_hash) const;

    // Removes peers silent for peer_expiry and swarms empty that long; returns the number of peers removed.
    std::size_t expire(TimePoint now);

    // Every swarm with its peers in list order and their ages at `now`, for a state file
    // (registry_state.hpp).
    RegistryState export_state(TimePoint now) const;
    // Rebuilds the swarms of `state`, exported `down_for` ago (the time the tracker was down, >= 0): every
    // age grows by down_for, then expire(now) drops what is past peer_expiry by now. Swarms the whitelist
    // refuses, and new swarms beyond max_swarms, are left out; a (peer id, IP) already held in a swarm is
    // not added again. A swarm the registry already holds keeps its own completed count and last activity
    // and gains only the peers it lacks. Meant for the empty registry of a start-up: the sweep at the end
    // also removes, and counts as expired, peers of a registry that already held expired ones.
    ImportCounts import_state(const RegistryState& state, TimePoint now, std::chrono::milliseconds down_for);

    // Removes every peer whose last announce carried an owner for which `revoked` is true, from every
    // swarm (one pass over all peers); returns how many. Peers restored from a state file have no owner
    // until they announce again.
    template <class Pred>
    std::size_t remove_owned(Pred revoked) {
        std::size_t n = 0;
        for (auto& [hash, swarm] : swarms_) {
            n += remove_if(swarm, swarm.seeders, true,
                           [&](const PeerRecord& p) { return p.owner != 0 && revoked(p.owner); });
            n += remove_if(swarm, swarm.leechers, false,
                           [&](const PeerRecord& p) { return p.owner != 0 && revoked(p.owner); });
        }
        return n;
    }
    // Removes one peer (the one an announce from `source` with `request`'s peer id and ip= would update);
    // true when it was there.
    bool remove_peer(const InfoHash& info_hash, const PeerId& peer_id, const IpAddress& ip);

    // nullopt serves every info-hash.
    void set_whitelist(std::optional<Whitelist> whitelist);
    bool allowed(const InfoHash& info_hash) const;

    // Up to `limit` swarms with info-hashes above `after` (from the first without it), in info-hash order;
    // costs O(limit + log swarms), so a page never walks the whole registry.
    std::vector<SwarmStats> swarm_stats(const std::optional<InfoHash>& after, std::size_t limit) const;
    RegistryTotals totals() const;
    const RegistryPolicy& policy() const { return policy_; }
    // A reload: intervals and numwant apply to the next answers, expiry to the next sweep, max_swarms to new
    // swarms (a lower limit forgets none), ip_param_from to the next announces.
    void set_policy(const RegistryPolicy& policy) { policy_ = policy; }

  private:
    struct PeerKey {
        PeerId id;
        IpAddress ip;
        bool operator==(const PeerKey&) const = default;
    };
    struct KeyHasher {
        SipKey key;
        std::size_t operator()(const InfoHash& h) const;
        std::size_t operator()(const PeerKey& k) const;
    };
    struct PeerRecord {
        PeerKey key;
        std::uint16_t port = 0;
        TimePoint last_seen;
        std::uint64_t owner = 0;  // AnnounceOptions::owner of its last announce
        bool partial = false;     // a partial seed, kept in the leechers list at its place
    };
    struct Slot {
        bool seeder = false;
        std::size_t index = 0;
    };
    struct PeerList {
        std::vector<PeerRecord> peers;
        std::size_t cursor = 0;  // where the next round-robin hand-out starts
    };
    struct Swarm {
        explicit Swarm(const KeyHasher& h) : slots(16, h) {}
        PeerList seeders;
        PeerList leechers;
        std::unordered_map<PeerKey, Slot, KeyHasher> slots;
        std::size_t partials = 0;        // of leechers
        std::size_t partial_cursor = 0;  // where the next hand-out of partial seeds starts in leechers
        std::uint64_t completed = 0;
        std::uint64_t announces = 0;
        TimePoint last_active;
    };

    void remove_peer(Swarm& swarm, const PeerKey& key);
    void add_peer(Swarm& swarm, PeerRecord record, bool seeder);
    enum class Pick { any, downloaders, partial_seeds };
    // Up to `limit` peers of `list` that `pick` takes, round-robin from `cursor` (moved past the last one
    // looked at); returns how many.
    static std::size_t take(PeerList& list, std::size_t& cursor, Pick pick, std::size_t limit,
                            const PeerKey& self, const PeerEndpoint& self_ep, Families families,
                            std::vector<PeerInfo>& out);
    // Up to `limit` peers of `list` nearest to index `at` (the announcer's own place): at-1, at+1, at-2, ...;
    // a partial seed already in `out` (named as a source) is passed over.
    static void take_neighbours(const PeerList& list, std::size_t at, std::size_t limit, const PeerKey& self,
                                const PeerEndpoint& self_ep, Families families, std::vector<PeerInfo>& out);
    static bool take_one(const PeerRecord& p, const PeerKey& self, const PeerEndpoint& self_ep,
                         Families families, std::vector<PeerInfo>& out);
    // Drops the peers of `list` not seen for peer_expiry; returns how many.
    std::size_t remove_expired(Swarm& swarm, PeerList& list, bool seeder, TimePoint now);
    // Drops the peers of `list` for which `drop` is true in one pass that keeps the join order (removing them
    // one by one would move the rest up each time); returns how many.
    template <class Pred>
    std::size_t remove_if(Swarm& swarm, PeerList& list, bool seeder, Pred drop);
    static SwarmCounts counts_of(const Swarm& s);

    RegistryPolicy policy_;
    KeyHasher hasher_;
    std::unordered_map<InfoHash, Swarm, KeyHasher> swarms_;
    std::set<InfoHash> order_;  // the keys of swarms_, for paged listings in info-hash order
    std::optional<Whitelist> whitelist_;
    std::size_t total_seeders_ = 0;
    std::size_t total_leechers_ = 0;
    std::size_t total_partials_ = 0;
    std::uint64_t total_completed_ = 0;
    std::uint64_t total_announces_ = 0;
};

template <class Pred>
std::size_t SwarmRegistry::remove_if(Swarm& swarm, PeerList& list, bool seeder, Pred drop) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < list.peers.size(); ++i) {
        if (drop(list.peers[i])) {
            swarm.slots.erase(list.peers[i].key);
            if (list.peers[i].partial) {
                swarm.partials--;
                total_partials_--;
            }
            continue;
        }
        if (kept != i) {
            list.peers[kept] = std::move(list.peers[i]);
            swarm.slots[list.peers[kept].key].index = kept;
        }
        ++kept;
    }
    const std::size_t removed = list.peers.size() - kept;
    list.peers.erase(list.peers.begin() + static_cast<std::ptrdiff_t>(kept), list.peers.end());
    (seeder ? total_seeders_ : total_leechers_) -= removed;
    return removed;
}

}  // namespace toast::tracker
