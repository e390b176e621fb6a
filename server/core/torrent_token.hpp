// A title's .torrent as handed to a holder of a signed URL: its BEP 19 url-list entries carry the token as a
// query parameter, so a stock BitTorrent client given the torrent's signed URL can use the server as a web
// seed (its requests carry no Authorization header). The url-list is outside the info dictionary: the
// info-hash, and so the swarm, stay the same. Pure: bytes in, bytes out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toast::server {

// `torrent` with "token=TOKEN" added to the query of each url-list URL (replacing a token already there);
// nullopt when it does not decode as a torrent's dictionary.
std::optional<std::string> torrent_with_token(std::string_view torrent, std::string_view token);

// `url` with its "token" query parameter set to `token`.
std::string url_with_token(std::string_view url, std::string_view token);

}  // namespace toast::server
