#include "sim/sg/run.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <list>
#include <stdexcept>

#include <malloc.h>
#include <sys/resource.h>

#include "sim/core/scenario_values.hpp"
#include "sim/sg/viewer.hpp"

namespace sg4 = simgrid::s4u;

namespace toast::sim {

namespace {

// Python's str(float) for the values scenarios hold: the shortest decimal that reads back ("10.0", "7.5").
std::string py_float(double v) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
    std::string s(buf, res.ptr);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
}

std::string py_int(double v) {
    return std::to_string(static_cast<long long>(v));
}

client::ClientOptions parse(const std::vector<std::string>& args) {
    auto r = client::parse_client_args(args);
    if (!r.options) throw std::runtime_error("client options: " + r.error);
    return *r.options;
}

}  // namespace

std::unique_ptr<sg4::Engine> make_sim_engine(const std::vector<std::string>& args) {
    static std::vector<std::string> storage;
    storage = {"toast-sim"};
    for (const auto& a : args)
        storage.push_back(a);
    static std::vector<char*> argv;
    argv.clear();
    for (auto& s : storage)
        argv.push_back(s.data());
    int argc = static_cast<int>(argv.size());
    // The actors' stacks (the viewers' 256 KiB, the couriers' 128 KiB) are mapped on their own, where calloc
    // leaves their untouched pages unallocated, and as many as there are actors: glibc's default of 65,536
    // mapped blocks would send the rest to the heap, zeroed whole (at 10^5 boxes, gigabytes). The heap keeps
    // freed memory for the next allocations rather than giving it back to the kernel.
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    mallopt(M_MMAP_MAX, 1 << 24);
    return std::make_unique<sg4::Engine>(&argc, argv.data());
}

namespace {

std::uint64_t peak_memory_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<std::uint64_t>(u.ru_maxrss);
}

tracker::InfoHash title_hash(int t) {
    tracker::InfoHash h;
    h.bytes[0] = 0x70;
    for (int i = 0; i < 4; ++i)
        h.bytes[static_cast<std::size_t>(i + 1)] =
            static_cast<std::uint8_t>(static_cast<std::uint32_t>(t) >> (8 * i));
    return h;
}

}  // namespace

TitleState make_sim_title(const std::string& name, int index, double seconds, double bitrate,
                          double piece_size) {
    const auto bytes = static_cast<std::uint64_t>(seconds * bitrate / 8);
    std::string error;
    auto g = client::TitleGeometry::make(Bytes(bytes), Bytes(static_cast<std::uint64_t>(piece_size)),
                                         BitRate(static_cast<std::uint64_t>(bitrate)), &error);
    if (!g) throw std::runtime_error("title " + name + ": " + error);
    const double piece_seconds = std::chrono::duration<double>(g->piece_duration()).count();
    TitleState t{name, *g,
                 std::make_unique<SwarmModel>(g->piece_count().value(), g->piece_length().value(), bytes,
                                              piece_seconds),
                 title_hash(index)};
    return t;
}

void fill_sim_cost(RunRecords& r, const World& w, std::chrono::steady_clock::time_point started,
                   double tick_s) {
    r.cost.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.cost.simulated_seconds = sg4::Engine::get_clock();
    r.cost.peak_memory_kb = peak_memory_kb();
    r.cost.events = w.events;
    r.cost.transfers = w.transfers;
    r.cost.controller_ticks = w.controller_ticks;
    r.cost.tick_ms = tick_s * 1000;
}

std::vector<std::string> default_simgrid_args() {
    return {"--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--log=root.thres:warning",
            "--cfg=contexts/stack-size:256", "--cfg=contexts/guard-size:0"};
}

double ceiling_pct(const TitleScenario& s) {
    double c = (1.0 - 1.0 / s.clients) * 100.0;
    if (s.behavior == "stream" && s.upload_limit < s.bitrate)
        c = std::min(c, 100.0 * s.upload_limit / s.bitrate);
    return c;
}

client::ClientOptions title_client_options(const TitleScenario& s, int index) {
    std::vector<std::string> a = {"stream",           "title.torrent",
                                  "--save-dir",       "data",
                                  "--listen",         "127.0.0.1:6881",
                                  "--server",         "http://127.0.0.1:8080/titles/title",
                                  "--stats",          "stats.jsonl",
                                  "--picker",         s.picker,
                                  "--inorder-window", py_float(s.inorder_window) + "s",
                                  "--behavior",       s.behavior,
                                  "--upload-limit",   py_int(s.upload_limit),
                                  "--choker",         s.choker,
                                  "--seed",           std::to_string(s.random_seed + index)};
    if (std::find(s.extra_client_args.begin(), s.extra_client_args.end(), "--log-level") ==
        s.extra_client_args.end()) {
        a.push_back("--log-level");
        a.push_back("warn");
    }
    if (s.seed) {
        a.push_back("--operator-peer");
        a.push_back("127.0.0.1:6969");
    }
    if (s.download_limit > 0) {
        a.push_back("--download-limit");
        a.push_back(py_int(s.download_limit));
    }
    if (!s.buffer_limit.empty()) {
        a.push_back("--buffer-limit");
        a.push_back(s.buffer_limit);
    }
    if (!s.lookahead.empty()) {
        a.push_back("--lookahead");
        if (s.lookahead == "none") {
            a.push_back("none");
        } else {
            a.push_back(py_float(*duration_value(nlohmann::json(s.lookahead))) + "s");
        }
    }
    for (const auto& x : s.extra_client_args)
        a.push_back(x);
    return parse(a);
}

