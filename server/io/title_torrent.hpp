// The .torrent ingest writes for a title: BitTorrent v1 only (libtorrent create_torrent), one file named
// after the title with its container's extension, and the same bytes for the same input (no creation date,
// no "created by").
//
// In the info dictionary when the operator asks for them (so they are part of the info-hash, and no peer can
// strip them without leaving the swarm):
//   "private": 1        BEP 27: clients use only the torrent's trackers, never DHT, PEX or local discovery
//   "ssl-cert": PEM     the operator's CA: libtorrent makes it an SSL torrent, whose peers must present a
//                       certificate signed by it (toast/common/peer_certs.hpp)
//
// Outside the info dictionary, so the info-hash does not depend on them:
//   "url-list": [public_url + "/titles/" + NAME]   BEP 19 web seed: any BitTorrent client can fetch from us;
//                                                  on a tier, every node's url + "/titles/" + NAME
//   "toast":    {"bitrate": <bits per second, integer>, "title": NAME,
//                "average_bitrate": <bits per second>, "peak_bitrate": <bits per second>}
//                                                  read by toast-client for its playback deadlines; average
//                                                  and peak come from the demand trace of a variable-rate
//                                                  title (peak: its largest round), else equal the bitrate
//                "operator_peers": ["IP:PORT", ...]  when given: the operator's peers, server-side for
//                clients
//                "tier": {"nodes": [{"id": ID, "url": URL}, ...], "replicas": N, "placement": "block"},
//                "block_size": BYTES                 on a tier: which nodes hold each block (tier.hpp), so a
//                                                    client asks a piece's holders directly
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <libtorrent/sha1_hash.hpp>

#include "toast/common/tier.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

struct TorrentSpec {
    std::string title;
    std::string file_name;  // the single file's name; empty: the title
    std::uint64_t size = 0;
    std::uint64_t piece_size = 256 * 1024;
    std::vector<libtorrent::sha1_hash> piece_hashes;  // SHA-1 of each piece of the title's bytes
    std::vector<std::string> announce;                // one tier each, in order
    std::vector<std::string> web_seeds;               // full URLs of the title on each server, in order
    BitRate bitrate{0};
    std::optional<BitRate> average_bitrate;   // default: bitrate
    std::optional<BitRate> peak_bitrate;      // default: the average
    std::vector<std::string> operator_peers;  // "IP:PORT" each; written only when there are some
    bool private_torrent = false;             // BEP 27 "private": 1
    std::string ssl_ca;                       // PEM of the peers' CA ("ssl-cert"); empty: a plain torrent
    std::optional<TierLayout> tier;           // the nodes holding the title's blocks, with its block size
    std::uint64_t block_size = 0;
};

struct TorrentFile {
    std::string bytes;      // bencoded
    std::string info_hash;  // hex
};

// Throws std::runtime_error if libtorrent rejects the spec.
TorrentFile make_title_torrent(const TorrentSpec& spec);

// The v1 info-hash (40 hex digits) of bencoded torrent bytes; empty when they are not a torrent.
std::string torrent_info_hash(std::string_view bytes);

// The piece size of bencoded torrent bytes; nullopt when they are not a torrent.
std::optional<std::uint64_t> torrent_piece_size(std::string_view bytes);

// A torrent file the store keeps (at most 64 MiB), or nullopt with `problem` saying why not.
std::optional<std::string> read_torrent_file(const std::filesystem::path& path, std::string& problem);

}  // namespace toast::server
