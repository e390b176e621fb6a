// The title catalogue a set-top box reads from GET /catalog: every title with what a box needs to list it,
// play it from the server or fetch its torrent, so a box needs only the server's URL. Pure: titles in, the
// JSON body and its validator out.
//
//   {"titles": [{"name": "movie", "file": "movie.ts", "size": 12000000, "bitrate": 6000000, "duration": 16.0,
//                "etag": "\"875220dd6ed31ff2\"", "last_modified": "Sun, 06 Nov 1994 08:49:37 GMT",
//                "url": "/titles/movie", "torrent": "/torrents/movie.torrent",
//                "info_hash": "d967f544993f290178692f681c9faa9e3aee4145", "demand": 12.5}, ...]}
//
// Titles are sorted by name. `etag` and `last_modified` are the title's own HTTP validators; `duration` is
// size x 8 / bitrate in seconds (to the millisecond); `url` and `torrent` are relative to the server's URL
// (`torrent` and `info_hash` are null for a title ingested before the store kept torrents). `demand` is the
// title's recent demand, sessions started per hour (server/core/title_demand.hpp), to three decimals. A title
// ingested on a tier also has "urls": its absolute URL on every node of the tier
// ("http://node:port/titles/NAME"), in the tier's order, so a box can ask any of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "toast/common/units.hpp"

namespace toast::server {

struct CatalogTitle {
    std::string name;
    std::string file_name;  // the file inside the torrent: the name plus the container's extension
    std::uint64_t size = 0;
    BitRate bitrate{0};
    std::string etag;  // quoted
    std::chrono::system_clock::time_point last_modified;
    std::string info_hash;          // empty: no torrent kept
    double demand = 0;              // sessions started per hour
    std::vector<std::string> urls;  // on a tier: the title on every node; empty: this server only
};

struct CatalogBody {
    std::string json;
    std::string etag;  // strong, quoted, changes whenever the body does
};

CatalogBody catalog_body(std::vector<CatalogTitle> titles);

// The path of a title's torrent: "/torrents/NAME.torrent".
std::string torrent_path(const std::string& name);

}  // namespace toast::server
