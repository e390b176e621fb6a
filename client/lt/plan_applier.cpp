#include "client/lt/plan_applier.hpp"

namespace lt = libtorrent;

namespace toast::client {

void LtPieceControl::prioritize(const std::vector<std::pair<PieceIndex, std::uint8_t>>& changes) {
    // The pair<piece_index_t, download_priority_t> overload: the deprecated pair<.., int> one does nothing.
    std::vector<std::pair<lt::piece_index_t, lt::download_priority_t>> v;
    v.reserve(changes.size());
    for (auto [piece, prio] : changes)
        v.emplace_back(lt::piece_index_t(piece.value()), lt::download_priority_t(prio));
    handle_.prioritize_pieces(v);
}

void LtPieceControl::set_deadline(PieceIndex piece, std::chrono::milliseconds deadline) {
    handle_.set_piece_deadline(lt::piece_index_t(piece.value()), static_cast<int>(deadline.count()));
}

void LtPieceControl::reset_deadline(PieceIndex piece) {
    handle_.reset_piece_deadline(lt::piece_index_t(piece.value()));
}

}  // namespace toast::client
