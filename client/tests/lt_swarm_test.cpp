#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <thread>

#include <libtorrent/alert_types.hpp>
#include <libtorrent/peer_info.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/lt/ejecting_disk_io.hpp"
#include "client/lt/lt_events.hpp"
#include "client/lt/session_factory.hpp"
#include "client/lt/swarm_control.hpp"
#include "client/lt/swarm_reader.hpp"
#include "lt_test_support.hpp"
#include "test_support.hpp"

namespace lt = libtorrent;
using namespace std::chrono_literals;
using toast::client::DiskIoKind;
using toast::client::EjectionRegistries;
using toast::client::EjectionRegistry;
using toast::client::LtEvent;
using toast::client::LtEventKind;
using toast::client::PieceCount;
using toast::client::PieceIndex;
using toast::client::SessionConfig;
using toast::client::SwarmControl;
using toast::client::SwarmReader;
namespace tt = toast::client::testing;

namespace {

constexpr int kPieceSize = 64 * 1024;

std::uint64_t allocated_bytes(const std::filesystem::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

// A client made like toast-client makes it: testbed settings, the ejecting disk and the Toast plugin.
struct Client {
    std::shared_ptr<EjectionRegistries> registries = std::make_shared<EjectionRegistries>();
    std::shared_ptr<EjectionRegistry> registry;
    std::shared_ptr<SwarmControl> control;
    lt::sha1_hash key;
    std::unique_ptr<lt::session> session;
    lt::torrent_handle handle;
    std::vector<LtEvent> events;

    Client(std::shared_ptr<lt::torrent_info> ti, const std::filesystem::path& dir, SessionConfig config = {},
           SwarmControl::Config control_config = {}) {
        key = ti->info_hashes().get_best();
        registry = registries->add(key);
        control = std::make_shared<SwarmControl>(control_config);
        auto params = toast::client::make_session_params(config);
        params.disk_io_constructor = toast::client::make_ejecting_disk_io(registries, config.disk_io);
        session = toast::client::make_session(std::move(params), control);
        handle = tt::add_torrent(*session, ti, dir);
    }
    ~Client() { control->detach(); }
    void pump() {
        std::vector<lt::alert*> alerts;
        session->pop_alerts(&alerts);
        toast::client::translate_alerts(alerts, events);
    }
    int count(LtEventKind kind) const {
        return static_cast<int>(
            std::count_if(events.begin(), events.end(), [&](auto& e) { return e.kind == kind; }));
    }
    bool has_event(LtEventKind kind, int piece) const {
        return std::any_of(events.begin(), events.end(),
                           [&](auto& e) { return e.kind == kind && e.piece == PieceIndex(piece); });
    }
    void connect_to(Client& other) {
        int port = tt::listen_port(*other.session);
        REQUIRE(port != 0);
        handle.connect_peer({lt::make_address("127.0.0.1"), static_cast<std::uint16_t>(port)});
    }
};

}  // namespace

TEST_CASE("an ejected piece is freed on disk and never served, so peers never see zeros",
          "[client][swarm][eject]") {
    toast::testing::TempDir dir;
    std::filesystem::create_directories(dir / "seed");
    std::filesystem::create_directories(dir / "leech");
    toast::testing::write_random_file(dir / "seed" / "t.bin", 32 * kPieceSize, 11);
    auto ti = tt::make_torrent(dir / "seed" / "t.bin", kPieceSize);
    SessionConfig config;
    config.disk_io = GENERATE(DiskIoKind::posix, DiskIoKind::mmap);
    INFO("disk I/O " << (config.disk_io == DiskIoKind::mmap ? "mmap" : "posix"));

    Client seed(ti, dir / "seed", config);
    REQUIRE(tt::wait_until([&] { return seed.handle.status().is_seeding; }, 10s));
    auto before = allocated_bytes(dir / "seed" / "t.bin");
    for (int p = 0; p < 4; ++p)
        CHECK(seed.registry->eject(PieceIndex(p)) == static_cast<std::uint64_t>(kPieceSize));
    CHECK(seed.registry->eject(PieceIndex(0)) == 0);  // idempotent
    CHECK(seed.registry->ejected_count() == 4);
    CHECK(allocated_bytes(dir / "seed" / "t.bin") <= before - 4 * kPieceSize);

    Client leech(ti, dir / "leech", config);
    leech.connect_to(seed);
    REQUIRE(tt::wait_until(
        [&] {
            leech.pump();
            return leech.count(LtEventKind::piece_finished) == 28;
        },
        20s));
    std::this_thread::sleep_for(500ms);
    leech.pump();
    CHECK(leech.count(LtEventKind::piece_finished) == 28);
    for (int p = 0; p < 4; ++p)
        CHECK_FALSE(leech.has_event(LtEventKind::piece_finished, p));
    CHECK(leech.count(LtEventKind::hash_failed) == 0);  // no zeros were ever sent
    CHECK(leech.count(LtEventKind::peer_connected) >= 1);
    CHECK(seed.registry->reads_refused() > 0);
}

namespace {
// A 16-piece title of random bytes (from `seed_value`) in dir/seed, and an empty dir/leech beside it.
std::shared_ptr<lt::torrent_info> sixteen_piece_title(const toast::testing::TempDir& dir,
                                                      std::uint64_t seed_value) {
    std::filesystem::create_directories(dir / "seed");
    std::filesystem::create_directories(dir / "leech");
    toast::testing::write_random_file(dir / "seed" / "t.bin", 16 * kPieceSize, seed_value);
    return tt::make_torrent(dir / "seed" / "t.bin", kPieceSize);
}
}  // namespace

TEST_CASE("lt_donthave tells connected peers a piece is gone", "[client][swarm][eject]") {
    toast::testing::TempDir dir;
    auto ti = sixteen_piece_title(dir, 12);
    Client seed(ti, dir / "seed");
    REQUIRE(tt::wait_until([&] { return seed.handle.status().is_seeding; }, 10s));
    // Keep the leecher from downloading anything, so it stays connected and interested in the seed's pieces.
    Client leech(ti, dir / "leech");
    leech.handle.prioritize_pieces(std::vector<lt::download_priority_t>(16, lt::dont_download));
    leech.connect_to(seed);
    auto availability = [&](int piece) {
        std::vector<int> a;
        leech.handle.piece_availability(a);
        return a.empty() ? -1 : a[static_cast<std::size_t>(piece)];
    };
    REQUIRE(tt::wait_until([&] { return availability(5) == 1; }, 10s));
    // Give the extension handshake a moment to be processed on both sides.
    REQUIRE(tt::wait_until(
        [&] {
            seed.control->announce_dont_have(seed.key, PieceIndex(5));
            return tt::wait_until([&] { return availability(5) == 0; }, 300ms);
        },
        5s));
    CHECK(seed.control->dont_haves_sent() >= 1);
    CHECK(availability(6) == 1);
    std::vector<lt::peer_info> peers;
    leech.handle.get_peer_info(peers);
    CHECK(peers.size() == 1);  // the message was well-formed: still connected
}

TEST_CASE("a piece added from the server cancels the requests still outstanding to peers",
          "[client][swarm][cancel]") {
    toast::testing::TempDir dir;
    std::filesystem::create_directories(dir / "seed");
    std::filesystem::create_directories(dir / "leech");
    constexpr int kBig = 256 * 1024;
    toast::testing::write_random_file(dir / "seed" / "t.bin", 8 * kBig, 13);
    auto ti = tt::make_torrent(dir / "seed" / "t.bin", kBig);
    SessionConfig slow;
    slow.upload_limit = toast::BitRate(100'000 * 8);  // a piece takes ~2.6 s
    Client seed(ti, dir / "seed", slow);
    REQUIRE(tt::wait_until([&] { return seed.handle.status().is_seeding; }, 10s));
    Client leech(ti, dir / "leech");
    // Only piece 3 is wanted.
    std::vector<lt::download_priority_t> prio(8, lt::dont_download);
    prio[3] = lt::default_priority;
    leech.handle.prioritize_pieces(prio);
    leech.connect_to(seed);
    REQUIRE(tt::wait_until(
        [&] {
            std::vector<lt::partial_piece_info> q;
            leech.handle.get_download_queue(q);
            return !q.empty() && q[0].piece_index == lt::piece_index_t(3);
        },
        10s));
    std::this_thread::sleep_for(300ms);

    auto content = toast::testing::read_file(dir / "seed" / "t.bin");
    std::vector<char> piece(content.begin() + 3 * kBig, content.begin() + 4 * kBig);
    leech.control->expect_server_piece(leech.key, PieceIndex(3));
    leech.handle.add_piece(lt::piece_index_t(3), std::move(piece));
    REQUIRE(tt::wait_until(
        [&] {
            leech.pump();
            return leech.has_event(LtEventKind::piece_finished, 3);
        },
        5s));
    CHECK(leech.control->cancels_sent() >= 1);
    // The seed answers the CANCELs with REJECTs, so far less than the rest of the piece arrives again.
    std::this_thread::sleep_for(1500ms);
    auto status = leech.handle.status();
    INFO("redundant " << status.total_redundant_bytes << " of " << status.total_payload_download << " bytes");
    CHECK(status.total_payload_download < kBig / 2);
    // What the seed sent of piece 3 after the server's copy passed is counted as raced: whole blocks, part
    // of the redundant bytes.
    auto raced = leech.control->raced_bytes(leech.key);
    CHECK(raced <= static_cast<std::uint64_t>(status.total_redundant_bytes));
    CHECK(raced % (16 * 1024) == 0);
    CHECK(seed.control->raced_bytes(seed.key) == 0);
    std::vector<lt::peer_info> peers;
    leech.handle.get_peer_info(peers);
    CHECK(peers.size() == 1);
}

namespace {

// A copy of `from` with only its first `pieces` pieces intact (the rest zeros), so a torrent added on it has
// exactly those pieces.
void write_prefix_copy(const std::filesystem::path& from, const std::filesystem::path& to, int pieces) {
    std::ifstream in(from, std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fill(data.begin() + static_cast<std::ptrdiff_t>(pieces) * kPieceSize, data.end(), 0);
    std::filesystem::create_directories(to.parent_path());
    std::ofstream out(to, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// A random title of `pieces` pieces at `dir/hub/t.bin`, and its torrent.
std::shared_ptr<lt::torrent_info> hub_title(const std::filesystem::path& dir, int pieces, int seed) {
    std::filesystem::create_directories(dir / "hub");
    toast::testing::write_random_file(dir / "hub" / "t.bin", static_cast<std::uint64_t>(pieces) * kPieceSize,
                                      seed);
    return tt::make_torrent(dir / "hub" / "t.bin", kPieceSize);
}

// A hub seeding `dir/hub/t.bin` with a position choker (nearest-behind or leader) and one slot (no
// optimistic one) at 512 kB/s: 8 pieces a second. libtorrent would unchoke each viewer as it becomes
// interested and let it take allowed-fast pieces while choked: either would hand the others pieces before
// their turn.
std::unique_ptr<Client> position_hub(const std::shared_ptr<lt::torrent_info>& ti,
                                     const std::filesystem::path& dir, toast::client::ChokerKind kind) {
    SessionConfig config;
    config.upload_limit = toast::BitRate(512'000 * 8);
    config.choker = kind;
    config.unchoke_slots = 1;
    auto hub = std::make_unique<Client>(ti, dir / "hub", config, SwarmControl::Config{kind, 1, 3});
    REQUIRE(tt::wait_until([&] { return hub->handle.status().is_seeding; }, 10s));
    return hub;
}

// Viewers holding the first held[i] pieces of the hub's title, connected to the hub unless `connect` is
// false. Their own upload is a trickle (1 kB/s), too slow to hand each other a whole piece while a test runs,
// so what they get comes from the hub.
std::vector<std::unique_ptr<Client>> viewers_of(Client& hub, const std::shared_ptr<lt::torrent_info>& ti,
                                                const std::filesystem::path& dir,
                                                const std::vector<int>& held, bool connect = true) {
    SessionConfig config;
    config.upload_limit = toast::BitRate(1'000 * 8);
    std::vector<std::unique_ptr<Client>> viewers;
    for (std::size_t i = 0; i < held.size(); ++i) {
        auto d = dir / ("v" + std::to_string(i));
        write_prefix_copy(dir / "hub" / "t.bin", d / "t.bin", held[i]);
        viewers.push_back(std::make_unique<Client>(ti, d, config));
        auto& v = *viewers.back();
        REQUIRE(tt::wait_until([&] { return v.handle.status().num_pieces == held[i]; }, 10s));
    }
    if (connect) {
        for (auto& v : viewers)
            v->connect_to(hub);
    }
    return viewers;
}

// A position_hub seeding a random title of `pieces` pieces, and viewers_of it holding the first held[i]
// pieces. `told_size`: the hub knows the title's size, so it knows it holds the whole title.
struct ChokerBed {
    toast::testing::TempDir dir;
    std::shared_ptr<lt::torrent_info> ti;
    std::unique_ptr<Client> hub;
    std::vector<std::unique_ptr<Client>> viewers;

    ChokerBed(int pieces, int seed, bool told_size, const std::vector<int>& held,
              toast::client::ChokerKind kind = toast::client::ChokerKind::nearest, bool connect = true)
        : ti(hub_title(dir.path(), pieces, seed)), hub(position_hub(ti, dir.path(), kind)) {
        hub->control->set_position(
            hub->key, {PieceIndex(pieces), std::nullopt, PieceCount(told_size ? pieces : 0), std::nullopt,
                       std::nullopt});
        viewers = viewers_of(*hub, ti, dir.path(), held, connect);
    }
    int pieces(int i) const { return viewers[static_cast<std::size_t>(i)]->handle.status().num_pieces; }
};

}  // namespace

TEST_CASE("the nearest-behind choker serves the viewer just behind it first, then the next",
          "[client][swarm][choker]") {
    constexpr int kPieces = 16;
    // One viewer at a time. The hub is not told the title's size, so it ranks as a viewer at its end would
    // (told, it would know it holds the whole title and spread its upload instead: the next test). Three
    // viewers holding the first 12, 6 and 0 pieces.
    ChokerBed bed(kPieces, 23, false, {12, 6, 0});
    auto& hub = bed.hub;
    auto pieces = [&](int i) { return bed.pieces(i); };
    // A viewer stops being interested once it holds every block, a moment before its last pieces pass
    // their hash check and show in its status: the hub may turn to the next one meanwhile.
    REQUIRE(tt::wait_until([&] { return pieces(0) == kPieces; }, 10s));
    CHECK(pieces(1) <= 6 + 3);
    CHECK(pieces(2) <= 3);
    REQUIRE(tt::wait_until([&] { return pieces(1) == kPieces; }, 10s));
    CHECK(pieces(2) <= 3);
    CHECK(tt::wait_until([&] { return pieces(2) == kPieces; }, 15s));
    CHECK(hub->control->choker_changes() >= 3);
}

TEST_CASE("a client holding the whole title serves two viewers at once and takes turns",
          "[client][swarm][choker]") {
    constexpr int kPieces = 32;
    // Given one slot, as the viewers have. Ranked nearest-behind, it would serve only the viewer furthest
    // along, as would every other seed of a swarm.
    const std::vector<int> held = {16, 8, 0};
    ChokerBed bed(kPieces, 29, true, held);
    auto& hub = bed.hub;
    auto pieces = [&](int i) { return bed.pieces(i); };
    auto progressed = [&] {
        int n = 0;
        for (int i = 0; i < 3; ++i)
            n += pieces(i) > held[static_cast<std::size_t>(i)] ? 1 : 0;
        return n;
    };
    // Whoever finishes first, another one has had pieces meanwhile (one slot ranked nearest-behind would
    // have left both others where they were), and in the end all three have the title.
    REQUIRE(tt::wait_until(
        [&] { return pieces(0) == kPieces || pieces(1) == kPieces || pieces(2) == kPieces; }, 15s));
    CHECK(progressed() >= 2);
    CHECK(tt::wait_until([&] { return pieces(0) == kPieces && pieces(1) == kPieces && pieces(2) == kPieces; },
                         20s));
    CHECK(hub->control->choker_changes() >= 3);
}

TEST_CASE("the leader choker serves the viewer furthest along first, then the next, whole title or not",
          "[client][swarm][choker]") {
    constexpr int kPieces = 16;
    // The operator's seed: it holds the whole title (told its size), and still gives its one slot to the
    // viewer furthest along, not in turns. The furthest along is neither the first to connect nor the last.
    ChokerBed bed(kPieces, 31, true, {6, 12, 0}, toast::client::ChokerKind::leader);
    auto& hub = bed.hub;
    auto pieces = [&](int i) { return bed.pieces(i); };
    // As in the nearest-behind test: the hub may turn to the next one a moment before the status shows it.
    REQUIRE(tt::wait_until([&] { return pieces(1) == kPieces; }, 10s));
    CHECK(pieces(0) <= 6 + 3);
    CHECK(pieces(2) <= 3);
    REQUIRE(tt::wait_until([&] { return pieces(0) == kPieces; }, 10s));
    CHECK(pieces(2) <= 3);
    CHECK(tt::wait_until([&] { return pieces(2) == kPieces; }, 15s));
    CHECK(hub->control->choker_changes() >= 3);
}

TEST_CASE("a position choker unchokes a newly interested viewer at once, not at its next tick",
          "[client][swarm][choker]") {
    // The choker ranks its peers once a second; a viewer that becomes interested between two ranks is ranked
    // at once. Here a viewer's first piece takes about 500 ms from its connection (bitfields, the first
    // request, a new connection's small send buffer). libtorrent connects it on the viewer's own second
    // tick, so a viewer started a little after the hub becomes interested early in the hub's second: left to
    // the hub's next rank, it would wait 0.5-0.85 s more in each of these rounds.
    for (int round = 0; round < 3; ++round) {
        toast::testing::TempDir dir;
        auto ti = hub_title(dir.path(), 8, 41 + round);
        auto hub = position_hub(ti, dir.path(), toast::client::ChokerKind::nearest);
        hub->control->set_position(hub->key,
                                   {PieceIndex(8), std::nullopt, PieceCount(0), std::nullopt, std::nullopt});
        std::this_thread::sleep_for(round * 150ms);
        std::filesystem::create_directories(dir.path() / "v");
        Client viewer(ti, dir.path() / "v");
        viewer.connect_to(*hub);
        REQUIRE(tt::wait_until([&] { return viewer.handle.status().num_peers > 0; }, 5s));
        auto connected = std::chrono::steady_clock::now();
        REQUIRE(tt::wait_until([&] { return viewer.handle.status().num_pieces >= 1; }, 5s));
        auto waited = std::chrono::steady_clock::now() - connected;
        INFO("round " << round << ": first piece "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                      << " ms after the connection");
        CHECK(waited < 800ms);
    }
}

TEST_CASE("a viewer the position choker has no slot for is not unchoked when it becomes interested",
          "[client][swarm][choker]") {
    constexpr int kPieces = 16;
    // libtorrent unchokes a peer the moment it says it is interested; choked again right after, it would
    // have sent its requests to the hub and taken them elsewhere. The hub serves the viewer just behind it
    // (12 pieces); the one far behind (none) waits, its interest held from libtorrent, and gets nothing
    // from the hub until the first is served. The far one connects once the hub is serving the near one: had
    // its interest come first, the hub's one slot would rightly have gone to it, as nobody else wanted it (on
    // a loaded machine the two connections' handshakes can finish in either order).
    ChokerBed bed(kPieces, 37, false, {12, 0}, toast::client::ChokerKind::nearest, false);
    auto& hub = bed.hub;
    auto& near = *bed.viewers[0];
    auto& far = *bed.viewers[1];
    near.connect_to(*hub);
    REQUIRE(tt::wait_until([&] { return near.handle.status().total_payload_download > 0; }, 5s));
    far.connect_to(*hub);
    REQUIRE(tt::wait_until([&] { return hub->control->interests_held() >= 1; }, 5s));
    REQUIRE(tt::wait_until([&] { return bed.pieces(0) == kPieces; }, 10s));
    auto status = far.handle.status();
    INFO("the far viewer took " << status.total_payload_download << " bytes meanwhile");
    CHECK(status.total_payload_download == 0);
    // Then it is unchoked, and its first request tells libtorrent of its interest.
    CHECK(tt::wait_until([&] { return bed.pieces(1) == kPieces; }, 15s));
}

TEST_CASE("a swarm read runs libtorrent's calls in one batch on its network thread and reads what they read",
          "[client][swarm][reader]") {
    toast::testing::TempDir dir;
    auto ti = sixteen_piece_title(dir, 17);
    Client seed(ti, dir / "seed");
    REQUIRE(tt::wait_until([&] { return seed.handle.status().is_seeding; }, 10s));
    Client leech(ti, dir / "leech");
    // Half the title wanted: the leech stays a downloader (a seed has no availability to read).
    std::vector<lt::download_priority_t> wanted(16, lt::default_priority);
    std::fill(wanted.begin() + 8, wanted.end(), lt::dont_download);
    leech.handle.prioritize_pieces(wanted);
    leech.connect_to(seed);
    REQUIRE(tt::wait_until([&] { return leech.handle.status().num_pieces == 8; }, 20s));

    // Where the batch runs, and that a synchronous handle call made there does not wait for itself.
    bool on_network = false;
    int pieces = 0;
    leech.control->run_on_network([&] {
        on_network = leech.session->get_context().get_executor().running_in_this_thread();
        pieces = leech.handle.status(lt::torrent_handle::query_pieces).pieces.count();
    });
    CHECK(on_network);
    CHECK(pieces == 8);
    CHECK_THROWS_WITH(leech.control->run_on_network([] { throw std::runtime_error("refused"); }), "refused");

    auto geometry = toast::client::TitleGeometry::make(toast::Bytes(16 * kPieceSize),
                                                       toast::Bytes(kPieceSize), toast::BitRate(2'000'000));
    REQUIRE(geometry);
    int batches = 0;
    SwarmReader batched(leech.handle, *geometry, 1000ms, [&](const std::function<void()>& work) {
        ++batches;
        leech.control->run_on_network(work);
    });
    SwarmReader direct(leech.handle, *geometry, 1000ms);
    const auto now = std::chrono::steady_clock::now();
    auto a = batched.read(now, true, {});
    auto b = direct.read(now, true, {});
    CHECK(batches == 1);  // status, availability, download queue and peers: one trip
    CHECK(a.availability == b.availability);
    CHECK(a.availability == std::vector<int>(16, 1));  // the seed has every piece
    REQUIRE(a.peers.size() == 1);
    CHECK(a.peers.size() == b.peers.size());
    CHECK(a.peers[0].seed);
    CHECK(a.in_flight.empty());
    CHECK(a.from_peers == b.from_peers);
    CHECK(a.from_peers.value() == 8u * kPieceSize);
    CHECK(batched.status().total_payload_download == direct.status().total_payload_download);

    // Once the session is going away the batch runs on the caller's thread.
    leech.control->detach();
    bool here = false;
    leech.control->run_on_network(
        [&] { here = !leech.session->get_context().get_executor().running_in_this_thread(); });
    CHECK(here);
}
