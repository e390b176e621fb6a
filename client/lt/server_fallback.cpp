#include "client/lt/server_fallback.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace lt = libtorrent;
using Clock = std::chrono::steady_clock;

namespace toast::client {

ServerFallback::ServerFallback(boost::asio::io_context& io, std::vector<ServerUrl> urls,
                               StreamController& controller, lt::torrent_handle handle, SwarmControl& control,
                               lt::sha1_hash key)
    : controller_(controller),
      handle_(std::move(handle)),
      control_(control),
      key_(key),
      fetcher_(io, std::move(urls), FetcherConfig{},
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
    auto part = f.part.value_or(PiecePart{Bytes(0), g.piece_size(p)});
    PieceRequest r{p, (g.piece_start(p) + part.offset).value(),
                   static_cast<std::uint32_t>(part.length.value()), f.revalidate, now + f.due};
    if (!fetcher_.fetch(r)) controller_.on_fetch_refused(p);
}

void ServerFallback::stop_fetch(PieceIndex piece) {
    if (auto received = fetcher_.abandon(piece)) controller_.on_fetch_stopped(piece, Bytes(*received));
}

void ServerFallback::stop() {
    stopped_ = true;
    fetcher_.stop();
}

void ServerFallback::on_piece(const PieceRequest& r, std::vector<char> data) {
    if (stopped_) return;
    const auto p = r.piece;
    if (!controller_.on_server_data(p, Bytes(data.size()), Clock::now())) return;
    const auto& g = controller_.geometry();
    const auto size = g.piece_size(p).value();
    if (data.size() < size) {
        const auto offset = ByteOffset(r.offset) - g.piece_start(p);
        // Part of the piece: add_piece skips the blocks libtorrent holds, which are the rest. Should one of
        // them be gone by now (it failed a check), the zeros fail this one and the piece is fetched whole.
        std::vector<char> piece(size, 0);
        std::copy(data.begin(), data.end(), piece.begin() + static_cast<std::ptrdiff_t>(offset.value()));
        data = std::move(piece);
    }
    control_.expect_server_piece(key_, p);
    handle_.add_piece(lt::piece_index_t(p.value()), std::move(data));
}

}  // namespace toast::client
