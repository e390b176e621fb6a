// One title of the set-top-box service as the TitleService keeps it (private to client/service): its saved
// record, its torrent, where its files are, and what carries it now: the seeding torrent while stopped, the
// TitleStream while playing. Its status document (GET /api/titles/ID) is built from here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <libtorrent/torrent_handle.hpp>
#include <nlohmann/json.hpp>

#include "client/core/service_titles.hpp"
#include "client/core/title_geometry.hpp"
#include "client/lt/stream_session.hpp"
#include "client/lt/title_stream.hpp"
#include "client/lt/torrent_file.hpp"

namespace toast::client {

// A title's torrent, in its directory beside the data.
inline constexpr const char* kTitleTorrentFile = "title.torrent";

struct ServiceTitle;

// A stopped title's events: a torrent error is reported in the status; every event also goes to `listener`
// (the push agent follows the pieces it writes).
class TitleSeedEvents final : public TitleEvents {
  public:
    explicit TitleSeedEvents(ServiceTitle& t) : t_(t) {}
    void on_event(const LtEvent& e) override;
    std::function<void(const LtEvent&)> listener;

  private:
    ServiceTitle& t_;
};

struct ServiceTitle {
    // `torrent` has one file (the service refuses others).
    ServiceTitle(SavedTitle saved_, TitleTorrent torrent_, TitleGeometry geometry_,
                 std::filesystem::path dir_);

    SavedTitle saved;
    TitleTorrent torrent;
    TitleGeometry geometry;
    std::string file_name;  // the title's file, in `dir`
    std::filesystem::path dir;
    TitleState state = TitleState::stopped;
    libtorrent::torrent_handle seed;  // stopped: the torrent seeding what the title has
    std::unique_ptr<TitleSeedEvents> seed_events;
    std::unique_ptr<TitleStream> stream;  // playing
    std::uint64_t generation = 0;         // counts plays, so a late "finished" of an earlier one is ignored
    std::string error;                    // the last play's error, if it failed
    // Totals of earlier plays and seeding spells since the service started.
    std::uint64_t from_peers = 0;
    std::uint64_t from_server = 0;
    std::uint64_t uploaded = 0;
    std::uint32_t stalls = 0;
    std::uint64_t push_bytes = 0;  // fetched by push assignment
};

// A title's id: its info-hash as 40 lower-case hex digits.
std::string title_id(const libtorrent::sha1_hash& hash);

// What the title holds on disk now: a playing title its stored pieces, a stopped one the pieces it has, or
// what its file occupies if that is more (libtorrent counts nothing while it checks the file).
Bytes disk_bytes(ServiceTitle& t);

// The title's status document (docs/box.md lists its fields).
nlohmann::ordered_json title_status_json(ServiceTitle& t);

}  // namespace toast::client
