#include "server/core/torrent_token.hpp"

#include <iterator>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>

namespace lt = libtorrent;

namespace toast::server {

std::string url_with_token(std::string_view url, std::string_view token) {
    const auto hash = url.find('#');
    const auto fragment = hash == std::string_view::npos ? std::string_view() : url.substr(hash);
    auto base = url.substr(0, hash);
    std::string out;
    const auto q = base.find('?');
    out += base.substr(0, q);
    char sep = '?';
    if (q != std::string_view::npos) {
        auto query = base.substr(q + 1);
        while (!query.empty()) {
            const auto amp = query.find('&');
            const auto param = query.substr(0, amp);
            if (param.substr(0, 6) != "token=" && param != "token" && !param.empty()) {
                out += sep;
                out += param;
                sep = '&';
            }
            if (amp == std::string_view::npos) break;
            query.remove_prefix(amp + 1);
        }
    }
    out += sep;
    out += "token=";
    out += token;  // every character of a token may stand in a query as it is
    out += fragment;
    return out;
}

std::optional<std::string> torrent_with_token(std::string_view torrent, std::string_view token) {
    lt::error_code ec;
    auto node =
        lt::bdecode(lt::span<char const>(torrent.data(), static_cast<std::ptrdiff_t>(torrent.size())), ec);
    if (ec || node.type() != lt::bdecode_node::dict_t) return std::nullopt;
    lt::entry e(node);
    auto& dict = e.dict();
    auto it = dict.find("url-list");
    if (it != dict.end()) {
        if (it->second.type() == lt::entry::string_t) {
            it->second = url_with_token(it->second.string(), token);
        } else if (it->second.type() == lt::entry::list_t) {
            for (auto& url : it->second.list())
                if (url.type() == lt::entry::string_t) url = url_with_token(url.string(), token);
        }
    }
    std::string out;
    lt::bencode(std::back_inserter(out), e);
    return out;
}

}  // namespace toast::server
