// play: the playback adapter of one title. It serves the title to a real player over the local HTTP endpoint
// (PlayerEndpoint) from the file libtorrent writes, reports the player's reads to the controller (they drive
// the watcher's player mode and make an awaited piece urgent), learns where the container's index is from the
// title's first bytes, and saves the playback position for resume. The status line on a terminal is printed
// from here too.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <libtorrent/torrent_info.hpp>

#include "client/core/client_tuning.hpp"
#include "client/core/mpv_messages.hpp"
#include "client/core/stats.hpp"
#include "client/core/stream_controller.hpp"
#include "client/http/mpv_ipc.hpp"
#include "client/http/player_endpoint.hpp"
#include "toast/common/endpoint.hpp"

namespace toast::client {

// Where this title was left (the resume file in `save_dir`), or 0 for a new title or an unusable file (a
// warning says why).
ByteOffset load_resume_offset(const std::filesystem::path& save_dir, const std::string& file_name,
                              const TitleGeometry& geometry);

struct PlaybackSetup {
    std::filesystem::path save_dir;
    Endpoint listen{"127.0.0.1", 0};  // the endpoint's address (--http)
    std::chrono::milliseconds wait_timeout{60'000};
};

class TitlePlayback {
  public:
    // Throws std::runtime_error when the title is not one file or the endpoint cannot listen. `kick` asks
    // the title for a plan now (a read waits for a missing piece, or seeks).
    TitlePlayback(boost::asio::io_context& io, StreamController& controller,
                  std::shared_ptr<const libtorrent::torrent_info> torrent, PlaybackSetup setup,
                  const ClientTuning& tuning, std::function<void()> kick);
    ~TitlePlayback();
    TitlePlayback(const TitlePlayback&) = delete;
    TitlePlayback& operator=(const TitlePlayback&) = delete;

    std::string url() const;
    const std::string& file_name() const { return file_name_; }

    // A new piece is had: a waiting read looks again (and the title's head is inspected once it is there).
    void on_piece_had(PieceIndex p);
    // A piece left local storage: its bytes must be checked again if it ever comes back.
    void on_piece_lost(PieceIndex p);
    // Once a second: the position is saved and the status line refreshed.
    void on_stats(const StatsRecord& record);
    // The endpoint's figures for the stats record (player URL, first byte, seek latencies).
    void fill_record(StatsRecord& record) const;
    // Saves the position, ends the status line and closes every player connection.
    void stop(const StatsRecord& summary);
    // The player is mpv serving its JSON IPC at `socket`: its reported position and pause state drive the
    // playhead from its first report on.
    void follow_mpv(const std::filesystem::path& socket);

  private:
    class Media;
    void set_tail_probe_range();
    void try_inspect_head();
    void save_position();
    void print_status(const StatsRecord& r);

    boost::asio::io_context& io_;
    StreamController& controller_;
    std::shared_ptr<const libtorrent::torrent_info> torrent_;
    PlaybackSetup setup_;
    std::function<void()> kick_;
    std::string file_name_;
    std::filesystem::path media_path_;
    bool head_pending_ = false;  // an MP4 whose first piece has not been inspected yet
    bool status_line_ = false;
    bool stopped_ = false;
    std::unique_ptr<Media> media_;  // before endpoint_: the endpoint reads it
    std::unique_ptr<PlayerEndpoint> endpoint_;
    std::unique_ptr<MpvIpc> mpv_;
    MpvPauseState mpv_pause_;
};

}  // namespace toast::client
