#include "libtorrent_support.hpp"

#include <libtorrent/alert_types.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/create_torrent.hpp>
#include <libtorrent/settings_pack.hpp>

namespace lt = libtorrent;
namespace fs = std::filesystem;

namespace toast::tracker::testing {

std::unique_ptr<lt::session> make_lt_session() {
    lt::settings_pack p;
    p.set_str(lt::settings_pack::listen_interfaces, "127.0.0.1:0");
    p.set_bool(lt::settings_pack::enable_dht, false);
    p.set_bool(lt::settings_pack::enable_lsd, false);
    p.set_bool(lt::settings_pack::enable_upnp, false);
    p.set_bool(lt::settings_pack::enable_natpmp, false);
    p.set_bool(lt::settings_pack::enable_ip_notifier, false);
    p.set_bool(lt::settings_pack::allow_multiple_connections_per_ip, true);
    p.set_bool(lt::settings_pack::enable_incoming_utp, false);
    p.set_bool(lt::settings_pack::enable_outgoing_utp, false);
    // libtorrent caches a UDP tracker's connection id per IP address, process-wide, for this long, and
    // reuses it without a new connect (udp_tracker_connection.cpp:261-282): a test process that starts
    // several trackers on 127.0.0.1 would send one tracker's id to the next, which drops it as forged.
    p.set_int(lt::settings_pack::udp_tracker_token_expiry, 0);
    p.set_int(lt::settings_pack::alert_mask, lt::alert_category::error | lt::alert_category::tracker |
                                                 lt::alert_category::status | lt::alert_category::storage);
    return std::make_unique<lt::session>(lt::session_params(p));
}

std::shared_ptr<lt::torrent_info> make_lt_torrent(const fs::path& file, int piece_size) {
    lt::file_storage fs;
    lt::add_files(fs, file.string());
    lt::create_torrent t(fs, piece_size, lt::create_torrent::v1_only);
    lt::set_piece_hashes(t, file.parent_path().string());
    std::vector<char> buf;
    lt::bencode(std::back_inserter(buf), t.generate());
    return std::make_shared<lt::torrent_info>(buf, lt::from_span);
}

InfoHash info_hash_of(const lt::torrent_info& ti) {
    auto v1 = ti.info_hashes().v1;
    return *InfoHash::from_bytes(std::string_view(v1.data(), 20));
}

lt::torrent_handle add_lt_torrent(lt::session& s, std::shared_ptr<lt::torrent_info> ti, const fs::path& dir,
                                  const std::string& tracker, lt::torrent_flags_t extra) {
    lt::add_torrent_params atp;
    atp.ti = std::move(ti);
    atp.save_path = dir.string();
    atp.trackers = {tracker};
    atp.flags &= ~(lt::torrent_flags::auto_managed | lt::torrent_flags::paused);
    atp.flags |= extra;
    return s.add_torrent(std::move(atp));
}

bool AlertPump::until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done()) return true;
        sessions.front()->wait_for_alert(std::chrono::milliseconds(50));
        for (auto* s : sessions) {
            std::vector<lt::alert*> alerts;
            s->pop_alerts(&alerts);
            for (auto* a : alerts) {
                if (on_alert) on_alert(a);
                if (lt::alert_cast<lt::tracker_error_alert>(a) ||
                    lt::alert_cast<lt::torrent_error_alert>(a)) {
                    log += a->message() + "\n";
                }
            }
        }
    }
    return done();
}

}  // namespace toast::tracker::testing
