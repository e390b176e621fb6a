#include "server/io/title_torrent.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include <libtorrent/bencode.hpp>
#include <libtorrent/create_torrent.hpp>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/hex.hpp>
#include <libtorrent/torrent_info.hpp>

namespace toast::server {

namespace lt = libtorrent;

TorrentFile make_title_torrent(const TorrentSpec& spec) {
    lt::file_storage fs;
    fs.add_file(spec.file_name.empty() ? spec.title : spec.file_name, static_cast<std::int64_t>(spec.size));
    lt::create_torrent ct(fs, static_cast<int>(spec.piece_size), lt::create_torrent::v1_only);
    if (static_cast<std::size_t>(ct.num_pieces()) != spec.piece_hashes.size()) {
        throw std::runtime_error("torrent needs " + std::to_string(ct.num_pieces()) + " piece hashes, got " +
                                 std::to_string(spec.piece_hashes.size()));
    }
    for (std::size_t i = 0; i < spec.piece_hashes.size(); ++i)
        ct.set_hash(lt::piece_index_t(static_cast<int>(i)), spec.piece_hashes[i]);
    for (std::size_t i = 0; i < spec.announce.size(); ++i)
        ct.add_tracker(spec.announce[i], static_cast<int>(i));
    for (const auto& url : spec.web_seeds)
        ct.add_url_seed(url);
    ct.set_priv(spec.private_torrent);
    if (!spec.ssl_ca.empty()) ct.set_root_cert(spec.ssl_ca);
    ct.set_creation_date(0);  // reproducible: the same input gives the same bytes

    lt::entry e = ct.generate();
    e.dict().erase("creation date");
    e.dict().erase("created by");
    lt::entry::dictionary_type toast;
    toast["bitrate"] = lt::entry(static_cast<std::int64_t>(spec.bitrate.value()));
    // A constant-rate title's average and peak are its bitrate.
    const auto average = spec.average_bitrate.value_or(spec.bitrate);
    toast["average_bitrate"] = lt::entry(static_cast<std::int64_t>(average.value()));
    toast["peak_bitrate"] = lt::entry(static_cast<std::int64_t>(spec.peak_bitrate.value_or(average).value()));
    toast["title"] = lt::entry(spec.title);
    if (!spec.operator_peers.empty()) {
        lt::entry::list_type peers;
        for (const auto& p : spec.operator_peers)
            peers.emplace_back(p);
        toast["operator_peers"] = lt::entry(std::move(peers));
    }
    if (spec.tier) {
        lt::entry::dictionary_type tier;
        lt::entry::list_type nodes;
        for (const auto& n : spec.tier->nodes) {
            lt::entry::dictionary_type node;
            node["id"] = lt::entry(n.id);
            node["url"] = lt::entry(n.url);
            nodes.emplace_back(std::move(node));
        }
        tier["nodes"] = lt::entry(std::move(nodes));
        tier["replicas"] = lt::entry(static_cast<std::int64_t>(spec.tier->replicas));
        tier["placement"] = lt::entry(std::string(to_string(spec.tier->placement)));
        toast["tier"] = lt::entry(std::move(tier));
        toast["block_size"] = lt::entry(static_cast<std::int64_t>(spec.block_size));
    }
    e["toast"] = lt::entry(std::move(toast));

    TorrentFile out;
    lt::bencode(std::back_inserter(out.bytes), e);
    lt::error_code ec;
    lt::torrent_info ti(out.bytes.data(), static_cast<int>(out.bytes.size()), ec);
    if (ec) throw std::runtime_error("libtorrent cannot read the torrent it generated: " + ec.message());
    std::ostringstream hex;
    hex << ti.info_hashes().v1;
    out.info_hash = hex.str();
    return out;
}

std::string torrent_info_hash(std::string_view bytes) {
    lt::error_code ec;
    lt::torrent_info ti(bytes.data(), static_cast<int>(bytes.size()), ec);
    if (ec) return {};
    std::ostringstream hex;
    hex << ti.info_hashes().v1;
    return hex.str();
}

std::optional<std::uint64_t> torrent_piece_size(std::string_view bytes) {
    lt::error_code ec;
    lt::torrent_info ti(bytes.data(), static_cast<int>(bytes.size()), ec);
    if (ec) return std::nullopt;
    return static_cast<std::uint64_t>(ti.piece_length());
}

std::optional<std::string> read_torrent_file(const std::filesystem::path& path, std::string& problem) {
    constexpr std::uintmax_t kMaxBytes = 64 * 1024 * 1024;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        problem = errno == ENOENT ? "missing" : std::string("unreadable: ") + std::strerror(errno);
        return std::nullopt;
    }
    std::string bytes;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        bytes.append(buf, static_cast<std::size_t>(in.gcount()));
        if (bytes.size() > kMaxBytes) {
            problem = "larger than 64 MiB";
            return std::nullopt;
        }
    }
    if (in.bad()) {
        problem = "unreadable";
        return std::nullopt;
    }
    return bytes;
}

}  // namespace toast::server
