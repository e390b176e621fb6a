#include "client/lt/session_factory.hpp"

#include <algorithm>
#include <limits>

#include <libtorrent/alert.hpp>
#include <libtorrent/extensions/smart_ban.hpp>
#include <libtorrent/extensions/ut_metadata.hpp>
#include <libtorrent/ip_filter.hpp>
#include <libtorrent/settings_pack.hpp>
#include <libtorrent/torrent_flags.hpp>

#include "client/lt/swarm_control.hpp"

namespace lt = libtorrent;

namespace toast::client {

namespace {

int bytes_per_second_setting(const std::optional<BitRate>& rate) {
    if (!rate) return 0;  // 0 = unlimited
    auto bps = rate->value() / 8;
    return static_cast<int>(std::clamp<std::uint64_t>(bps, 1, std::numeric_limits<int>::max()));
}

}  // namespace

std::string listen_interfaces(const SessionConfig& c) {
    auto on = [&](std::uint16_t port, const char* suffix) {
        const std::string p = std::to_string(port) + suffix;
        if (c.interface.empty()) return "0.0.0.0:" + p + ",[::]:" + p;
        const bool v6 = c.interface.find(':') != std::string::npos;
        return (v6 ? "[" + c.interface + "]" : c.interface) + ":" + p;
    };
    std::string out = on(c.listen_port, "");
    if (c.ssl_listen_port) out += "," + on(*c.ssl_listen_port, "s");
    return out;
}

int tracker_num_want(int max_connections) {
    return std::max(max_connections * 3 / 8, 1);
}

int torrent_connections_of(const SessionConfig& config) {
    return std::min(config.torrent_connections.value_or(config.max_connections), config.max_connections);
}

lt::session_params make_session_params(const SessionConfig& c) {
    lt::settings_pack s;
    s.set_str(lt::settings_pack::user_agent, c.user_agent);
    s.set_str(lt::settings_pack::listen_interfaces, listen_interfaces(c));
    s.set_str(lt::settings_pack::outgoing_interfaces, c.interface);  // "": the routing table decides

    // Nothing reaches outside the swarm unless asked for: no DHT or local discovery by default, the router
    // is asked to forward ports only when the box is told to (a box behind a home router).
    s.set_bool(lt::settings_pack::enable_dht, c.enable_dht);
    s.set_bool(lt::settings_pack::enable_lsd, c.enable_lsd);
    s.set_bool(lt::settings_pack::enable_upnp, c.enable_upnp);
    s.set_bool(lt::settings_pack::enable_natpmp, c.enable_natpmp);
    // Listening on every interface, follow the box's addresses as they come and go (DHCP, a new link);
    // on one address there is nothing to follow.
    s.set_bool(lt::settings_pack::enable_ip_notifier, c.interface.empty());

    // Every tracker of every tier of the announce-list (BEP 12), in parallel: with one tracker killed, a
    // newcomer still hears of its peers from another at once. A failed tracker is retried after 5 s + fails^2
    // x 5 s x tracker_backoff% (libtorrent 2.0.8, announce_entry.cpp); the default 250% waits 17 s, 55 s,
    // 117 s, ... up to an hour, 10% waits 5.5 s, 7 s, 9.5 s, ... and about 4 min after half an hour down, so
    // a restarted tracker hears again from every peer within one announce interval.
    s.set_bool(lt::settings_pack::announce_to_all_tiers, true);
    s.set_bool(lt::settings_pack::announce_to_all_trackers, true);
    s.set_int(lt::settings_pack::tracker_backoff, 10);
    // The operator's tracker sets the announce interval: libtorrent raises any interval below
    // min_announce_interval (300 s by default) to it, so a tracker asking for a shorter one would otherwise
    // wait that long to hear again from a box.
    s.set_int(lt::settings_pack::min_announce_interval, 5);

    // Many clients share one address: peers must be told apart by port, and a connection libtorrent deems
    // redundant (both sides seeding) must stay, or upload_mode would drop it.
    s.set_bool(lt::settings_pack::allow_multiple_connections_per_ip, true);
    s.set_bool(lt::settings_pack::close_redundant_connections, false);
    s.set_bool(lt::settings_pack::smooth_connects, false);

    // TCP only and unencrypted: uTP shapes its rate on its own and our raw CANCEL/lt_donthave messages are
    // written with send_buffer, which must not go through an encrypted stream.
    s.set_bool(lt::settings_pack::enable_incoming_utp, false);
    s.set_bool(lt::settings_pack::enable_outgoing_utp, false);
    s.set_int(lt::settings_pack::out_enc_policy, lt::settings_pack::pe_disabled);
    s.set_int(lt::settings_pack::in_enc_policy, lt::settings_pack::pe_disabled);

    // Let priorities and deadlines decide the order: no whole-piece grabbing, no random first pieces, no
    // preference for partial pieces or extents.
    s.set_int(lt::settings_pack::whole_pieces_threshold, 0);
    s.set_int(lt::settings_pack::initial_picker_threshold, 0);
    s.set_bool(lt::settings_pack::prioritize_partial_pieces, false);
    s.set_bool(lt::settings_pack::piece_extent_affinity, false);

    s.set_int(lt::settings_pack::upload_rate_limit, bytes_per_second_setting(c.upload_limit));
    s.set_int(lt::settings_pack::download_rate_limit, bytes_per_second_setting(c.download_limit));
    // The rate limiter hands out quota once per tick, and until a peer class has a second's worth saved up
    // every send waits for the next tick, protocol messages included. A newcomer starts with none: with the
    // 500 ms default its handshake, its interest and its first requests would each wait a tick, its peers
    // would send nothing for 1.5 s, and the server would take the pieces due meanwhile. The same wait falls
    // on every HAVE, request and block along a chain of uploading viewers (an uploader never has a second's
    // quota saved up). Between ticks libtorrent only refills quotas, but each tick wakes the client: a longer
    // tick saves a dense swarm's clients some CPU and breaks links of its chains, which then fetch from the
    // server (measured in docs/results.md, *Scale runs*), so the tick stays short.
    s.set_int(lt::settings_pack::tick_interval, 50);
    // A block in an uploader's send buffer goes out whatever CANCEL follows it: when the server takes a piece
    // at its last moment, the blocks of it that peers have buffered still arrive, and their upload is lost.
    // libtorrent buffers half a second of each connection's upload rate; a tenth still keeps the socket fed
    // between 50 ms ticks. With sends this small libtorrent's limiter (a token bucket three seconds deep)
    // may at first pass a few seconds' worth of extra bytes; on average it holds the limit.
    s.set_int(lt::settings_pack::send_buffer_watermark_factor, 10);
    // Limit what peers actually receive: libtorrent estimates TCP/IP overhead for 1500-byte frames, which
    // on loopback (64 KiB MTU) would cost about 10% of the configured rate.
    s.set_bool(lt::settings_pack::rate_limit_ip_overhead, false);

    s.set_int(lt::settings_pack::choking_algorithm, lt::settings_pack::fixed_slots_choker);
    if (c.choker != ChokerKind::tit_for_tat) {
        // libtorrent's choker always ranks by bytes received from the peer; with unlimited slots it never
        // chokes and the Toast plugin decides instead (and chokes again at once whom libtorrent unchokes).
        // No allowed-fast pieces (BEP 6): a peer may request those while choked, around the plugin's choice.
        s.set_int(lt::settings_pack::unchoke_slots_limit, -1);
        s.set_int(lt::settings_pack::allowed_fast_set_size, 0);
    } else {
        s.set_int(lt::settings_pack::unchoke_slots_limit, c.unchoke_slots);
    }

    // Beyond connections_limit (plus libtorrent's slack of 10) incoming connections are refused; the
    // per-torrent limit (prepare_add_torrent_params) makes a full torrent swap its lowest-ranked peer for a
    // newcomer instead, so late arrivals still find peers in a swarm where everyone is full.
    s.set_int(lt::settings_pack::connections_limit, c.max_connections);
    // Peers asked of the tracker. Toast's tracker answers a viewer with the viewers that joined just before
    // and after it, its neighbours in the title, whom the nearest-behind choker chains. Asked for more than
    // its cap, a client connects to a random share of them (libtorrent picks by BEP 40 rank); asked for
    // about a third, it connects to all of them, about as many newcomers connect to it, and it stays below
    // its cap, where a newcomer would take the place of a random peer, perhaps a neighbour.
    s.set_int(lt::settings_pack::num_want, tracker_num_want(torrent_connections_of(c)));
    s.set_int(lt::settings_pack::aio_threads, c.disk_threads);
    // A HAVE goes to every connected peer for every piece, the most frequent message in a streaming swarm
    // (a piece a second per viewer at 2 Mbps and 256 KiB, more with smaller pieces). Peers ahead of us in
    // the title already have the piece: telling them costs both sides a send and a wake-up for nothing.
    s.set_bool(lt::settings_pack::send_redundant_have, false);

    s.set_int(lt::settings_pack::alert_mask,
              static_cast<int>(static_cast<std::uint32_t>(
                  lt::alert_category::status | lt::alert_category::error | lt::alert_category::peer |
                  lt::alert_category::connect | lt::alert_category::piece_progress |
                  lt::alert_category::storage | lt::alert_category::tracker)));
    s.set_int(lt::settings_pack::alert_queue_size, 10000);
    // No peer exchange (ut_pex): a client under its cap connects to every peer it hears of, so PEX would
    // fill its slots with random peers, and each newcomer past the cap would then take the place of a
    // random one, perhaps the neighbour the chain runs through. The tracker names the neighbours.
    // ut_metadata and smart_ban, libtorrent's other default plugins, are added with the session.
    lt::session_params params(std::move(s), std::vector<std::shared_ptr<lt::plugin>>{});
    return params;
}

void map_all_peers_to_global_class(lt::session& session) {
    lt::ip_filter filter;
    auto global = std::uint32_t{1} << static_cast<std::uint32_t>(lt::session::global_peer_class_id);
    filter.add_rule(lt::make_address("0.0.0.0"), lt::make_address("255.255.255.255"), global);
    filter.add_rule(lt::make_address("::"), lt::make_address("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                    global);
    session.set_peer_class_filter(filter);
}

std::unique_ptr<lt::session> make_session(lt::session_params params, std::shared_ptr<SwarmControl> control,
                                          lt::io_context* io) {
    if (control) params.extensions.push_back(control->make_plugin());
    auto session = io != nullptr ? std::make_unique<lt::session>(std::move(params), *io)
                                 : std::make_unique<lt::session>(std::move(params));
    session->add_extension(&lt::create_ut_metadata_plugin);
    session->add_extension(&lt::create_smart_ban_plugin);
    map_all_peers_to_global_class(*session);
    if (control) control->attach(session->get_context());
    return session;
}

void prepare_add_torrent_params(lt::add_torrent_params& params, int max_connections) {
    params.max_connections = max_connections;
    params.flags &= ~lt::torrent_flags::auto_managed;
    params.flags &= ~lt::torrent_flags::paused;
    params.flags &= ~lt::torrent_flags::sequential_download;
}

}  // namespace toast::client
