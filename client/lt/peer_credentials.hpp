// A box's credentials in private swarms, applied to every torrent the session adds (StreamSession::add):
// its tracker passkey, written into each of the torrent's tracker URLs (client/core/tracker_url.hpp), and
// its certificate and key, which libtorrent presents to the peers of an SSL torrent (one whose info
// dictionary carries the operator's CA as "ssl-cert"; docs/client.md, "Private swarms").
//
// What libtorrent 2.0.8 does with them:
//  - An SSL torrent gets its own TLS context trusting only the torrent's CA, requiring a peer certificate
//    and checking its name (torrent.cpp:1625-1680, 1470-1600); it accepts peers only over TLS, a plain
//    connection is dropped with "requires_ssl_connection" (torrent.cpp:7659-7697); it connects and
//    announces only through SSL listen sockets ("PORTs" in listen_interfaces), announcing their port
//    (torrent.cpp:2824-2849, session_impl.cpp:1295-1313). The certificate is set with
//    set_ssl_certificate_buffer, which also wants DH parameters (torrent.cpp:5906-5935).
//  - A private torrent (BEP 27) is never announced to the DHT or local discovery and takes no peers from
//    either (torrent.cpp:678, 2655, 2794); ut_pex is not attached to it (ut_pex.cpp:635). Toast also sets
//    the torrent's disable_dht, disable_lsd and disable_pex flags, so the rule is visible in its flags.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/torrent_handle.hpp>

namespace toast::client {

struct PeerCredentials {
    std::optional<std::string> passkey;
    std::string ssl_cert;  // PEM; empty: none
    std::string ssl_key;   // PEM
};

// Reads the certificate and key files (both or neither); throws std::runtime_error naming the file and
// what is wrong (unreadable, not PEM, the key not the certificate's).
PeerCredentials load_peer_credentials(std::optional<std::string> passkey,
                                      const std::filesystem::path& ssl_cert,
                                      const std::filesystem::path& ssl_key);

// Before add_torrent: the passkey goes into every tracker URL (the torrent's own, whose torrent_info is
// copied without them, and params.trackers, tiers kept), and a private torrent gets the disable_dht,
// disable_lsd and disable_pex flags. Throws std::runtime_error when the torrent is an SSL torrent and the
// box has no certificate, or one its CA did not sign or that does not name it.
void apply_peer_credentials(libtorrent::add_torrent_params& params, const PeerCredentials& credentials);

// After apply_peer_credentials and the session's own flags, just before add_torrent: an SSL torrent for which
// the box holds a certificate is added paused. set_ssl_certificate_buffer can only follow add_torrent, and
// meanwhile libtorrent may already connect to a peer from the tracker's first answer with no certificate to
// present: the peer refuses it ("tlsv13 alert certificate required") and the new box meets no one for a
// minute (seen in 2 of 16 runs of the service's private-swarm test).
void hold_until_certified(libtorrent::add_torrent_params& params, const PeerCredentials& credentials);

// After add_torrent: gives an SSL torrent the box's certificate and resumes it (hold_until_certified paused
// it); nothing for other torrents.
void install_peer_certificate(libtorrent::torrent_handle handle, const libtorrent::torrent_info& ti,
                              const PeerCredentials& credentials);

}  // namespace toast::client
