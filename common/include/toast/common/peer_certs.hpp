// The certificates of a swarm whose peers authenticate each other (libtorrent's SSL torrents): the operator's
// CA certificate, which ingest writes into a torrent's info dictionary as "ssl-cert", and each box's
// certificate and key signed by it. Checked with OpenSSL before libtorrent sees them, because libtorrent
// reports a bad certificate only as an alert once the torrent is running, and a box that cannot authenticate
// would otherwise just find no peers.
//
// What libtorrent 2.0.8 asks of them (torrent.cpp:1470-1600, 1625-1680): a peer's certificate must chain to
// the torrent's "ssl-cert" and nothing else (it is the only trusted root), and one of its subject
// alternative DNS names, or else its last common name, must be "*" (every torrent of that CA) or the
// torrent's name. libtorrent compares only as many characters as the certificate's name has
// (strncmp with the name's length), so a name that is a prefix of the torrent's name also matches: these
// checks require an exact match, so a certificate that works here works there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toast {

// nullopt when `pem` holds one X.509 certificate that can sign others (a CA: basicConstraints CA:TRUE,
// or a self-signed version 1 root); otherwise what is wrong with it.
std::optional<std::string> check_ca_certificate(std::string_view pem);

// nullopt when `cert_pem` holds a certificate and `key_pem` its private key; otherwise what is wrong.
std::optional<std::string> check_certificate_key(std::string_view cert_pem, std::string_view key_pem);

// nullopt when `cert_pem` is a certificate signed by the CA in `ca_pem` (valid now), `key_pem` is its
// private key, and it names `torrent_name` or "*"; otherwise what is wrong, e.g. "the certificate is not
// signed by the torrent's CA (certificate signature failure)". An empty torrent_name skips the name check.
std::optional<std::string> check_peer_certificate(std::string_view cert_pem, std::string_view key_pem,
                                                  std::string_view ca_pem, std::string_view torrent_name);

}  // namespace toast
