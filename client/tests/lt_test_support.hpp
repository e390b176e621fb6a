// Helpers for the libtorrent adapter tests: make a torrent from a file, add it to a session, wait for a
// condition with a bound on time.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <libtorrent/session.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_info.hpp>

namespace toast::client::testing {

// Bencoded .torrent for the single file `file` (its name is the file name), with optional extra top-level
// keys given as already-bencoded values ("toast" -> "d7:bitratei2000000ee").
std::vector<char> make_torrent_bytes(const std::filesystem::path& file, int piece_size,
                                     const std::vector<std::string>& url_list = {},
                                     const std::vector<std::string>& trackers = {});
std::shared_ptr<libtorrent::torrent_info> make_torrent(const std::filesystem::path& file, int piece_size);

// Adds `ti` non-auto-managed, saving into `save_dir`; blocks until the torrent handle is valid.
libtorrent::torrent_handle add_torrent(libtorrent::session& session,
                                       std::shared_ptr<libtorrent::torrent_info> ti,
                                       const std::filesystem::path& save_dir);

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns the last result.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// The session's listen port once it listens (0 after 5 s without).
int listen_port(libtorrent::session& session);

}  // namespace toast::client::testing
