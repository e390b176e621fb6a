#include "client/service/piece_map.hpp"

#include <libtorrent/peer_info.hpp>
#include <libtorrent/torrent_status.hpp>

#include "client/core/service_piece_map.hpp"
#include "client/lt/title_stream.hpp"

namespace lt = libtorrent;
using json = nlohmann::ordered_json;

namespace toast::client {

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
    static const std::string page = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Toast piece map</title>
<style>
body { font: 14px sans-serif; margin: 1em; background: #fafafa; color: #222; }
section.title { background: #fff; border: 1px solid #ccc; padding: .5em 1em; margin-bottom: 1em; }
.map { display: flex; flex-wrap: wrap; gap: 1px; margin: .5em 0; }
.map i { width: 8px; height: 14px; display: block; background: #ddd; box-sizing: border-box; }
.map i.p { background: #2e7d32; }
.map i.s { background: #ef6c00; }
.map i.h { background: #78909c; }
.map i.f { background: #a5d6a7; }
.map i.F { background: #ffcc80; }
.map i.zone { border-bottom: 3px solid #c62828; }
.map i.window { border-top: 3px solid #1565c0; }
.map i.playhead { outline: 2px solid #000; }
.legend i { display: inline-block; width: 10px; height: 10px; margin: 0 .3em 0 1em; }
table { border-collapse: collapse; } td, th { padding: 0 .6em; text-align: left; }
</style>
</head>
<body data-updates="0">
<h1>Toast piece map</h1>
<p id="connection">connecting</p>
<p class="legend"><i style="background:#2e7d32"></i>from peers<i style="background:#ef6c00"></i>from the server
<i style="background:#78909c"></i>had before<i style="background:#a5d6a7"></i>in flight (peers)
<i style="background:#ffcc80"></i>in flight (server)<i style="border-top:3px solid #1565c0"></i>in-order window
<i style="border-bottom:3px solid #c62828"></i>give-up zone<i style="outline:2px solid #000"></i>playhead</p>
<div id="titles"><p id="empty">no titles</p></div>
<script id="initial" type="application/json">@STATUS@</script>
<script>
"use strict";
function count(cells, c) { let n = 0; for (const x of cells) if (x === c) n++; return n; }
function rate(bps) { return (bps / 1024).toFixed(1) + " KiB/s"; }
function range(r) { return r ? r[0] + "-" + r[1] : "none"; }
function field(cls, value) { const s = document.createElement("span"); s.className = cls; s.textContent = value; return s; }
function render(status) {
  const root = document.getElementById("titles");
  root.textContent = "";
  if (status.titles.length === 0) { const p = document.createElement("p"); p.id = "empty"; p.textContent = "no titles"; root.appendChild(p); }
  for (const t of status.titles) {
    const m = t.map, cells = m.cells;
    const sec = document.createElement("section");
    sec.className = "title"; sec.id = "title-" + t.id; sec.dataset.state = t.state;
    const h = document.createElement("h2"); h.textContent = t.name + " (" + t.state + ")"; sec.appendChild(h);
    const facts = [
      ["pieces", cells.length], ["from peers", field("pieces-peers", count(cells, "p"))],
      ["from the server", field("pieces-server", count(cells, "s"))], ["had before", field("pieces-had-before", count(cells, "h"))],
      ["in flight", field("pieces-in-flight", count(cells, "f") + count(cells, "F"))],
      ["playhead", field("playhead", m.playhead === null ? "none" : m.playhead)],
      ["in-order window", field("inorder", range(m.inorder))], ["give-up zone", field("give-up", range(m.give_up))],
      ["peers", field("peers", m.peers.length)], ["down", field("down-rate", rate(t.download_rate))],
      ["up", field("up-rate", rate(t.upload_rate))], ["stalls", field("stalls", t.stalls)]];
    const p = document.createElement("p");
    for (const [label, value] of facts) {
      p.appendChild(document.createTextNode(" " + label + ": "));
      p.appendChild(value instanceof Node ? value : document.createTextNode(value));
    }
    sec.appendChild(p);
    const map = document.createElement("div"); map.className = "map";
    for (let i = 0; i < cells.length; i++) {
      const c = document.createElement("i");
      let cls = cells[i] === "." ? "" : cells[i];
      if (m.inorder && i >= m.inorder[0] && i <= m.inorder[1]) cls += " window";
      if (m.give_up && i >= m.give_up[0] && i <= m.give_up[1]) cls += " zone";
      if (m.playhead === i) cls += " playhead";
      c.className = cls.trim(); c.title = "piece " + i;
      map.appendChild(c);
    }
    sec.appendChild(map);
    if (m.peers.length > 0) {
      const table = document.createElement("table");
      table.className = "peer-list";
      table.innerHTML = "<tr><th>peer</th><th>client</th><th>down</th><th>up</th></tr>";
      for (const peer of m.peers) {
        const row = table.insertRow();
        for (const v of [peer.address + (peer.seed ? " (seed)" : ""), peer.client, rate(peer.down_rate), rate(peer.up_rate)])
          row.insertCell().textContent = v;
      }
      sec.appendChild(table);
    }
    root.appendChild(sec);
  }
  document.body.dataset.updates = String(Number(document.body.dataset.updates) + 1);
}
render(JSON.parse(document.getElementById("initial").textContent));
const events = new EventSource("/api/events");
events.addEventListener("open", () => { document.getElementById("connection").textContent = "live"; });
events.addEventListener("error", () => { document.getElementById("connection").textContent = "reconnecting"; });
events.addEventListener("status", (e) => render(JSON.parse(e.data)));
</script>
</body>
</html>
)html";
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
    auto out = page;
    out.replace(out.find("@STATUS@"), 8, data);
    return out;
}

}  // namespace toast::client
