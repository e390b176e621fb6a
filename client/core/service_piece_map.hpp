// The live piece map's view of one title, decided purely: one character per piece saying where it stands,
// so the page (client/service/piece_map) can draw it and a test can read it from the DOM.
#pragma once

#include <string>
#include <vector>

#include "client/core/piece_types.hpp"

namespace toast::client {

// Cell characters.
inline constexpr char kCellMissing = '.';
inline constexpr char kCellFromPeers = 'p';   // had, delivered by peers
inline constexpr char kCellFromServer = 's';  // had, fetched from the VoD server
inline constexpr char kCellHad = 'h';  // had from before this play (resumed or seeding): source unknown
inline constexpr char kCellPeerInFlight = 'f';    // missing, peers are sending blocks of it
inline constexpr char kCellServerInFlight = 'F';  // missing, the server fetch is running

struct PieceMapInput {
    PieceCount pieces{0};
    PieceSet had;          // had now
    PieceSet from_peers;   // had, arrived from peers in this play
    PieceSet from_server;  // had, arrived from the server in this play
    std::vector<PieceIndex> peer_in_flight;
    std::vector<PieceIndex> server_in_flight;
};

// A server fetch in flight wins over peers' blocks of the same piece (the server's copy is the one awaited);
// a had piece is never shown in flight. Indices outside the title are ignored.
std::string piece_cells(const PieceMapInput& in);

}  // namespace toast::client
