// The catalogue's routes, answered like the rest of handle_request: from the store's views, no sockets.
//   GET/HEAD /catalog                the catalogue JSON (server/core/catalog.hpp), revalidated with its ETag
//   GET/HEAD /torrents/NAME.torrent  the title's .torrent as the store keeps it
// and the lookup /titles/ and /stream/ use, which also accepts the file name inside the title's torrent
// (NAME.ts), the name a BitTorrent client appends to a web seed URL ending in '/'.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "server/core/request_handler.hpp"
#include "server/core/title_store.hpp"

namespace toast::server {

// `demand`: each title's sessions per hour by name (a title not in it: 0).
HttpResponse serve_catalog(const HttpRequest& request, const TitleStore& titles,
                           const std::map<std::string, double>& demand);

// `name` is the decoded title name (the path's NAME without ".torrent"). A non-empty `url_token` (a signed
// URL's token that came in the query) goes into the torrent's url-list (torrent_token.hpp); that answer is
// the holder's own and no cache may keep it.
HttpResponse serve_torrent(const HttpRequest& request, const TitleStore& titles, std::string_view name,
                           const std::string& url_token = {});

// The title called `name`, else the title whose torrent's file is called `name`; nullptr if neither.
std::shared_ptr<const TitleInfo> find_title(const TitleStore& titles, std::string_view name);

}  // namespace toast::server
