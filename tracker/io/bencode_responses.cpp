#include "tracker/io/bencode_responses.hpp"

#include <iterator>

#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>

namespace toast::tracker {
namespace {

namespace lt = libtorrent;

std::string encode(const lt::entry& e) {
    std::string out;
    lt::bencode(std::back_inserter(out), e);
    return out;
}

void append_compact(std::string& out, const PeerEndpoint& ep) {
    out.append(reinterpret_cast<const char*>(ep.ip.bytes.data()), ep.ip.size());
    out += static_cast<char>(ep.port >> 8);
    out += static_cast<char>(ep.port & 0xff);
}

}  // namespace

std::string bencode_announce(const AnnounceReply& reply, bool compact, bool include_peer_id) {
    lt::entry e(lt::entry::dictionary_t);
    e["interval"] = lt::entry::integer_type(reply.interval.count());
    e["min interval"] = lt::entry::integer_type(reply.min_interval.count());
    e["complete"] = lt::entry::integer_type(reply.counts.seeders);
    e["incomplete"] = lt::entry::integer_type(reply.counts.leechers);
    e["downloaded"] = lt::entry::integer_type(reply.counts.completed);
    if (compact) {
        std::string v4, v6;
        for (const auto& p : reply.peers)
            append_compact(p.endpoint.ip.v6 ? v6 : v4, p.endpoint);
        e["peers"] = v4;
        if (!v6.empty()) e["peers6"] = v6;
    } else {
        lt::entry::list_type list;
        for (const auto& p : reply.peers) {
            lt::entry peer(lt::entry::dictionary_t);
            if (include_peer_id) peer["peer id"] = std::string(p.id.view());
            peer["ip"] = p.endpoint.ip.to_string();
            peer["port"] = lt::entry::integer_type(p.endpoint.port);
            list.push_back(std::move(peer));
        }
        e["peers"] = std::move(list);
    }
    return encode(e);
}

std::string bencode_scrape(const std::vector<std::pair<InfoHash, SwarmCounts>>& files) {
    lt::entry e(lt::entry::dictionary_t);
    lt::entry& dict = e["files"];
    dict = lt::entry::dictionary_type();
    for (const auto& [hash, counts] : files) {
        lt::entry f(lt::entry::dictionary_t);
        f["complete"] = lt::entry::integer_type(counts.seeders);
        f["incomplete"] = lt::entry::integer_type(counts.leechers);
        f["downloaded"] = lt::entry::integer_type(counts.completed);
        f["downloaders"] = lt::entry::integer_type(counts.leechers - counts.partial_seeds);  // BEP 21
        dict[std::string(hash.view())] = std::move(f);
    }
    return encode(e);
}

std::string bencode_failure(std::string_view reason, std::chrono::seconds interval,
                            std::chrono::seconds min_interval) {
    lt::entry e(lt::entry::dictionary_t);
    e["failure reason"] = std::string(reason);
    e["interval"] = lt::entry::integer_type(interval.count());
    e["min interval"] = lt::entry::integer_type(min_interval.count());
    return encode(e);
}

}  // namespace toast::tracker
