#include "client/lt/server_fallback.hpp"

#include <algorithm>
#include <random>

#include <spdlog/spdlog.h>

namespace lt = libtorrent;
using Clock = std::chrono::steady_clock;

namespace toast::client {

namespace {

// A salt of this session's own for its choices between equally loaded holders: boxes must differ, so that
// their ties spread over a piece's holders.
std::uint64_t draw_tie_salt() {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

}  // namespace

ServerFallback::ServerFallback(boost::asio::io_context& io, std::vector<ServerUrl> urls,
                               StreamController& controller, lt::torrent_handle handle, SwarmControl& control,
                               lt::sha1_hash key, ServerAccess access)
    : controller_(controller),
      handle_(std::move(handle)),
      control_(control),
      key_(key),
      fetcher_(io, std::move(urls), FetcherConfig{.access = std::move(access), .tie_salt = draw_tie_salt()},
               [this](const PieceRequest& r, std::vector<char> data, std::size_t) {
                   on_piece(r, std::move(data));
               }) {
    fetcher_.on_failed(
        [this](const PieceRequest& r, FetchFault fault, const std::optional<UnavailableBytes>& unavailable) {
            if (!stopped_) controller_.on_fetch_failed(r.piece, fault, unavailable);
        });
}

void ServerFallback::start(const FallbackFetch& f, SteadyTime now) {
    const auto& g = controller_.geometry();
    const auto p = f.piece;
    // Bytes held for an earlier fetch of it that the controller dropped (peers completed the piece, which
    // then failed its check) are stale.
    if (!controller_.holding(p)) held_.erase(p);
    auto part = f.part.value_or(PiecePart{Bytes(0), g.piece_size(p)});
    PieceRequest r{.piece = p,
                   .offset = (g.piece_start(p) + part.offset).value(),
                   .length = static_cast<std::uint32_t>(part.length.value()),
                   .revalidate = f.revalidate,
                   .deadline = now + f.due};
    if (!fetcher_.fetch(r)) {
        held_.erase(p);
        controller_.on_fetch_refused(p);
    }
}

void ServerFallback::release(PieceIndex piece) {
    auto it = held_.find(piece);
    if (it == held_.end()) return;
    auto data = std::move(it->second);
    held_.erase(it);
    write(piece, std::move(data));
}

void ServerFallback::stop_fetch(PieceIndex piece) {
    held_.erase(piece);
    if (auto received = fetcher_.abandon(piece)) controller_.on_fetch_stopped(piece, Bytes(*received));
}

void ServerFallback::stop() {
    stopped_ = true;
    fetcher_.stop();
}

void ServerFallback::on_piece(const PieceRequest& r, std::vector<char> data) {
    if (stopped_) return;
    const auto p = r.piece;
    if (!controller_.on_server_data(p, Bytes(data.size()), Clock::now())) {
        held_.erase(p);
        return;
    }
    const auto& g = controller_.geometry();
    const auto size = g.piece_size(p).value();
    const auto offset = ByteOffset(r.offset) - g.piece_start(p);
    // Peers are no longer asked for what the server sent. Not before it is here: a server that refuses the
    // piece (a lost block) would leave it to peers whose requests for it were just cancelled.
    control_.cancel_requests(key_, p, offset, Bytes(data.size()));
    auto held = held_.find(p);
    if (data.size() < size || held != held_.end()) {
        // Part of the piece: add_piece skips the blocks libtorrent holds, which are the rest. Should one of
        // them be gone by now (it failed a check), the zeros fail this one and the piece is fetched whole.
        if (held == held_.end()) held = held_.emplace(p, std::vector<char>(size, 0)).first;
        std::copy(data.begin(), data.end(),
                  held->second.begin() + static_cast<std::ptrdiff_t>(offset.value()));
        if (controller_.holding(p)) return;
        data = std::move(held->second);
        held_.erase(held);
    }
    write(p, std::move(data));
}

void ServerFallback::write(PieceIndex piece, std::vector<char> data) {
    control_.expect_server_piece(key_, piece);
    handle_.add_piece(lt::piece_index_t(piece.value()), std::move(data));
}

}  // namespace toast::client
