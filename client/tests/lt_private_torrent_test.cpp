// What a Toast session does with private and SSL torrents and where it listens, checked in process against
// libtorrent: the listen sockets and port mapping a box asks for, a private torrent's flags (no DHT, local
// discovery or peer exchange for it even with the DHT on), the passkey in every tracker URL with the
// info-hash unchanged, and no ut_pex in the extension handshake a peer receives.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <libtorrent/alert_types.hpp>
#include <libtorrent/bdecode.hpp>
#include <libtorrent/create_torrent.hpp>
#include <libtorrent/settings_pack.hpp>
#include <libtorrent/torrent_flags.hpp>

#include "client/lt/session_factory.hpp"
#include "client/lt/stream_session.hpp"
#include "lt_test_support.hpp"
#include "test_support.hpp"

namespace lt = libtorrent;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace toast::client;

namespace {

const std::string kKey = "box1box1box1box1box1box1box1box1";

struct NoEvents : TitleEvents {
    void on_event(const LtEvent&) override {}
};

// A torrent of a small random file, private or not, with `trackers` (one tier each).
std::shared_ptr<lt::torrent_info> torrent(const toast::testing::TempDir& dir, bool priv,
                                          const std::vector<std::string>& trackers) {
    const auto file = dir / "title.bin";
    if (!std::filesystem::exists(file)) toast::testing::write_random_file(file, 256 * 1024, 3);
    lt::file_storage fs;
    lt::add_files(fs, file.string());
    lt::create_torrent ct(fs, 64 * 1024, lt::create_torrent::v1_only);
    lt::set_piece_hashes(ct, dir.path().string());
    ct.set_priv(priv);
    for (std::size_t i = 0; i < trackers.size(); ++i)
        ct.add_tracker(trackers[i], static_cast<int>(i));
    std::vector<char> bytes;
    lt::bencode(std::back_inserter(bytes), ct.generate());
    return std::make_shared<lt::torrent_info>(bytes, lt::from_span);
}

lt::add_torrent_params params_for(std::shared_ptr<lt::torrent_info> ti, const toast::testing::TempDir& dir) {
    lt::add_torrent_params p;
    p.ti = std::move(ti);
    p.save_path = dir.path().string();
    return p;
}

}  // namespace

TEST_CASE(
    "a box listens on every interface for a bare port, on one address for HOST:PORT, and maps ports only "
    "when told",
    "[client][session][network]") {
    SessionConfig every;
    every.interface = "";
    every.listen_port = 6881;
    auto s = make_session_params(every).settings;
    CHECK(s.get_str(lt::settings_pack::listen_interfaces) == "0.0.0.0:6881,[::]:6881");
    CHECK(s.get_str(lt::settings_pack::outgoing_interfaces).empty());
    CHECK(s.get_bool(lt::settings_pack::enable_ip_notifier));
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_upnp));
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_natpmp));

    every.ssl_listen_port = 6882;
    every.enable_upnp = true;
    every.enable_natpmp = true;
    s = make_session_params(every).settings;
    CHECK(s.get_str(lt::settings_pack::listen_interfaces) ==
          "0.0.0.0:6881,[::]:6881,0.0.0.0:6882s,[::]:6882s");
    CHECK(s.get_bool(lt::settings_pack::enable_upnp));
    CHECK(s.get_bool(lt::settings_pack::enable_natpmp));

    SessionConfig one;
    one.interface = "2001:db8::7";
    one.listen_port = 7000;
    one.ssl_listen_port = 0;
    s = make_session_params(one).settings;
    CHECK(s.get_str(lt::settings_pack::listen_interfaces) == "[2001:db8::7]:7000,[2001:db8::7]:0s");
    CHECK(s.get_str(lt::settings_pack::outgoing_interfaces) == "2001:db8::7");
    CHECK_FALSE(s.get_bool(lt::settings_pack::enable_ip_notifier));
}

TEST_CASE("a session on every interface listens on loopback and on each of the host's IPv4 addresses",
          "[client][session][network]") {
    asio::io_context io;
    SessionConfig c;
    c.interface = "";
    StreamSession session(io, c);
    // libtorrent expands 0.0.0.0 into one socket per local address that is up (session_impl.cpp:287-344).
    std::set<std::string> wanted;
    ifaddrs* ifs = nullptr;
    REQUIRE(::getifaddrs(&ifs) == 0);
    for (auto* i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        char text[INET_ADDRSTRLEN] = {};
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
        wanted.insert(text);
    }
    ::freeifaddrs(ifs);
    REQUIRE(wanted.count("127.0.0.1") == 1);
    std::set<std::string> listening;
    std::vector<lt::alert*> alerts;
    toast::client::testing::wait_until(
        [&] {
            session.session().pop_alerts(&alerts);
            for (auto* a : alerts)
                if (auto* ok = lt::alert_cast<lt::listen_succeeded_alert>(a))
                    if (ok->socket_type == lt::socket_type_t::tcp) listening.insert(ok->address.to_string());
            return std::includes(listening.begin(), listening.end(), wanted.begin(), wanted.end());
        },
        5s);
    for (const auto& a : wanted) {
        INFO(a);
        CHECK(listening.count(a) == 1);
    }
}

