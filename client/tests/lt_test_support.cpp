#include "lt_test_support.hpp"

#include <thread>

#include <libtorrent/bencode.hpp>
#include <libtorrent/create_torrent.hpp>

#include "client/lt/session_factory.hpp"

namespace lt = libtorrent;

namespace toast::client::testing {

std::vector<char> make_torrent_bytes(const std::filesystem::path& file, int piece_size,
                                     const std::vector<std::string>& url_list,
                                     const std::vector<std::string>& trackers) {
    lt::file_storage fs;
    lt::add_files(fs, file.string());
    lt::create_torrent ct(fs, piece_size, lt::create_torrent::v1_only);
    for (const auto& u : url_list)
        ct.add_url_seed(u);
    for (const auto& t : trackers)
        ct.add_tracker(t);
    lt::set_piece_hashes(ct, file.parent_path().string());
    std::vector<char> out;
    lt::bencode(std::back_inserter(out), ct.generate());
    return out;
}

std::shared_ptr<lt::torrent_info> make_torrent(const std::filesystem::path& file, int piece_size) {
    auto bytes = make_torrent_bytes(file, piece_size);
    return std::make_shared<lt::torrent_info>(lt::span<const char>(bytes.data(), bytes.size()),
                                              lt::from_span);
}

lt::torrent_handle add_torrent(lt::session& session, std::shared_ptr<lt::torrent_info> ti,
                               const std::filesystem::path& save_dir) {
    lt::add_torrent_params p;
    p.ti = std::move(ti);
    p.save_path = save_dir.string();
    prepare_add_torrent_params(p);
    return session.add_torrent(std::move(p));
}

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (condition()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return condition();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

int listen_port(lt::session& session) {
    int port = 0;
    wait_until(
        [&] {
            port = session.listen_port();
            return port != 0;
        },
        std::chrono::seconds(5));
    return port;
}

}  // namespace toast::client::testing
