#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include <sys/resource.h>

#include "server/core/title_demand.hpp"
#include "sim/core/box_cache.hpp"
#include "sim/core/catalogue_push.hpp"
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
    PlatformConfig pc = options.platform;
    pc.seed = s.probe_box;  // the probe box stands where the single-title runs' operator seed does
    pc.seed_uplink_bps = s.uplink;
    const auto platform = make_platform(uplinks, pc);
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

    // Each box's cache (the service's policy), and the member setup it seeds with.
    const auto policy = client::parse_cache_policy(s.cache).value_or(client::CachePolicy::lru);
    std::vector<BoxCache> caches;
    caches.reserve(static_cast<std::size_t>(s.boxes));
    for (int b = 0; b < s.boxes; ++b)
        caches.emplace_back(policy, s.quota_bytes(), static_cast<double>(s.title_bytes()));
    auto setup_for = [&](int box) {
        return member_setup_for(catalogue_client_options(s, box, uplinks[static_cast<std::size_t>(box)]));
    };
    // The warm titles: held whole at the evening's start, seeded from the first second; the first drawn is
    // the most recently watched.
    for (int b = 0; b < s.boxes; ++b) {
        const auto& warm = plan.warm[static_cast<std::size_t>(b)];
        for (std::size_t i = 0; i < warm.size(); ++i) {
            const int t = warm[i];
            auto& m = world.title(t).swarm->join(b, setup_for(b));
            m.have.set_all();
            caches[static_cast<std::size_t>(b)].add_warm(t, -1.0 - static_cast<double>(i));
            world.announce(t, b, 0, World::Announcing::holding, 0, 0.0);
        }
    }
    // The probe box: every title whole, never watching, its upload the server side's.
    if (s.probe_box) {
        auto ms = setup_for(0);
        ms.seed = static_cast<std::uint64_t>(s.random_seed + s.boxes);
        ms.operator_peer = true;
        for (int t = 0; t < s.titles; ++t) {
            world.title(t).swarm->join(world.seed_id(), ms).have.set_all();
            world.announce(t, world.seed_id(), 0, World::Announcing::holding, 0, 0.0);
        }
    }
    // The server's demand (its forecast, then every session's start, decayed), as the popularity cache and
    // the push planner read it.
    const auto forecast = demand_forecast(s, plan.lambda_peak);
    using DemandTime = server::TitleDemand::Time;
    const auto demand_at = [](double t) {
        return DemandTime(
            std::chrono::duration_cast<DemandTime::duration>(std::chrono::duration<double>(t + 7200)));
    };
    server::TitleDemand demand(std::chrono::hours(1));
    for (int t = 0; t < s.titles; ++t)
        demand.seed(title_name(t), forecast[static_cast<std::size_t>(t)], demand_at(-3600));
    // Push: the server's plan, each box's assignment fetched in the night at the client's pace.
    std::vector<std::vector<int>> pushed(static_cast<std::size_t>(s.boxes));
    std::optional<PushPlacement> placement;
    const auto push_spec = read_push(s);
    if (push_spec) {
        placement = place_push(s, *push_spec, forecast, uplinks, world.bin_seconds(), plan.warm);
        for (int b = 0; b < s.boxes; ++b) {
            for (const auto& h : placement->held[static_cast<std::size_t>(b)]) {
                if (h.pieces.empty()) continue;
                auto& swarm = *world.title(h.title).swarm;
                auto& m = swarm.join(b, setup_for(b));
                for (int p : h.pieces)
                    m.have.set(p);
                pushed[static_cast<std::size_t>(b)].push_back(h.title);
                const auto left = static_cast<std::uint64_t>(
                    std::max(0.0, static_cast<double>(s.title_bytes()) -
                                      static_cast<double>(m.have.count()) * s.piece_size));
                world.announce(h.title, b, left, World::Announcing::holding, 0, 0.0);
            }
        }
    }
    auto drop = [&](int box, int t) {
        world.announce(t, box, 0, World::Announcing::stopped, 0, sg4::Engine::get_clock());
        world.title(t).swarm->leave(box);
    };
    auto on_start = [&](int box, int title, double now) {
        demand.record_start(title_name(title), demand_at(now));
        auto& mine = pushed[static_cast<std::size_t>(box)];
        std::erase(mine, title);  // played: the cache's from now on
        BoxCache::Context context;
        context.demand = [&](int t) { return demand.rate(title_name(t), demand_at(now)); };
        context.copies = [&](int t) {
            const auto& swarm = *world.title(t).swarm;
            return static_cast<std::int64_t>(swarm.members()) - (swarm.find(box) ? 1 : 0);
        };
        context.bitrate_bps = s.bitrate;
        context.duration_s = s.title_seconds;
        context.upload_bps = uplinks[static_cast<std::size_t>(box)];
        for (int t : caches[static_cast<std::size_t>(box)].make_room(title, now, context))
            drop(box, t);
    };
    std::vector<int> sessions_of(static_cast<std::size_t>(s.boxes), 0);
    auto on_end = [&](const ViewerPlan& vp, SessionRecord&) {
        auto& swarm = *world.title(vp.title).swarm;
        const auto* m = swarm.find(vp.box);
        const double bytes = m ? static_cast<double>(m->have.count()) * s.piece_size : 0.0;
        const double now = sg4::Engine::get_clock();
        for (int t : caches[static_cast<std::size_t>(vp.box)].session_ended(vp.title, bytes, now))
            drop(vp.box, t);
        if (caches[static_cast<std::size_t>(vp.box)].holds(vp.title) && m) {
            const auto left = static_cast<std::uint64_t>((swarm.pieces() - m->have.count()) * s.piece_size);
            world.announce(vp.title, vp.box, left, World::Announcing::holding, 0, now);
        }
    };
    const auto wall_start = std::chrono::steady_clock::now();
    double next_progress = tuning.progress_s;
    auto report_progress = [&](double t) {
        if (tuning.progress_s <= 0 || t < next_progress) return;
        next_progress = t + tuning.progress_s;
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        std::fprintf(
            stderr,
            "toast-sim: %.0f s simulated, %zu sessions ended, %zu actors (%zu couriers), %.0f s wall, "
            "%llu events, %llu transfers, %ld MB peak resident\n",
            t, world.sessions().size(), sg4::Engine::get_instance()->get_actor_count(),
            world.couriers().created(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(),
            static_cast<unsigned long long>(world.events), static_cast<unsigned long long>(world.transfers),
            u.ru_maxrss / 1024);
    };
    sg4::Actor::create("launcher", world.server_host(0), [&]() {
        std::size_t launched = 0;
        for (const auto& x : plan.sessions) {
            if (tuning.end_s > 0 && x.start_s >= tuning.end_s)
                break;  // the time limit: later sessions never start
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
            on_start(x.box, x.title, x.start_s);
            world.title(x.title).swarm->join(x.box, setup_for(x.box));
            // Appending, not `"s" + std::to_string(...)`: GCC 12 flags that form with a false -Wrestrict.
            std::string actor_name = "s";
            actor_name += std::to_string(x.box);
            sg4::Actor::create(actor_name, world.host_of(x.box), [&world, vp]() { run_viewer(world, vp); });
            ++launched;
        }
        if (tuning.progress_s <= 0) return;
        // The viewers watch on for up to a title after the last arrival: the progress lines go on until
        // they have all ended. As a daemon the launcher is killed with the last viewer, so it never
        // lengthens the run (nor adds an empty bin to the bill).
        sg4::Actor::self()->daemonize();
        while (world.sessions().size() < launched) {
            sg4::this_actor::sleep_until(next_progress);
            report_progress(next_progress);
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
    if (placement) {
        r.night_seconds = push_spec->night_s();
        r.night_bytes = placement->night_bytes;
        r.night_bins = placement->night_bins;
        r.push_bytes = placement->night_bytes;
        r.push_assigned_bytes = placement->assigned_bytes;
        r.push_titles_placed = placement->titles_placed;
        if (push_spec->window_end_s > 0)
            r.notes.push_back(
                "the push window's part inside the evening is not simulated: boxes hold what "
                "they fetched in the night");
        for (const auto& f : push_spec->unread)
            r.notes.push_back("scenario field '" + f +
                              "' is the server's and decides nothing in the simulator");
    }
    for (const auto& f : s.unread_fields)
        r.notes.push_back("scenario field '" + f + "' is not read by the simulator");
    const auto started_sessions = static_cast<std::size_t>(
        std::count_if(plan.sessions.begin(), plan.sessions.end(),
                      [&](const Session& x) { return tuning.end_s <= 0 || x.start_s < tuning.end_s; }));
    if (started_sessions < plan.sessions.size())
        r.notes.push_back("time limit of " + std::to_string(static_cast<long long>(tuning.end_s)) +
                          " s: " + std::to_string(plan.sessions.size() - started_sessions) +
                          " planned sessions did not start; the sessions still running then were stopped");
    if (plan.dropped > 0)
        r.notes.push_back(std::to_string(plan.dropped) + " arrivals found no idle box and were dropped");
    fill_sim_cost(r, world, started, tuning.tick_s);
    return r;
}

}  // namespace toast::sim
