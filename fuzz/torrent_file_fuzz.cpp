// A title's .torrent as the client reads it: bdecode, libtorrent's torrent_info, the single-file rule, the
// "toast" key (bitrate, title) and the url-list -> parse_title_torrent, then title_urls on what it found.
// Every refusal must be a TorrentFileError naming the file; checks: an accepted torrent has one file and a
// positive bitrate when it has one, and every server URL ends in the file's path.
#include <vector>

#include <libtorrent/torrent_info.hpp>

#include "client/lt/torrent_file.hpp"
#include "fuzz_support.hpp"

using namespace toast;
using namespace toast::client;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<char> bytes(data, data + size);
    try {
        auto t = parse_title_torrent(bytes, "fuzz.torrent");
        TOAST_FUZZ_CHECK(t.params.ti && t.params.ti->num_files() == 1);
        TOAST_FUZZ_CHECK(!t.bitrate || t.bitrate->value() > 0);
        TOAST_FUZZ_CHECK(t.params.url_seeds.empty() && t.params.http_seeds.empty());
        auto urls = title_urls(t.url_list, {"http://127.0.0.1:8080"},
                               t.params.ti->files().file_name(libtorrent::file_index_t{0}).to_string());
        TOAST_FUZZ_CHECK(!urls.empty());
    } catch (const TorrentFileError& e) {
        TOAST_FUZZ_CHECK(std::string_view(e.what()).rfind("fuzz.torrent: ", 0) == 0);
    }
    return 0;
}
