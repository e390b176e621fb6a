// Stock libtorrent sessions for the tracker's integration tests: sessions that can meet only through the
// tracker (DHT, LSD, UPnP and NAT-PMP off), v1 torrents, and an alert pump.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <libtorrent/alert.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_info.hpp>

#include "tracker/core/ids.hpp"

namespace toast::tracker::testing {

std::unique_ptr<libtorrent::session> make_lt_session();

// A v1 torrent for `file` (libtorrent 2.0 makes hybrid torrents by default, which announce twice: once per
// info-hash; v1-only keeps one swarm per torrent on the tracker).
std::shared_ptr<libtorrent::torrent_info> make_lt_torrent(const std::filesystem::path& file, int piece_size);

InfoHash info_hash_of(const libtorrent::torrent_info& ti);

libtorrent::torrent_handle add_lt_torrent(libtorrent::session& s,
                                          std::shared_ptr<libtorrent::torrent_info> ti,
                                          const std::filesystem::path& dir, const std::string& tracker,
                                          libtorrent::torrent_flags_t extra);

// Pops alerts from every session until `done` holds or `timeout` passes; tracker errors are kept for the
// failure message.
struct AlertPump {
    std::vector<libtorrent::session*> sessions;
    std::string log;
    std::function<void(libtorrent::alert*)> on_alert;

    bool until(const std::function<bool()>& done, std::chrono::milliseconds timeout);
};

}  // namespace toast::tracker::testing
