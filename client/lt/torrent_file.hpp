// Reads a title's .torrent for Toast: the torrent itself for libtorrent, plus what libtorrent drops or must
// not use. The bitrate sits in a top-level "toast" key written by the server's ingest (libtorrent ignores
// unknown keys, so the file is bdecoded here), and the url-list names the VoD server, which the fallback
// fetcher uses: it is removed from the add_torrent_params so the server is never a web seed (a web seed is an
// always-on fast peer and would take most of the traffic). The "toast" key may also name the operator's own
// peers ("operator_peers": ["IP:PORT", ...], e.g. a seed beside the VoD server): they count as server-side,
// every other peer (seeds included) as a viewer.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <libtorrent/add_torrent_params.hpp>

#include "toast/common/endpoint.hpp"
#include "toast/common/tier.hpp"
#include "toast/common/units.hpp"

namespace toast::client {

class TorrentFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct TitleTorrent {
    libtorrent::add_torrent_params params;  // ti set; url seeds and http seeds removed
    std::optional<BitRate> bitrate;         // "toast": {"bitrate": N}
    std::string title;                      // "toast": {"title": NAME}, else the torrent's name
    std::vector<std::string> url_list;      // BEP 19 url-list as written
    std::vector<Endpoint> operator_peers;   // "toast": {"operator_peers": ["IP:PORT", ...]}
    // "toast": {"tier": {"nodes": [{"id", "url"}, ...], "replicas", "placement"}, "block_size": BYTES}: the
    // title was ingested on a tier of nodes, which hold its blocks as toast/common/tier.hpp places them.
    std::optional<TierLayout> tier;
    Bytes block_size{0};
};

// Throws TorrentFileError naming the file and what is wrong (unreadable, not bencoded, not a torrent,
// several files, a malformed "toast" key, a tier without a block size or with a bad node).
TitleTorrent load_title_torrent(const std::filesystem::path& path);
TitleTorrent parse_title_torrent(const std::vector<char>& bytes, const std::string& name_for_errors);

// The full URLs of the title on each server, in order, without duplicates: the torrent's url-list first,
// then the command line's --server values. A URL whose path is empty or "/" gets "/titles/<file name>"
// appended, one ending in '/' gets the file name (BEP 19); anything else is the file's URL already.
std::vector<std::string> title_urls(const std::vector<std::string>& url_list,
                                    const std::vector<std::string>& extra_servers,
                                    const std::string& file_name);

}  // namespace toast::client