TEST_CASE("a private torrent gets no DHT, local discovery or peer exchange, even with the DHT on",
          "[client][session][private]") {
    toast::testing::TempDir dir;
    asio::io_context io;
    SessionConfig c;
    c.enable_dht = true;
    c.enable_lsd = true;
    StreamSession session(io, c);
    NoEvents events;
    const lt::torrent_flags_t off =
        lt::torrent_flags::disable_dht | lt::torrent_flags::disable_lsd | lt::torrent_flags::disable_pex;

    auto priv = session.add(params_for(torrent(dir, true, {}), dir), events);
    CHECK(priv.handle.torrent_file()->priv());
    CHECK((priv.handle.flags() & off) == off);
    session.remove(priv.handle, true);

    toast::testing::TempDir open_dir;
    auto open = session.add(params_for(torrent(open_dir, false, {}), open_dir), events);
    CHECK_FALSE(open.handle.torrent_file()->priv());
    CHECK((open.handle.flags() & off) == lt::torrent_flags_t{});
}

TEST_CASE("the passkey goes into every tracker URL of a torrent, and its info-hash stays",
          "[client][session][passkey]") {
    toast::testing::TempDir dir;
    asio::io_context io;
    PeerCredentials credentials;
    credentials.passkey = kKey;
    StreamSession session(io, SessionConfig{}, credentials);
    NoEvents events;
    auto ti = torrent(dir, true, {"http://t.example:6969/announce", "udp://t.example:6969/announce"});
    const auto hash = ti->info_hashes();
    auto p = params_for(ti, dir);
    p.trackers = {"http://other.example/tracker.php"};
    auto added = session.add(std::move(p), events);
    // Tiers are kept; libtorrent orders the list itself (and with prefer_udp_trackers swaps a host's UDP
    // tracker ahead of its HTTP one, torrent.cpp:344-345).
    std::set<std::string> urls;
    std::multiset<int> tiers;
    for (const auto& t : added.handle.trackers()) {
        urls.insert(t.url);
        tiers.insert(t.tier);
    }
    CHECK(urls == std::set<std::string>{"http://t.example:6969/announce/" + kKey,
                                        "udp://t.example:6969/announce/" + kKey,
                                        "http://other.example/tracker.php?passkey=" + kKey});
    CHECK(tiers == std::multiset<int>{0, 0, 1});
    CHECK(added.handle.info_hashes() == hash);
    // The caller's torrent_info keeps its own URLs (a player reads it).
    CHECK(ti->trackers().front().url == "http://t.example:6969/announce");
}

TEST_CASE("a peer meeting a Toast box is offered no peer exchange in its extension handshake",
          "[client][session][private]") {
    toast::testing::TempDir dir;
    asio::io_context io;
    SessionConfig c;  // 127.0.0.1, any port
    StreamSession session(io, c);
    NoEvents events;
    auto ti = torrent(dir, false, {});
    auto added = session.add(params_for(ti, dir), events);
    const int port = toast::client::testing::listen_port(session.session());
    REQUIRE(port != 0);

    asio::io_context client_io;
    asio::ip::tcp::socket sock(client_io);
    sock.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    std::string hs;
    hs.push_back(19);
    hs += "BitTorrent protocol";
    std::string reserved(8, '\0');
    reserved[5] = 0x10;  // BEP 10 extension protocol
    hs += reserved;
    const auto ih = ti->info_hashes().v1;
    hs.append(ih.data(), 20);
    hs += "-XX0001-123456789012";
    asio::write(sock, asio::buffer(hs));
    std::array<char, 68> theirs{};
    asio::read(sock, asio::buffer(theirs));
    REQUIRE(std::string(theirs.data() + 28, 20) == std::string(ih.data(), 20));
    // Messages until the extension handshake (id 20, extended id 0).
    std::string m_dict;
    for (int i = 0; i < 10 && m_dict.empty(); ++i) {
        std::array<unsigned char, 4> len_bytes{};
        asio::read(sock, asio::buffer(len_bytes));
        const std::uint32_t len = (std::uint32_t{len_bytes[0]} << 24) | (std::uint32_t{len_bytes[1]} << 16) |
                                  (std::uint32_t{len_bytes[2]} << 8) | len_bytes[3];
        REQUIRE(len < 1'000'000);
        std::string body(len, '\0');
        asio::read(sock, asio::buffer(body));
        if (len >= 2 && body[0] == 20 && body[1] == 0) m_dict = body.substr(2);
    }
    REQUIRE_FALSE(m_dict.empty());
    lt::error_code ec;
    auto node =
        lt::bdecode(lt::span<const char>(m_dict.data(), static_cast<std::ptrdiff_t>(m_dict.size())), ec);
    REQUIRE_FALSE(ec);
    auto m = node.dict_find_dict("m");
    REQUIRE(m);
    CHECK(m.dict_find("ut_metadata"));  // the extension protocol is on
    CHECK_FALSE(m.dict_find("ut_pex"));
    session.remove(added.handle, true);
}
