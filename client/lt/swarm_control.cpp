#include "client/lt/swarm_control.hpp"

#include <exception>
#include <future>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "client/lt/toast_plugin.hpp"

namespace lt = libtorrent;

namespace toast::client {

std::shared_ptr<lt::plugin> SwarmControl::make_plugin() {
    return make_toast_plugin(shared_from_this());
}

void SwarmControl::attach(lt::io_context& network) {
    std::lock_guard lock(mutex_);
    network_ = &network;
}

void SwarmControl::detach() {
    std::lock_guard lock(mutex_);
    network_ = nullptr;
}

void SwarmControl::expect_server_piece(const lt::sha1_hash& torrent, PieceIndex piece) {
    std::lock_guard lock(mutex_);
    server_pieces_.emplace(torrent, piece);
}

bool SwarmControl::take_server_piece(const lt::sha1_hash& torrent, PieceIndex piece) {
    std::lock_guard lock(mutex_);
    return server_pieces_.erase({torrent, piece}) > 0;
}

void SwarmControl::set_operator_peers(const lt::sha1_hash& torrent, std::vector<lt::tcp::endpoint> peers) {
    std::lock_guard lock(mutex_);
    operators_[torrent].listen = std::move(peers);
}

std::set<lt::tcp::endpoint> SwarmControl::operator_connections(const lt::sha1_hash& torrent) const {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    return it == operators_.end() ? std::set<lt::tcp::endpoint>{} : it->second.connections;
}

void SwarmControl::count_raced_bytes(const lt::sha1_hash& torrent, int bytes) {
    std::lock_guard lock(mutex_);
    raced_bytes_[torrent] += static_cast<std::uint64_t>(bytes);
}

void SwarmControl::set_operator_wanted(const lt::sha1_hash& torrent, bool wanted) {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    if (it == operators_.end() || it->second.wanted == wanted) return;
    it->second.wanted = wanted;
    if (network_ == nullptr) return;
    boost::asio::post(*network_, [self = shared_from_this(), torrent] {
        for (auto& weak : self->torrents_) {
            if (auto t = weak.lock()) toast::client::tell_operator_interest(*t, torrent);
        }
    });
}

std::optional<bool> SwarmControl::operator_wanted(const lt::sha1_hash& torrent,
                                                  const lt::tcp::endpoint& remote) const {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    if (it == operators_.end() || it->second.connections.count(remote) == 0) return std::nullopt;
    return it->second.wanted;
}

void SwarmControl::count_received(const lt::sha1_hash& torrent, const lt::tcp::endpoint& remote, int bytes) {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    if (it != operators_.end() && it->second.connections.count(remote) != 0)
        it->second.received += static_cast<std::uint64_t>(bytes);
}

std::uint64_t SwarmControl::operator_bytes(const lt::sha1_hash& torrent) const {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    return it == operators_.end() ? 0 : it->second.received;
}

void SwarmControl::set_position(const lt::sha1_hash& torrent, Position position) {
    std::lock_guard<std::mutex> lock(mutex_);
    positions_[torrent] = position;
}

SwarmControl::Position SwarmControl::position(const lt::sha1_hash& torrent) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = positions_.find(torrent);
    return it == positions_.end() ? Position{} : it->second;
}

std::uint64_t SwarmControl::raced_bytes(const lt::sha1_hash& torrent) const {
    std::lock_guard lock(mutex_);
    auto it = raced_bytes_.find(torrent);
    return it == raced_bytes_.end() ? 0 : it->second;
}

void SwarmControl::set_queue_front(const lt::sha1_hash& torrent, std::uint64_t peer,
                                   std::vector<BlockRef> front) {
    std::lock_guard lock(mutex_);
    if (front.empty()) {
        auto it = queue_fronts_.find(torrent);
        if (it != queue_fronts_.end()) it->second.erase(peer);
        return;
    }
    queue_fronts_[torrent][peer] = std::move(front);
}

std::vector<std::pair<BlockRef, int>> SwarmControl::queue_fronts(const lt::sha1_hash& torrent) const {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<BlockRef, int>> out;
    auto it = queue_fronts_.find(torrent);
    if (it == queue_fronts_.end()) return out;
    for (const auto& [peer, front] : it->second) {
        for (std::size_t i = 0; i < front.size(); ++i)
            out.emplace_back(front[i], static_cast<int>(i));
    }
    return out;
}

