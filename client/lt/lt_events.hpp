// libtorrent alerts become plain events at the boundary: everything the client needs is copied out of each
// alert before the next pop_alerts() invalidates it, and nothing past this file sees an alert type. An event
// about a torrent carries its handle, so one session's events can be dispatched to the title they concern.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <libtorrent/alert.hpp>
#include <libtorrent/torrent_handle.hpp>

#include "client/core/piece_types.hpp"

namespace toast::client {

enum class LtEventKind {
    piece_finished,    // a piece passed the hash check (from peers or add_piece)
    hash_failed,       // a piece failed it
    torrent_finished,  // every wanted piece is had
    torrent_checked,   // files checked: the torrent is ready
    peer_connected,
    peer_disconnected,
    torrent_error,  // the torrent stopped on an error
    file_error,     // a disk operation failed (also a refused read of an ejected piece)
    tracker_error,
    tracker_reply,
    listen_failed,
    listen_succeeded,
};
std::string_view to_string(LtEventKind kind);

struct LtEvent {
    LtEventKind kind;
    libtorrent::torrent_handle torrent;  // the torrent it concerns; invalid for session events (listen)
    PieceIndex piece{-1};                // piece events
    int peers = 0;                       // tracker_reply: peers in the answer
    int port = 0;                        // listen events
    std::string address{};               // listen events: the local address
    std::string peer{};                  // "ip:port" for peer events
    std::string message{};               // errors
};

// Appends the events for `alerts` (unrelated alerts are skipped) to `out`.
void translate_alerts(const std::vector<libtorrent::alert*>& alerts, std::vector<LtEvent>& out);

}  // namespace toast::client
