#include "client/service/piece_map.hpp"

#include <libtorrent/peer_info.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/core/service_piece_map.hpp"
#include "client/lt/title_stream.hpp"

namespace lt = libtorrent;
using json = nlohmann::ordered_json;

namespace toast::client {

namespace resources {
// piece_map.html, built in (cmake/embed_resource.cmake).
extern const std::string_view piece_map_html;
}  // namespace resources

namespace {

json range_json(PieceIndex first, PieceIndex last) {
    return json::array({first.value(), last.value()});
}

json peers_json(const lt::torrent_handle& h) {
    std::vector<lt::peer_info> peers;
    h.get_peer_info(peers);
    json list = json::array();
    for (const auto& p : peers) {
        list.push_back(json{{"address", p.ip.address().to_string() + ":" + std::to_string(p.ip.port())},
                            {"client", p.client},
                            {"seed", static_cast<bool>(p.flags & lt::peer_info::seed)},
                            {"down_rate", p.payload_down_speed},
                            {"up_rate", p.payload_up_speed}});
    }
    return list;
}

}  // namespace

json piece_map_json(const TitleGeometry& g, const TitleStream* stream, const lt::torrent_handle& seed) {
    const auto& h = stream ? stream->handle() : seed;
    PieceMapInput in;
    in.pieces = g.piece_count();
    in.had = PieceSet(g.piece_count());
    in.from_peers = PieceSet(g.piece_count());
    in.from_server = PieceSet(g.piece_count());
    json j;
    j["playhead"] = nullptr;
    j["inorder"] = nullptr;
    j["give_up"] = nullptr;
    if (!h.is_valid()) {
        j["cells"] = piece_cells(in);
        j["peers"] = json::array();
        return j;
    }
    std::vector<lt::partial_piece_info> queue;
    h.get_download_queue(queue);
    for (const auto& q : queue)
        in.peer_in_flight.push_back(PieceIndex(static_cast<int>(q.piece_index)));
    if (stream) {
        const auto& c = stream->controller();
        in.had = c.stored();
        in.from_peers = stream->from_peers();
        in.from_server = stream->from_server();
        in.server_in_flight = c.fallback().in_flight_pieces();
        const auto& w = c.watcher();
        auto playhead = w.playhead_piece();
        j["playhead"] = playhead.value();
        if (auto win = c.inorder_window()) j["inorder"] = json::array({win->first, win->second});
        // The give-up zone as the controller computes it: the fallback's need window plus one peer delivery.
        const auto& hz = c.horizon();
        auto zone = c.fallback().need_window(hz.horizon_time()) + hz.peer_delivery_time();
        auto pieces = hz.pieces_within(zone, w.into_playhead_piece()).value();
        if (pieces > 0) {
            auto last = std::min(playhead.value() + pieces - 1, g.last_piece().value());
            j["give_up"] = range_json(playhead, PieceIndex(last));
        }
    } else {
        auto st = h.status(lt::torrent_handle::query_pieces);
        for (int i = 0; i < st.pieces.size(); ++i) {
            if (st.pieces.get_bit(lt::piece_index_t(i))) in.had.set(PieceIndex(i));
        }
    }
    j["cells"] = piece_cells(in);
    j["peers"] = peers_json(h);
    return j;
}

std::string piece_map_page(const json& status) {
    const std::string_view page = resources::piece_map_html;
    // Inside a script element "</script>" or "<!--" in a title's name would end or confuse it; JSON may
    // escape any character, so every '<' goes in as \u003c.
    std::string data;
    for (char ch : status.dump()) {
        if (ch == '<') {
            data += "\\u003c";
        } else {
            data += ch;
        }
    }
    std::string out(page);
    out.replace(out.find("@STATUS@"), 8, data);
    return out;
}

}  // namespace toast::client
