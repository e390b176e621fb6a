// What every actor of one simulation shares: the built platform, each title's geometry and swarm model, the
// tracker (the tracker's own SwarmRegistry, announced to as a box's libtorrent would), the VoD server's
// disks, and the ledgers the report is made from (server bytes by time, each box's upload). The simulation is
// single-threaded (SimGrid runs one actor at a time), so actors use it without locks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "client/core/client_tuning.hpp"
#include "client/core/title_geometry.hpp"
#include "sim/core/platform_spec.hpp"
#include "sim/core/report.hpp"
#include "sim/core/server_model.hpp"
#include "sim/core/swarm_model.hpp"
#include "sim/sg/platform_builder.hpp"
#include "sim/sg/transfer.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::sim {

// How the simulator drives the client core (sim/README.md says why each default).
struct SimTuning {
    double tick_s = 0.2;           // a viewer's controller tick: the client's own 200 ms
    double rate_interval_s = 1.0;  // peer rates are measured this often (libtorrent: once a second)
    double tracker_rtt_s = 0.005;  // an announce's answer comes this long after it is sent
    // Wake a viewer at the server's last moment for its next missing piece, not only at ticks: with ticks
    // longer than the fallback's margin a piece would otherwise be fetched too late.
    bool deadline_wakeups = true;
    double end_s = 0;       // a hard stop (the scenario's time limit), 0: none
    double progress_s = 0;  // print a progress line to stderr every this many simulated seconds, 0: never
};

struct TitleState {
    std::string name;
    client::TitleGeometry geometry;
    std::unique_ptr<SwarmModel> swarm;
    tracker::InfoHash hash;
};

class World {
  public:
    World(const PlatformSpec& platform, std::vector<TitleState> titles, ServerSetup server, SimTuning tuning,
          std::vector<double> box_uplink_bps);

    const PlatformSpec& platform() const { return platform_; }
    const SimTuning& tuning() const { return tuning_; }
    const client::ClientTuning& client_tuning() const { return client_tuning_; }
    TitleState& title(int t) { return titles_.at(static_cast<std::size_t>(t)); }
    int titles() const { return static_cast<int>(titles_.size()); }
    ServerModel& server() { return server_; }
    simgrid::s4u::Host* host_of(BoxId box) const;
    simgrid::s4u::Host* server_host(int node) const {
        return built_.servers.at(static_cast<std::size_t>(node));
    }
    // The operator's seed, as a member id (one past the last box).
    BoxId seed_id() const { return static_cast<BoxId>(box_uplink_bps_.size()); }
    bool is_seed(BoxId b) const { return b == seed_id(); }
    double uplink_bps(BoxId b) const;

    // What an announce says of the box: it downloads (a viewer), it holds what it wants and downloads
    // nothing more (a seed; with bytes left a partial seed, which libtorrent announces as event=paused, BEP
    // 21: an idle box's pushed share or what it kept of an abandoned session), or it leaves.
    enum class Announcing { downloading, holding, stopped };
    // Announces `box` in `title`'s swarm (left: bytes it still lacks; 0 announces a seed) and returns the
    // members the tracker names (up to numwant).
    std::vector<BoxId> announce(int title, BoxId box, std::uint64_t left, Announcing as, int numwant,
                                double now);

    // Server-side bytes (the VoD server's, or the seed's) carried from `from` to `to`, spread over those
    // bins.
    void add_server_bytes(std::uint64_t bytes, double from, double to, bool seed);
    void add_unreceived(std::uint64_t bytes) { unreceived_ += bytes; }
    // A box's upload (the seed's goes to the server side).
    void add_upload(BoxId up, std::uint64_t bytes, double from, double to);
    std::uint64_t uploaded(BoxId box) const;

    // A viewer's doorbell: poke() rings it (a message of no size from the poking actor's host, crossing the
    // network's latency like the HAVE or UNCHOKE it stands for, carried by a courier to the viewer's inbox)
    // so the viewer asks its peers at once rather than at its next tick. Rung at most once until it is
    // answered. A box listens while a viewer runs on it (`inbox`; nullptr: none).
    void listen(BoxId box, std::shared_ptr<Inbox> inbox);
    void answered(BoxId box) { rung_.at(static_cast<std::size_t>(box)) = false; }
    void poke(BoxId box);

    // The transfers' couriers (sim/sg/transfer.hpp).
    Couriers& couriers() { return couriers_; }

    void add_session(SessionRecord r) { sessions_.push_back(std::move(r)); }
    std::vector<SessionRecord>& sessions() { return sessions_; }
    std::uint64_t vod_bytes() const { return vod_; }
    std::uint64_t seed_bytes() const { return seed_bytes_; }
    std::uint64_t unreceived() const { return unreceived_; }
    const std::vector<double>& bins() const { return bins_; }
    double bin_seconds() const { return bin_s_; }

    // Counters of the simulator's own work.
    std::uint64_t events = 0;
    std::uint64_t transfers = 0;
    std::uint64_t controller_ticks = 0;

  private:
    PlatformSpec platform_;
    BuiltPlatform built_;
    std::vector<TitleState> titles_;
    ServerModel server_;
    SimTuning tuning_;
    client::ClientTuning client_tuning_;
    std::vector<double> box_uplink_bps_;
    tracker::SwarmRegistry tracker_;
    std::vector<std::uint64_t> uploaded_;
    std::vector<std::shared_ptr<Inbox>> listening_;
    std::vector<bool> rung_;
    Couriers couriers_;
    std::vector<SessionRecord> sessions_;
    std::uint64_t vod_ = 0, seed_bytes_ = 0, unreceived_ = 0;
    double bin_s_ = 10;
    std::vector<double> bins_;
};

// Simulated seconds as the steady_clock time the client core reads. Offset far from the clock's epoch, as a
// real steady clock is: the core measures "time since the last sample" from a zero time point.
client::SteadyTime steady_at(double seconds);

}  // namespace toast::sim