void SwarmControl::forget_torrent(const lt::sha1_hash& torrent) {
    std::lock_guard lock(mutex_);
    operators_.erase(torrent);
    queue_fronts_.erase(torrent);
    raced_bytes_.erase(torrent);
    positions_.erase(torrent);
    for (auto it = server_pieces_.begin(); it != server_pieces_.end();) {
        it = it->first == torrent ? server_pieces_.erase(it) : std::next(it);
    }
}

void SwarmControl::on_peer_listen(const lt::sha1_hash& torrent, const lt::tcp::endpoint& remote,
                                  const lt::tcp::endpoint& listen) {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    if (it == operators_.end()) return;
    auto& ops = it->second;
    if (std::find(ops.listen.begin(), ops.listen.end(), listen) != ops.listen.end())
        ops.connections.insert(remote);
}

void SwarmControl::on_peer_gone(const lt::sha1_hash& torrent, const lt::tcp::endpoint& remote) {
    std::lock_guard lock(mutex_);
    auto it = operators_.find(torrent);
    if (it != operators_.end()) it->second.connections.erase(remote);
}

void SwarmControl::add_torrent_plugin(std::weak_ptr<ToastTorrentPlugin> plugin) {
    std::erase_if(torrents_, [](const auto& w) { return w.expired(); });  // removed torrents
    torrents_.push_back(std::move(plugin));
}

void SwarmControl::post(std::function<void()> work) {
    std::lock_guard lock(mutex_);
    if (network_ == nullptr) return;
    boost::asio::post(*network_, std::move(work));
}

void SwarmControl::run_on_network(const std::function<void()>& work) {
    lt::io_context* network = nullptr;
    {
        std::lock_guard lock(mutex_);
        network = network_;
    }
    if (network == nullptr || network->get_executor().running_in_this_thread()) {
        work();
        return;
    }
    std::promise<void> done;
    auto ran = done.get_future();
    boost::asio::dispatch(*network, [&work, &done] {
        try {
            work();
            done.set_value();
        } catch (...) {
            done.set_exception(std::current_exception());
        }
    });
    ran.get();
}

void SwarmControl::cancel_requests(const lt::sha1_hash& torrent, PieceIndex piece, Bytes offset,
                                   Bytes length) {
    std::lock_guard lock(mutex_);
    if (network_ == nullptr) return;
    boost::asio::post(*network_, [self = shared_from_this(), torrent, piece, offset, length] {
        for (auto& weak : self->torrents_) {
            if (auto t = weak.lock()) toast::client::cancel_requests(*t, torrent, piece, offset, length);
        }
    });
}

void SwarmControl::announce_dont_have(const lt::sha1_hash& torrent, PieceIndex piece) {
    std::lock_guard lock(mutex_);
    if (network_ == nullptr) return;
    boost::asio::post(*network_, [self = shared_from_this(), torrent, piece] {
        for (auto& weak : self->torrents_) {
            if (auto t = weak.lock()) send_dont_have(*t, torrent, piece);
        }
    });
}

namespace {

void put_int32(std::vector<char>& out, std::uint32_t v) {
    out.push_back(static_cast<char>((v >> 24) & 0xff));
    out.push_back(static_cast<char>((v >> 16) & 0xff));
    out.push_back(static_cast<char>((v >> 8) & 0xff));
    out.push_back(static_cast<char>(v & 0xff));
}

std::vector<char> encode_block_message(char id, int piece, int start, int length) {
    std::vector<char> out;
    put_int32(out, 13);
    out.push_back(id);
    put_int32(out, static_cast<std::uint32_t>(piece));
    put_int32(out, static_cast<std::uint32_t>(start));
    put_int32(out, static_cast<std::uint32_t>(length));
    return out;
}

}  // namespace

std::vector<char> encode_request(int piece, int start, int length) {
    return encode_block_message(6, piece, start, length);
}

std::vector<char> encode_cancel(int piece, int start, int length) {
    return encode_block_message(8, piece, start, length);
}

std::vector<char> encode_interest(bool interested) {
    std::vector<char> out;
    put_int32(out, 1);
    out.push_back(interested ? 2 : 3);
    return out;
}

std::vector<char> encode_lt_donthave(int extension_id, int piece) {
    std::vector<char> out;
    put_int32(out, 6);
    out.push_back(20);  // extended message
    out.push_back(static_cast<char>(extension_id));
    put_int32(out, static_cast<std::uint32_t>(piece));
    return out;
}

}  // namespace toast::client
