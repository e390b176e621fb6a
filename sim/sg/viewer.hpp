// One viewing session as a SimGrid actor on its box's host: the client's StreamController for the title, fed
// a SwarmSample built from the swarm model each tick (as client/lt/swarm_reader does from libtorrent), its
// plan applied as client/lt/title_stream does (ejections, upload mode, server fetches, the PlanApplier's
// priorities and deadlines, re-announces), and its events delivered as they happen (a piece finished, the
// server's bytes arrived). The bytes move as SimGrid communications: a peer's piece from the uploader's host,
// a server fetch from a server node once its disk has read it.
#pragma once

#include <functional>
#include <optional>

#include "client/core/client_options.hpp"
#include "sim/core/report.hpp"
#include "sim/sg/world.hpp"

namespace toast::sim {

struct ViewerPlan {
    BoxId box = 0;
    int title = 0;
    double start_s = 0;
    std::optional<double> watch_s;  // stop once this much has played (a catalogue session); absent: the title
    client::ClientOptions options;  // as toast-client would parse its command line
    bool leave_at_end = true;       // the process exits (single title); a catalogue box stays in the swarm
    double upload_cap_bps = 0;
    // Called when the session ends, before its record is kept (the catalogue's cache decides here).
    std::function<void(const ViewerPlan&, SessionRecord&)> on_end;
};

// The actor's body.
void run_viewer(World& world, ViewerPlan plan);

}  // namespace toast::sim
