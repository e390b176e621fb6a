// A box's passkey in the tracker URLs of the torrents it adds (toast-client --passkey; the tracker's side is
// tracker/core/passkeys.hpp). Pure: URL text in, URL text out.
//
// The key goes where private trackers and stock clients expect it and where libtorrent 2.0.8 carries it
// unchanged: a URL whose path ends in "/announce" gets "/KEY" appended to the path ("/announce/KEY"), which
// also works over UDP, where libtorrent sends the path and query as BEP 41 URLData
// (udp_tracker_connection.cpp:734-749), and keeps the path starting with "/announce", which libtorrent
// requires of trackers on loopback (http_tracker_connection.cpp:316-345). A URL that already names a key
// ("/announce/OLD", "passkey=OLD") has it replaced. Any other path gets a "passkey=KEY" query parameter,
// which libtorrent keeps and appends its own parameters after (http_tracker_connection.cpp:100-121). The
// tracker list is outside the info dictionary: the info-hash does not change.
#pragma once

#include <string>
#include <string_view>

namespace toast::client {

// 16..128 characters of [A-Za-z0-9_-] (the tracker's rule).
bool valid_passkey(std::string_view key);

// `url` with `key` in it as described above.
std::string with_passkey(std::string_view url, std::string_view key);

}  // namespace toast::client
