#include "client/core/buffer_planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace toast::client {

std::optional<BufferLimit> BufferLimit::parse(std::string_view text) {
    if (!text.empty() && text.back() == '%') {
        auto number = text.substr(0, text.size() - 1);
        if (number.empty() || number.find_first_not_of("0123456789.") != std::string_view::npos)
            return std::nullopt;
        if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
        double pct = std::strtod(std::string(number).c_str(), nullptr);
        if (!(pct > 0) || pct > 100) return std::nullopt;
        return of_percent(pct);
    }
    auto b = parse_bytes(text);
    if (!b || b->value() == 0) return std::nullopt;
    return of_bytes(*b);
}

Bytes BufferLimit::resolve(Bytes total) const {
    if (!is_percent()) return bytes_;
    return Bytes(
        static_cast<std::uint64_t>(std::floor(static_cast<long double>(total.value()) * percent_ / 100.0L)));
}

std::string BufferLimit::to_string() const {
    if (!is_percent()) return std::to_string(bytes_.value());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%%", percent_);
    return buf;
}

std::optional<std::string> check_buffer_limit(Bytes limit, const TitleGeometry& geometry) {
    if (limit.value() >= 2 * geometry.piece_length().value() || limit >= geometry.total_size())
        return std::nullopt;
    return "buffer limit " + std::to_string(limit.value()) + " bytes cannot hold two pieces of " +
           std::to_string(geometry.piece_length().value()) + " bytes";
}

BufferPlan plan_buffer(const BufferInput& in) {
    const auto& g = in.geometry;
    BufferPlan plan;
    std::uint64_t stored = 0;
    for (auto p : in.stored.pieces())
        stored += g.piece_size(p).value();

    // Pieces from the playhead on that fit in the whole buffer: outside this window a piece stored far ahead
    // (after a backward seek) may be dropped for the playhead piece.
    auto window = std::max<std::uint64_t>(1, in.limit.value() / g.piece_length().value());
    auto window_end = PieceIndex(static_cast<std::int32_t>(
        std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(0, in.playhead.value())) + window,
                                static_cast<std::uint64_t>(g.piece_count().value()))));

    const auto fits = [&] {
        return stored + in.incoming.value() + g.piece_length().value() <= in.limit.value();
    };
    const auto eject = [&](PieceIndex p) {
        plan.eject.push_back(p);
        stored -= g.piece_size(p).value();
    };

    for (PieceIndex p(0); p < in.playhead && !fits(); ++p)
        if (in.stored.has(p)) eject(p);

    if (!fits() && !in.stored.has(in.playhead)) {
        // After a backward seek, pieces far ahead can fill the buffer while the playhead piece is missing;
        // they are outside the window, so drop the farthest first rather than never play again.
        for (PieceIndex p = g.last_piece(); p >= window_end && !fits(); p = PieceIndex(p.value() - 1))
            if (in.stored.has(p)) eject(p);
    }

    plan.suspend = !fits();
    plan.stored_after = Bytes(stored);
    // request_end counts what is still stored, not only the window: pieces behind the playhead are ejected
    // lazily (only when one more piece does not fit), and libtorrent writes every piece it may request, all
    // at once between two plans, block by block to disk. Were those kept pieces left out, the stored pieces
    // plus the ones being written would exceed the limit by up to the pieces kept behind the playhead.
    std::uint64_t committed = stored;
    auto end = std::max(0, in.playhead.value());
    for (; end < g.piece_count().value(); ++end) {
        if (in.stored.has(PieceIndex(end)) &&
            !std::count(plan.eject.begin(), plan.eject.end(), PieceIndex(end)))
            continue;
        auto size = g.piece_size(PieceIndex(end)).value();
        if (committed + size > in.limit.value()) break;
        committed += size;
    }
    plan.request_end = PieceIndex(end);
    auto used = stored + in.incoming.value();
    plan.room = Bytes(used < in.limit.value() ? in.limit.value() - used : 0);
    return plan;
}

}  // namespace toast::client
