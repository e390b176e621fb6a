// What the local player endpoint needs from the title being streamed: its size, which bytes are present,
// the bytes themselves, and a place to report the player's reads. The engine implements it over libtorrent's
// storage and the StreamWatcher; the endpoint tests implement it with a map of pieces. Every call is made on
// the endpoint's executor (the engine's single-threaded io_context), so an implementation needs no locking.
#pragma once

#include <span>
#include <string>

#include "client/core/piece_types.hpp"
#include "client/core/stream_watcher.hpp"

namespace toast::client {

class MediaSource {
  public:
    virtual ~MediaSource() = default;

    virtual Bytes size() const = 0;
    // The Content-Type the endpoint answers with ("video/mp4", "video/mp2t", ...).
    virtual std::string content_type() const = 0;
    // Bytes present and readable contiguously from `offset`, at most `max`: 0 when the byte at `offset` is
    // missing. Present means verified: a byte counted here is never wrong or zero-filled.
    virtual Bytes available(ByteOffset offset, Bytes max) const = 0;
    // Copies the bytes at `offset` into `out`; available() said they are present. false with `error` set
    // when they cannot be read (the endpoint then closes the connection rather than send anything wrong).
    virtual bool read(ByteOffset offset, std::span<char> out, std::string& error) = 0;
    // The player reads [offset, offset + length): the endpoint is about to send those bytes, or (length 1)
    // waits for the byte at `offset`. `continuation` is false for the first read of a request and true for
    // the ones after it. Drives the StreamWatcher's player mode; a missing piece read here is what the
    // server fallback fetches at once.
    virtual ReadKind on_player_read(ByteOffset offset, Bytes length, bool continuation) = 0;
};

}  // namespace toast::client
