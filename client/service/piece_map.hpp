// The live piece map: per title, where each piece stands (client/core/service_piece_map), the playhead, the
// in-order window, the give-up zone, the peers and the rates, as JSON inside every status answer; and the
// page on the service's local server that draws it and follows the status event stream.
#pragma once

#include <string>

#include <libtorrent/torrent_handle.hpp>
#include <nlohmann/json.hpp>

#include "client/core/title_geometry.hpp"

namespace toast::client {

class TitleStream;

// `stream` when the title plays, else `seed` (the stopped title's torrent, possibly invalid).
nlohmann::ordered_json piece_map_json(const TitleGeometry& geometry, const TitleStream* stream,
                                      const libtorrent::torrent_handle& seed);

// The HTML page (self-contained: inline style and script) with `status` (GET /api/status's document) inside,
// so the page draws at once and then follows /api/events.
std::string piece_map_page(const nlohmann::ordered_json& status);

}  // namespace toast::client
