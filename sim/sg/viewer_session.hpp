// The viewer actor's state and its parts (sim/sg/viewer.hpp says what it does): viewer.cpp runs the loop and
// applies the controller's plans; viewer_transfers.cpp builds the swarm sample and moves the bytes (peer
// transfers, server fetches, cancels). Internal to sim/sg.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

#include "client/core/plan_applier.hpp"
#include "client/core/stream_controller.hpp"
#include "sim/core/model_piece_control.hpp"
#include "sim/core/received_bytes.hpp"
#include "sim/sg/transfer.hpp"
#include "sim/sg/viewer.hpp"

namespace toast::sim::viewer_detail {

namespace sg4 = simgrid::s4u;
using client::PieceIndex;
using toast::Bytes;

inline constexpr std::uint64_t kBlock = 16 * 1024;
// A CANCEL cannot call back what is already in the uploader's send buffer: the block being sent and the next.
inline constexpr std::uint64_t kSendBuffer = 2 * kBlock;
// The client's own tick (ClientTuning::tick): at it or below, the viewer ticks as the client does and nothing
// more; longer ticks (to simulate more boxes) add wake-ups at the moments the client's ticks would have
// caught.
inline constexpr double kClientTick = 0.2 + 1e-9;

class Viewer {
  public:
    Viewer(World& world, ViewerPlan plan);
    void run();

  private:
    struct Flow {
        bool server = false;
        bool bell = false;  // the doorbell (World::poke): not a transfer
        int conn = -1;      // peer flows
        int piece = -1;
        std::uint64_t bytes = 0;
        double started = 0;
        int node = 0;  // server flows
        // A peer's send buffer going out after the server's bytes of its piece arrived (cede_to_server):
        // redundant bytes that still take the uploader's uplink.
        bool draining = false;
        // done_bytes() at simulated time `done_at`: a flow's progress at one instant is asked several times a
        // tick (the rates, the sample, the pieces' blocks), and each ask is a query of SimGrid's model.
        mutable double done_at = -1;
        mutable std::uint64_t done = 0;
    };
    struct Fetch {
        std::uint64_t offset = 0;  // in the piece
        std::uint64_t length = 0;
        int node = 0;
        bool sending = false;
    };

    double now() const { return sg4::Engine::get_clock(); }
    client::SteadyTime at(double s) const { return steady_at(s); }
    // The viewer's box is a member of its title's swarm from run() to finish(), in one place (the swarm's
    // members do not move).
    Member& member() { return *self_; }

    void tick();
    client::SwarmSample& sample(double t);  // sample_, refilled (its availability: see tick())
    void apply(const client::ControllerPlan& plan, double t);
    void set_choker_position();
    void pump(double t);
    void announce(double t, bool completed);
    void measure_rates(double t);

    void start_fetch(const client::FallbackFetch& f, double t);
    void send_fetch(int piece, double t);
    void stop_fetch(int piece, double t);
    void on_flow_done(std::size_t i, double t);
    void on_server_bytes(const Flow& f, double t);
    void on_peer_bytes(const Flow& f, double t);
    void piece_finished(int piece, bool from_server, double t);
    void cede_to_server(int piece, std::uint64_t server_from, std::uint64_t server_to, double t);
    void restart(int conn, int piece, std::uint64_t until, double t);

    std::size_t add_flow(std::shared_ptr<TransferLane> lane, Flow f);
    std::size_t add_transfer(sg4::Host* from, Flow f);
    void remove_flow(std::size_t i);
    void drop_flow(std::size_t i);  // cancels it (still listed: remove_flow after)
    // The next arrival to handle: after a wait that found none, the first to arrive; otherwise the one
    // listed first (the order in which waiting on all of them at once would return them).
    std::optional<std::size_t> take_arrival(bool first_come);
    std::optional<std::size_t> peer_flow(int conn) const;
    std::optional<std::size_t> server_flow(int piece) const;
    std::uint64_t done_bytes(std::size_t i) const;
    void prefetch_flows() const;  // brings what done_bytes() reads of every flow towards the cache
    void received(int piece, ReceivedBytes& got) const;  // what peers have delivered of the piece so far
    void finish(double t);
    void arm_bell();
    double next_wake(double t);

    World& world_;
    ViewerPlan plan_;
    TitleState& title_;
    SwarmModel& swarm_;
    const client::TitleGeometry& geometry_;
    sg4::Host* host_;
    std::unique_ptr<client::StreamController> ctl_;
    client::PlanApplier applier_;
    ModelPieceControl control_;
    Member* self_ = nullptr;

    std::shared_ptr<Inbox> inbox_;  // where this viewer's transfers and doorbell arrive: what it waits on
    std::vector<std::shared_ptr<TransferLane>> lanes_;  // beside flows_; the bell has none
    std::vector<Flow> flows_;
    std::map<int, Fetch> fetches_;
    // The server's bytes of pieces the controller holds (ServerFallback keeps them until the piece is whole).
    std::map<int, ReceivedBytes> from_server_bytes_;
    std::multimap<double, int> disk_ready_;  // server fetches whose bytes are read: piece
    std::optional<double> tracker_reply_at_;
    std::optional<double> deadline_at_;  // a wake-up at the server's last moment for the next missing piece
    std::vector<BoxId> named_;
    client::SwarmSample sample_;
    std::vector<std::pair<int, std::pair<std::uint64_t, std::uint64_t>>> sending_;  // sample(): scratch
    std::vector<int> pieces_scratch_;
    ReceivedBytes received_scratch_;
    std::vector<std::pair<int, std::uint64_t>> rate_mark_, marks_;  // conn, delivered at the last measurement
    double last_rate_ = 0;
    double next_tick_ = 0;
    bool ready_ = false;
    bool done_ = false;
    SessionRecord rec_;
    std::uint64_t from_peers_ = 0;
    std::uint64_t redundant_ = 0, raced_ = 0;
    std::uint64_t uploaded_at_start_ = 0;
    client::PieceSet from_server_;
};

}  // namespace toast::sim::viewer_detail
