#include "client/core/piece_types.hpp"

#include <algorithm>

namespace toast::client {

bool PieceSet::set(PieceIndex p) {
    if (!contains_index(p)) return false;
    auto bit = bits_[static_cast<std::size_t>(p.value())];
    if (bit) return false;
    bit = true;
    ++count_;
    return true;
}

bool PieceSet::clear(PieceIndex p) {
    if (!contains_index(p)) return false;
    auto bit = bits_[static_cast<std::size_t>(p.value())];
    if (!bit) return false;
    bit = false;
    --count_;
    return true;
}

void PieceSet::set_all() {
    bits_.assign(bits_.size(), true);
    count_ = static_cast<std::int32_t>(bits_.size());
}

PieceIndex PieceSet::first_missing() const {
    auto it = std::find(bits_.begin(), bits_.end(), false);
    return PieceIndex(static_cast<std::int32_t>(it - bits_.begin()));
}

std::vector<PieceIndex> PieceSet::pieces() const {
    std::vector<PieceIndex> out;
    out.reserve(static_cast<std::size_t>(count_));
    for (std::size_t i = 0; i < bits_.size(); ++i)
        if (bits_[i]) out.emplace_back(static_cast<std::int32_t>(i));
    return out;
}

}  // namespace toast::client