client::ClientOptions catalogue_client_options(const CatalogueScenario& s, int box, double uplink_bps) {
    return parse({"stream",     "title.torrent",  "--save-dir",     "data",
                  "--listen",   "127.0.0.1:6881", "--server",       "http://127.0.0.1:8080/titles/title",
                  "--stats",    "stats.jsonl",    "--picker",       s.picker,
                  "--behavior", "stream",         "--upload-limit", py_int(uplink_bps),
                  "--choker",   s.choker,         "--seed",         std::to_string(s.random_seed + box)});
}

RunRecords run_title(const TitleScenario& s, const RunOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    auto engine = make_sim_engine(options.simgrid_args);
    const auto arrivals = arrival_times(s);
    PlatformConfig pc = options.platform;
    if (s.download_limit > 0) pc.box_downlink_bps = s.download_limit;
    pc.access_latency_s += s.delay_ms / 1000.0;
    pc.boxes_per_aggregation = std::max(pc.boxes_per_aggregation, s.clients);
    pc.seed = s.seed;
    pc.seed_uplink_bps = s.seed_upload_limit;
    std::vector<double> uplinks(static_cast<std::size_t>(s.clients), s.upload_limit);
    const auto platform = make_platform(uplinks, pc);
    std::vector<TitleState> titles;
    titles.push_back(make_sim_title("title", 0, s.title_seconds, s.bitrate, s.piece_size));
    SimTuning tuning = options.tuning;
    if (tuning.end_s <= 0)
        tuning.end_s = s.time_limit > 0 ? s.time_limit : arrivals.back() + s.title_seconds * 3 + 60;
    World world(platform, std::move(titles), options.server, tuning, uplinks);
    auto& swarm = *world.title(0).swarm;
    if (s.seed) {
        MemberSetup ms;
        ms.choker = s.seed_client == "toast" ? ChokerKind::leader : ChokerKind::stock_seed;
        ms.slots = s.seed_client == "toast" ? client::default_unchoke_slots(client::ChokerOption::leader) : 8;
        ms.operator_peer = true;
        ms.max_connections = 200;
        auto& seed = swarm.join(world.seed_id(), ms);
        seed.have.set_all();
        world.announce(0, world.seed_id(), 0, World::Announcing::holding, 0, 0.0);
    }
    std::vector<client::ClientOptions> opts;
    for (int i = 0; i < s.clients; ++i)
        opts.push_back(title_client_options(s, i));
    sg4::Actor::create("launcher", world.server_host(0), [&]() {
        for (int i = 0; i < s.clients; ++i) {
            sg4::this_actor::sleep_until(arrivals[static_cast<std::size_t>(i)]);
            ViewerPlan vp;
            vp.box = i;
            vp.title = 0;
            vp.start_s = arrivals[static_cast<std::size_t>(i)];
            vp.options = opts[static_cast<std::size_t>(i)];
            vp.leave_at_end = s.behavior != "seed";
            vp.upload_cap_bps = s.upload_limit;
            sg4::Actor::create("viewer" + std::to_string(i), world.host_of(i),
                               [&world, vp]() { run_viewer(world, vp); });
        }
    });
    engine->run();
    RunRecords r;
    r.scenario = s.name;
    r.kind = "title";
    r.sessions = world.sessions();
    std::sort(r.sessions.begin(), r.sessions.end(),
              [](const auto& a, const auto& b) { return a.box < b.box; });
    r.title_names = {"title"};
    r.title_bytes = {s.title_bytes()};
    r.bitrate_bps = s.bitrate;
    r.vod_bytes = world.vod_bytes();
    r.seed_bytes = world.seed_bytes();
    r.server_bins = world.bins();
    r.bin_seconds = world.bin_seconds();
    if (s.shaping)
        r.notes.push_back("shaping: the clients' network namespaces are not simulated; access links are");
    if (!s.baselines.empty()) r.notes.push_back("baselines (unicast, stock) are not simulated");
    if (static_cast<int>(r.sessions.size()) < s.clients)
        r.notes.push_back(std::to_string(s.clients - static_cast<int>(r.sessions.size())) +
                          " clients had not ended by the time limit");
    fill_sim_cost(r, world, started, tuning.tick_s);
    return r;
}

}  // namespace toast::sim
