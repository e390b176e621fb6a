#include "client/lt/swarm_reader.hpp"

#include <algorithm>

namespace lt = libtorrent;

namespace toast::client {

SwarmReader::SwarmReader(lt::torrent_handle handle, TitleGeometry geometry,
                         std::chrono::milliseconds peer_interval, Batch batch)
    : handle_(std::move(handle)),
      geometry_(geometry),
      batch_(std::move(batch)),
      peer_interval_(peer_interval) {
    if (!batch_) batch_ = [](const std::function<void()>& work) { work(); };
}

bool SwarmReader::checking() const {
    auto st = handle_.status({});
    return st.state == lt::torrent_status::checking_files ||
           st.state == lt::torrent_status::checking_resume_data;
}

PieceSet SwarmReader::pieces_on_disk() const {
    PieceSet out(geometry_.piece_count());
    auto full = handle_.status(lt::torrent_handle::query_pieces);
    for (int p = 0; p < geometry_.piece_count().value() && p < full.pieces.size(); ++p) {
        if (full.pieces.get_bit(lt::piece_index_t(p))) out.set(PieceIndex(p));
    }
    return out;
}

void SwarmReader::refresh_status() {
    status_ = handle_.status({});
}

SwarmSample SwarmReader::read(SteadyTime now, bool server_up, const std::set<lt::tcp::endpoint>& operators,
                              const std::vector<std::pair<BlockRef, int>>& fronts) {
    SwarmSample s;
    s.now = now;
    s.server_up = server_up;
    // libtorrent updates peer rates and request queues once a second, and get_peer_info copies every peer's
    // piece bitfield: a tick in between reuses the last read unless peers came or went.
    bool peers_read = false;
    batch_([&] {
        status_ = handle_.status({});
        handle_.piece_availability(s.availability);
        handle_.get_download_queue(queue_);
        // The blocks' states live in a buffer of the session's that its next download-queue read overwrites:
        // copied out here, on its thread.
        delivered_.resize(queue_.size());
        for (std::size_t i = 0; i < queue_.size(); ++i) {
            const auto& q = queue_[i];
            auto& d = delivered_[i];
            d.assign(static_cast<std::size_t>(std::max(q.blocks_in_piece, 0)), false);
            for (std::size_t b = 0; b < d.size(); ++b) {
                const auto state = q.blocks[b].state;
                d[b] = state == lt::block_info::writing || state == lt::block_info::finished;
            }
        }
        if (!peers_read_at_ || now - *peers_read_at_ >= peer_interval_ || status_.num_peers != peers_seen_) {
            handle_.get_peer_info(peers_);
            peers_read = true;
        }
    });
    s.known_peers = status_.list_peers;
    s.from_peers =
        Bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(status_.total_payload_download, 0)));

    const auto n = geometry_.piece_count().value();
    s.availability.resize(static_cast<std::size_t>(n), 0);

    s.in_flight.reserve(queue_.size());
    for (std::size_t i = 0; i < queue_.size(); ++i) {
        PieceIndex piece(static_cast<int>(queue_[i].piece_index));
        if (!geometry_.valid(piece)) continue;
        s.in_flight.push_back(piece);
        const auto blocks = delivered_[i].size();
        PieceProgress progress{piece, delivered_[i], std::vector<int>(blocks, -1)};
        // most in-flight pieces: nothing of them here yet, nor next from a peer
        bool any =
            std::find(progress.delivered.begin(), progress.delivered.end(), true) != progress.delivered.end();
        for (const auto& [block, place] : fronts) {
            if (block.piece != piece.value() || block.start < 0) continue;
            const auto b =
                static_cast<std::size_t>(block.start / static_cast<std::int32_t>(block_size.value()));
            if (b >= blocks) continue;
            progress.queue_position[b] =
                progress.queue_position[b] < 0 ? place : std::min(progress.queue_position[b], place);
            any = true;
        }
        if (any) s.progress.push_back(std::move(progress));
    }

    if (peers_read) {
        sample_peers(operators);
        peers_read_at_ = now;
        peers_seen_ = status_.num_peers;
    }
    s.peers = peer_samples_;
    return s;
}

void SwarmReader::sample_peers(const std::set<lt::tcp::endpoint>& operators) {
    const auto n = geometry_.piece_count().value();
    peer_samples_.clear();
    peer_samples_.reserve(peers_.size());
    for (const auto& p : peers_) {
        if (p.connection_type != lt::peer_info::standard_bittorrent) continue;
        PeerSample ps;
        ps.seed = static_cast<bool>(p.flags & lt::peer_info::seed);
        ps.upload_only = static_cast<bool>(p.flags & lt::peer_info::upload_only);
        ps.operator_peer = operators.count(p.ip) != 0;
        if (ps.operator_peer && !ps.seed) {
            ps.pieces = PieceSet(geometry_.piece_count());
            for (int i = 0; i < n && i < p.pieces.size(); ++i)
                if (p.pieces.get_bit(lt::piece_index_t(i))) ps.pieces.set(PieceIndex(i));
        }
        ps.download_rate = p.payload_down_speed;
        ps.queue_length = p.download_queue_length;
        peer_samples_.push_back(std::move(ps));
    }
}

}  // namespace toast::client
