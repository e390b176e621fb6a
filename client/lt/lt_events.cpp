#include "client/lt/lt_events.hpp"

#include <libtorrent/alert_types.hpp>

namespace lt = libtorrent;

namespace toast::client {

std::string_view to_string(LtEventKind kind) {
    switch (kind) {
        case LtEventKind::piece_finished:
            return "piece_finished";
        case LtEventKind::hash_failed:
            return "hash_failed";
        case LtEventKind::torrent_finished:
            return "torrent_finished";
        case LtEventKind::torrent_checked:
            return "torrent_checked";
        case LtEventKind::peer_connected:
            return "peer_connected";
        case LtEventKind::peer_disconnected:
            return "peer_disconnected";
        case LtEventKind::torrent_error:
            return "torrent_error";
        case LtEventKind::file_error:
            return "file_error";
        case LtEventKind::tracker_error:
            return "tracker_error";
        case LtEventKind::tracker_reply:
            return "tracker_reply";
        case LtEventKind::listen_failed:
            return "listen_failed";
        case LtEventKind::listen_succeeded:
            return "listen_succeeded";
    }
    return "unknown";
}

namespace {

std::string endpoint_text(const lt::tcp::endpoint& ep) {
    std::string out = ep.address().to_string();
    if (ep.address().is_v6()) out = "[" + out + "]";
    out += ':';
    out += std::to_string(ep.port());
    return out;
}

}  // namespace

void translate_alerts(const std::vector<lt::alert*>& alerts, std::vector<LtEvent>& out) {
    for (const lt::alert* a : alerts) {
        if (auto* pf = lt::alert_cast<lt::piece_finished_alert>(a)) {
            out.push_back({LtEventKind::piece_finished, static_cast<int>(pf->piece_index), 0, {}, {}});
        } else if (auto* hf = lt::alert_cast<lt::hash_failed_alert>(a)) {
            out.push_back({LtEventKind::hash_failed, static_cast<int>(hf->piece_index), 0, {}, {}});
        } else if (lt::alert_cast<lt::torrent_finished_alert>(a)) {
            out.push_back({LtEventKind::torrent_finished, -1, 0, {}, {}});
        } else if (lt::alert_cast<lt::torrent_checked_alert>(a)) {
            out.push_back({LtEventKind::torrent_checked, -1, 0, {}, {}});
        } else if (auto* pc = lt::alert_cast<lt::peer_connect_alert>(a)) {
            out.push_back({LtEventKind::peer_connected, -1, 0, endpoint_text(pc->endpoint), {}});
        } else if (auto* pd = lt::alert_cast<lt::peer_disconnected_alert>(a)) {
            out.push_back(
                {LtEventKind::peer_disconnected, -1, 0, endpoint_text(pd->endpoint), pd->error.message()});
        } else if (auto* te = lt::alert_cast<lt::torrent_error_alert>(a)) {
            out.push_back({LtEventKind::torrent_error, -1, 0, {}, te->message()});
        } else if (auto* fe = lt::alert_cast<lt::file_error_alert>(a)) {
            out.push_back({LtEventKind::file_error, -1, 0, {}, fe->error.message()});
        } else if (auto* tr = lt::alert_cast<lt::tracker_error_alert>(a)) {
            out.push_back({LtEventKind::tracker_error, -1, 0, {}, tr->message()});
        } else if (auto* rr = lt::alert_cast<lt::tracker_reply_alert>(a)) {
            out.push_back({LtEventKind::tracker_reply, -1, 0, {}, std::to_string(rr->num_peers) + " peers"});
        } else if (auto* lf = lt::alert_cast<lt::listen_failed_alert>(a)) {
            out.push_back({LtEventKind::listen_failed, -1, lf->port, {}, lf->message()});
        } else if (auto* ls = lt::alert_cast<lt::listen_succeeded_alert>(a)) {
            if (ls->socket_type == lt::socket_type_t::tcp) {
                out.push_back({LtEventKind::listen_succeeded, -1, ls->port, {}, {}});
            }
        }
    }
}

}  // namespace toast::client
