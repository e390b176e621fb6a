// Builds libtorrent sessions for streaming on a closed testbed. libtorrent's defaults are tuned for the open
// Internet and silently defeat what Toast needs (see /work/shared/notes/libtorrent-2.0.8.md): loopback peers
// ignore rate limits and unchoke slots, the picker grabs whole pieces and random pieces regardless of
// priority, and DHT/LSD/UPnP reach outside the testbed. Every such setting is decided here, in one place.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/session_params.hpp>

#include "client/core/disk_io_kind.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

class SwarmControl;

enum class ChokerKind {
    tit_for_tat,  // libtorrent's fixed-slots choker: unchoke the peers we download from fastest
    seed,         // seed-style while downloading: unchoke the peers we upload to fastest (core/choker.hpp)
    nearest,      // unchoke the peers nearest behind us in the title (core/choker.hpp)
    leader,       // unchoke the peers furthest along in the title (core/choker.hpp)
};

struct SessionConfig {
    // Listen (and outgoing) address; empty: every interface, IPv4 and IPv6 (listen_interfaces
    // "0.0.0.0:P,[::]:P", which libtorrent expands into one socket per local address,
    // session_impl.cpp:287-344).
    std::string interface = "127.0.0.1";
    std::uint16_t listen_port = 0;  // 0: any free port
    // The SSL listen port for SSL torrents (peer_credentials.hpp), on the same address(es); absent: none.
    std::optional<std::uint16_t> ssl_listen_port;
    std::optional<BitRate> upload_limit;    // payload + protocol bytes per second, all peers together
    std::optional<BitRate> download_limit;  // likewise for download
    ChokerKind choker = ChokerKind::tit_for_tat;
    int unchoke_slots = 2;  // regular unchoke slots (both chokers); ClientOptions::unchoke_slots
    // Peer connections at most. Every connection costs each side CPU for every piece (a HAVE message, its
    // share of libtorrent's per-peer work) whether or not data flows on it: in a swarm where everyone talks
    // to everyone the swarm's cost grows with the square of its size. Two and a half times the unchoke
    // slots leaves the choker peers to choose from; the thesis's client (mainline 4.4) initiated 40.
    int max_connections = 40;
    // Peer connections of one torrent at most (what num_want is derived from); absent: max_connections. A
    // box serving many titles needs more connections in all than one title may take, or the titles it
    // seeds fill its table and the title it plays finds no room.
    std::optional<int> torrent_connections;
    // libtorrent's disk threads (aio_threads), for DiskIoKind::mmap. A viewer writes a few hundred KiB a
    // second; the default 10 threads each wake for a share of the jobs, and the wake-ups cost more than the
    // jobs.
    int disk_threads = 2;
    DiskIoKind disk_io = DiskIoKind::posix;
    bool enable_dht = false;
    bool enable_lsd = false;
    bool enable_upnp = false;
    bool enable_natpmp = false;
    std::string user_agent = "toast-client/0.1";
};

// listen_interfaces for `config`: "HOST:PORT" (IPv6 in brackets) or both wildcards for every interface,
// then the SSL socket(s) with libtorrent's "s" suffix.
std::string listen_interfaces(const SessionConfig& config);

// Peers to ask the tracker for with a cap of `max_connections` (three eighths of it, at least one).
int tracker_num_want(int max_connections);

// The settings for `config`; the caller may still set session_params::disk_io_constructor.
libtorrent::session_params make_session_params(const SessionConfig& config);

// A running session with the testbed settings, every address mapped to the global peer class (so upload and
// download limits also hold between peers on 127.0.0.1) and, when `control` is given, the Toast plugin
// (CANCEL on add_piece, lt_donthave on ejection, the seed and nearest chokers) installed. With `io` the
// session runs on that io_context (whoever runs it runs libtorrent) instead of a thread of its own.
std::unique_ptr<libtorrent::session> make_session(libtorrent::session_params params,
                                                  std::shared_ptr<SwarmControl> control,
                                                  libtorrent::io_context* io = nullptr);

// Maps every IPv4 and IPv6 address to the global peer class only. libtorrent puts private and loopback
// ranges in the "local" class, which ignores rate limits and unchoke slots.
void map_all_peers_to_global_class(libtorrent::session& session);

// The connections one torrent of `config` may have.
int torrent_connections_of(const SessionConfig& config);

// Torrents are added non-auto-managed and unpaused: the queueing logic would otherwise pause and resume
// them, and upload_mode (used when the bounded buffer is full) requires non-auto-managed torrents. The
// torrent's own connection limit (torrent_connections_of): at it, an incoming peer replaces the
// lowest-ranked one rather than being refused.
void prepare_add_torrent_params(libtorrent::add_torrent_params& params,
                                int max_connections = SessionConfig{}.max_connections);

}  // namespace toast::client
