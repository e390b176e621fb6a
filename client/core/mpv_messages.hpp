// mpv's JSON IPC (--input-ipc-server), the part the client speaks: the commands that ask mpv to report the
// playback position and the pause state, and the reading of what mpv sends back, one JSON object per line.
// Pure: text in, events out. The socket is client/http/mpv_ipc.hpp.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace toast::client {

enum class MpvEventKind {
    position,     // time-pos changed: `position` is the media time mpv shows
    pause,        // the viewer paused or played on: `paused`
    cache_pause,  // mpv stopped or went on waiting for data (paused-for-cache): `paused`
    seek,         // the viewer seeks; the new time-pos follows
    end_file,     // playback of the URL ended (the viewer quit or it reached the end)
};

struct MpvEvent {
    MpvEventKind kind = MpvEventKind::position;
    std::chrono::nanoseconds position{0};
    bool paused = false;
    bool operator==(const MpvEvent&) const = default;
};

// The lines to send once connected: observe time-pos, pause and paused-for-cache.
std::string mpv_observe_commands();

// Reads one line from mpv. nullopt for anything the client does not act on: command replies, other events
// and properties, a time-pos of null (no file loaded), and text that is not a JSON object (mpv's input is
// not trusted to be well formed: nothing here throws).
std::optional<MpvEvent> parse_mpv_line(std::string_view line);

// mpv reports `pause` (the viewer paused) and `paused-for-cache` (waiting for data) separately; the picture
// stands still while either is set.
class MpvPauseState {
  public:
    // Feeds one event; returns the combined state when it changed.
    std::optional<bool> on_event(const MpvEvent& e);
    bool paused() const { return user_ || cache_; }

  private:
    bool user_ = false;
    bool cache_ = false;
};

}  // namespace toast::client
