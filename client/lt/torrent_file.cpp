#include "client/lt/torrent_file.hpp"

#include <algorithm>

#include <libtorrent/address.hpp>
#include <libtorrent/bdecode.hpp>
#include <libtorrent/torrent_info.hpp>

#include "toast/common/read_file.hpp"

namespace lt = libtorrent;

namespace toast::client {

namespace {

std::string url_encode_path_segment(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        }
    }
    return out;
}

std::string string_in(const lt::bdecode_node& dict, const char* key) {
    auto v = dict.dict_find(key);
    return v && v.type() == lt::bdecode_node::string_t ? std::string(v.string_value()) : std::string();
}

TierLayout parse_tier(const lt::bdecode_node& node, const std::string& name) {
    const std::string what = name + ": \"toast\".\"tier\"";
    if (node.type() != lt::bdecode_node::dict_t) throw TorrentFileError(what + " is not a dictionary");
    TierLayout tier;
    auto nodes = node.dict_find("nodes");
    if (!nodes || nodes.type() != lt::bdecode_node::list_t)
        throw TorrentFileError(what + ".nodes is not a list");
    for (int i = 0; i < nodes.list_size(); ++i) {
        auto n = nodes.list_at(i);
        if (n.type() != lt::bdecode_node::dict_t)
            throw TorrentFileError(what + ".nodes[" + std::to_string(i) + "] is not a dictionary");
        tier.nodes.push_back({string_in(n, "id"), string_in(n, "url")});
    }
    if (auto r = node.dict_find("replicas")) {
        if (r.type() != lt::bdecode_node::int_t || r.int_value() < 1 || r.int_value() > kMaxTierReplicas)
            throw TorrentFileError(what + ".replicas must be an integer in 1.." +
                                   std::to_string(kMaxTierReplicas));
        tier.replicas = static_cast<std::uint32_t>(r.int_value());
    }
    if (auto p = node.dict_find("placement")) {
        const auto parsed = p.type() == lt::bdecode_node::string_t
                                ? parse_tier_placement(std::string(p.string_value()))
                                : std::nullopt;
        if (!parsed) throw TorrentFileError(what + ".placement must be \"block\" or \"title\"");
        tier.placement = *parsed;
    }
    if (auto problem = tier_problem(tier))
        throw TorrentFileError(what + "." + problem->field + ": " + problem->problem);
    return tier;
}

}  // namespace

TitleTorrent parse_title_torrent(const std::vector<char>& bytes, const std::string& name) {
    lt::error_code ec;
    int error_pos = 0;
    lt::bdecode_node root =
        lt::bdecode(lt::span<const char>(bytes.data(), static_cast<long>(bytes.size())), ec, &error_pos);
    if (ec) {
        throw TorrentFileError(name + ": not a bencoded torrent (" + ec.message() + " at byte " +
                               std::to_string(error_pos) + ")");
    }
    if (root.type() != lt::bdecode_node::dict_t)
        throw TorrentFileError(name + ": not a torrent (not a dictionary)");

    TitleTorrent out;
    auto ti = std::make_shared<lt::torrent_info>(root, ec);
    if (ec) throw TorrentFileError(name + ": not a valid torrent (" + ec.message() + ")");
    if (ti->num_files() != 1) {
        throw TorrentFileError(name + ": has " + std::to_string(ti->num_files()) +
                               " files; a Toast title is a single file");
    }

    if (auto toast = root.dict_find("toast")) {
        if (toast.type() != lt::bdecode_node::dict_t)
            throw TorrentFileError(name + ": \"toast\" is not a dictionary");
        if (auto br = toast.dict_find("bitrate")) {
            if (br.type() != lt::bdecode_node::int_t || br.int_value() <= 0) {
                throw TorrentFileError(
                    name + ": \"toast\".\"bitrate\" must be a positive integer (bits per second)");
            }
            out.bitrate = BitRate(static_cast<std::uint64_t>(br.int_value()));
        }
        if (auto title = toast.dict_find_string("title")) out.title = std::string(title.string_value());
        if (auto peers = toast.dict_find("operator_peers")) {
            const std::string what = name + ": \"toast\".\"operator_peers\" ";
            if (peers.type() != lt::bdecode_node::list_t) throw TorrentFileError(what + "is not a list");
            for (int i = 0; i < peers.list_size(); ++i) {
                auto item = peers.list_at(i);
                auto ep = item.type() == lt::bdecode_node::string_t
                              ? parse_peer_endpoint(std::string(item.string_value()))
                              : std::nullopt;
                if (!ep) {
                    throw TorrentFileError(what + "entry " + std::to_string(i) +
                                           " is not an \"IP:PORT\" string");
                }
                out.operator_peers.push_back(*ep);
            }
        }
        if (auto tier = toast.dict_find("tier")) {
            out.tier = parse_tier(tier, name);
            auto bs = toast.dict_find("block_size");
            if (!bs || bs.type() != lt::bdecode_node::int_t || bs.int_value() <= 0)
                throw TorrentFileError(name +
                                       ": \"toast\".\"block_size\" must be a positive integer with a tier");
            out.block_size = Bytes(static_cast<std::uint64_t>(bs.int_value()));
        }
    }
    if (out.title.empty()) out.title = ti->name();

    if (auto list = root.dict_find("url-list")) {
        if (list.type() == lt::bdecode_node::string_t) {
            out.url_list.emplace_back(list.string_value());
        } else if (list.type() == lt::bdecode_node::list_t) {
            for (int i = 0; i < list.list_size(); ++i) {
                auto item = list.list_at(i);
                if (item.type() == lt::bdecode_node::string_t) out.url_list.emplace_back(item.string_value());
            }
        }
    }

    // The server is the fallback, never a web seed.
    ti->clear_web_seeds();
    out.params.ti = std::move(ti);
    out.params.url_seeds.clear();
    out.params.http_seeds.clear();
    return out;
}

TitleTorrent load_title_torrent(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileReadError& e) {
        throw TorrentFileError(path.string() + ": cannot be read (" + e.reason() + ")");
    }
    std::vector<char> bytes(text.begin(), text.end());
    if (bytes.empty()) throw TorrentFileError(path.string() + ": is empty");
    return parse_title_torrent(bytes, path.string());
}

std::vector<std::string> title_urls(const std::vector<std::string>& url_list,
                                    const std::vector<std::string>& extra_servers,
                                    const std::string& file_name) {
    std::vector<std::string> out;
    auto add = [&](std::string url) {
        auto scheme = url.find("://");
        auto path_start = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
        if (path_start == std::string::npos || path_start == url.size() - 1) {
            if (path_start != std::string::npos) url.pop_back();
            url += "/titles/" + url_encode_path_segment(file_name);
        } else if (url.back() == '/') {
            url += url_encode_path_segment(file_name);
        }
        if (std::find(out.begin(), out.end(), url) == out.end()) out.push_back(url);
    };
    for (const auto& u : url_list)
        add(u);
    for (const auto& u : extra_servers)
        add(u);
    return out;
}

}  // namespace toast::client
