#include "client/core/service_piece_map.hpp"

namespace toast::client {

std::string piece_cells(const PieceMapInput& in) {
    const auto n = in.pieces.value();
    std::string cells(static_cast<std::size_t>(n), kCellMissing);
    auto mark_in_flight = [&](const std::vector<PieceIndex>& list, char c) {
        for (auto p : list) {
            if (p.value() < 0 || p.value() >= n || in.had.has(p)) continue;
            cells[static_cast<std::size_t>(p.value())] = c;
        }
    };
    mark_in_flight(in.peer_in_flight, kCellPeerInFlight);
    mark_in_flight(in.server_in_flight, kCellServerInFlight);
    for (std::int32_t i = 0; i < n; ++i) {
        PieceIndex p(i);
        if (!in.had.has(p)) continue;
        cells[static_cast<std::size_t>(i)] = in.from_server.has(p)  ? kCellFromServer
                                             : in.from_peers.has(p) ? kCellFromPeers
                                                                    : kCellHad;
    }
    return cells;
}

}  // namespace toast::client
