#include <algorithm>
#include <cstdio>
#include <chrono>
#include <memory>

#include "sim/core/box_cache.hpp"
#include "sim/sg/run.hpp"
#include "sim/sg/viewer.hpp"

namespace sg4 = simgrid::s4u;

namespace toast::sim {

RunRecords run_catalogue(const CatalogueScenario& s, const EveningPlan& plan, const RunOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    auto engine = make_sim_engine(options.simgrid_args);
    auto uplinks = plan.uplink_bps;
    if (s.upload_limit)
        for (auto& u : uplinks)
            u = std::min(u, *s.upload_limit);
    const auto platform = make_platform(uplinks, options.platform);
    std::vector<TitleState> titles;
    for (int t = 0; t < s.titles; ++t)
        titles.push_back(make_sim_title(title_name(t), t, s.title_seconds, s.bitrate, s.piece_size));
    SimTuning tuning = options.tuning;
    if (tuning.end_s <= 0) {
        double last = 0;
        for (const auto& x : plan.sessions)
            last = std::max(last, x.start_s + x.watch_s);
        tuning.end_s = s.time_limit > 0 ? s.time_limit : last + s.title_seconds + 60;
    }
    World world(platform, std::move(titles), options.server, tuning, uplinks);

    // Each box's cache, and the member setup it seeds with.
    std::vector<BoxCache> caches;
    caches.reserve(static_cast<std::size_t>(s.boxes));
    for (int b = 0; b < s.boxes; ++b)
        caches.emplace_back(s.cache, s.quota_bytes());
    auto setup_for = [&](int box) {
        const auto o = catalogue_client_options(s, box, uplinks[static_cast<std::size_t>(box)]);
        MemberSetup ms;
        ms.choker = o.choker == client::ChokerOption::tit_for_tat ? ChokerKind::tit_for_tat
                    : o.choker == client::ChokerOption::seed      ? ChokerKind::seed_style
                                                                  : ChokerKind::nearest;
        ms.slots = client::unchoke_slots_of(o);
        ms.max_connections = o.max_connections;
        ms.seed = o.seed;
        return ms;
    };
    // The warm titles: held whole at the evening's start, seeded from the first second.
    for (int b = 0; b < s.boxes; ++b) {
        for (int t : plan.warm[static_cast<std::size_t>(b)]) {
            auto& m = world.title(t).swarm->join(b, setup_for(b));
            m.have.set_all();
            caches[static_cast<std::size_t>(b)].keep(t, static_cast<double>(s.title_bytes()), 0.0);
            world.announce(t, b, 0, false, 0, 0.0);
        }
    }
    std::vector<int> sessions_of(static_cast<std::size_t>(s.boxes), 0);
    auto on_end = [&](const ViewerPlan& vp, SessionRecord&) {
        auto& swarm = *world.title(vp.title).swarm;
        const auto* m = swarm.find(vp.box);
        const double bytes = m ? static_cast<double>(m->have.count()) * s.piece_size : 0.0;
        for (int t : caches[static_cast<std::size_t>(vp.box)].keep(vp.title, bytes, sg4::Engine::get_clock())) {
            world.announce(t, vp.box, 0, true, 0, sg4::Engine::get_clock());
            world.title(t).swarm->leave(vp.box);
        }
        if (caches[static_cast<std::size_t>(vp.box)].holds(vp.title) && m) {
            const auto left = static_cast<std::uint64_t>((swarm.pieces() - m->have.count()) * s.piece_size);
            world.announce(vp.title, vp.box, left, false, 0, sg4::Engine::get_clock());
        }
    };
    const auto wall_start = std::chrono::steady_clock::now();
    double next_progress = tuning.progress_s;
    auto report_progress = [&](double t) {
        if (tuning.progress_s <= 0 || t < next_progress) return;
        next_progress = t + tuning.progress_s;
        std::fprintf(stderr, "toast-sim: %.0f s simulated, %zu sessions ended, %.0f s wall, %llu events\n", t,
                     world.sessions().size(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(),
                     static_cast<unsigned long long>(world.events));
    };
    sg4::Actor::create("launcher", world.server_host(0), [&]() {
        for (const auto& x : plan.sessions) {
            if (tuning.end_s > 0 && x.start_s >= tuning.end_s) break;  // the time limit: later sessions never start
            sg4::this_actor::sleep_until(x.start_s);
            report_progress(x.start_s);
            ViewerPlan vp;
            vp.box = x.box;
            vp.title = x.title;
            vp.start_s = x.start_s;
            vp.watch_s = x.watch_s;
            vp.options = catalogue_client_options(s, x.box, uplinks[static_cast<std::size_t>(x.box)]);
            vp.leave_at_end = false;
            vp.upload_cap_bps = uplinks[static_cast<std::size_t>(x.box)];
            vp.on_end = on_end;
            ++sessions_of[static_cast<std::size_t>(x.box)];
            world.title(x.title).swarm->join(x.box, setup_for(x.box));
            sg4::Actor::create("s" + std::to_string(x.box), world.host_of(x.box),
                               [&world, vp]() { run_viewer(world, vp); });
        }
    });
    engine->run();
    RunRecords r;
    r.scenario = s.name;
    r.kind = "catalogue";
    r.sessions = world.sessions();
    std::sort(r.sessions.begin(), r.sessions.end(),
              [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
    for (int t = 0; t < s.titles; ++t) {
        r.title_names.push_back(title_name(t));
        r.title_bytes.push_back(s.title_bytes());
    }
    r.bitrate_bps = s.bitrate;
    r.vod_bytes = world.vod_bytes();
    r.seed_bytes = world.seed_bytes();
    r.server_bins = world.bins();
    r.bin_seconds = world.bin_seconds();
    std::vector<std::uint64_t> from_server(static_cast<std::size_t>(s.boxes), 0);
    for (const auto& x : r.sessions)
        from_server[static_cast<std::size_t>(x.box)] += x.bytes_from_server;
    for (int b = 0; b < s.boxes; ++b)
        r.boxes.push_back({b, uplinks[static_cast<std::size_t>(b)], sessions_of[static_cast<std::size_t>(b)],
                           world.uploaded(b), from_server[static_cast<std::size_t>(b)],
                           static_cast<std::uint64_t>(caches[static_cast<std::size_t>(b)].bytes())});
    if (!s.push.is_null()) r.notes.push_back("push (pre-placement) is not simulated yet: this run has none");
    for (const auto& f : s.unread_fields)
        r.notes.push_back("scenario field '" + f + "' is not read by the simulator");
    const auto started_sessions = static_cast<std::size_t>(std::count_if(
        plan.sessions.begin(), plan.sessions.end(),
        [&](const Session& x) { return tuning.end_s <= 0 || x.start_s < tuning.end_s; }));
    if (started_sessions < plan.sessions.size())
        r.notes.push_back("time limit of " + std::to_string(static_cast<long long>(tuning.end_s)) + " s: " +
                          std::to_string(plan.sessions.size() - started_sessions) +
                          " planned sessions did not start; the sessions still running then were stopped");
    if (plan.dropped > 0)
        r.notes.push_back(std::to_string(plan.dropped) + " arrivals found no idle box and were dropped");
    fill_sim_cost(r, world, started, tuning.tick_s);
    return r;
}

}  // namespace toast::sim
