// Follows a running mpv through its JSON IPC socket (--input-ipc-server): connects (retrying while mpv
// starts up and creates the socket), asks it to report time-pos, pause and paused-for-cache
// (mpv_messages.hpp), and hands every event to the caller. Runs on the caller's io_context. A socket that
// never appears (a player that is not really mpv) or that closes leaves the caller estimating the position
// from the player's reads, as for any other player.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "client/core/mpv_messages.hpp"

namespace toast::client {

struct MpvIpcConfig {
    std::chrono::milliseconds retry{100};       // between connection attempts while mpv starts
    std::chrono::milliseconds give_up{30'000};  // no socket after this long: not an mpv that serves IPC
    std::size_t max_line = 64 * 1024;           // a longer line from mpv closes the connection
};

class MpvIpc {
  public:
    using OnEvent = std::function<void(const MpvEvent&)>;

    MpvIpc(boost::asio::io_context& io, std::filesystem::path socket, OnEvent on_event,
           MpvIpcConfig config = {});
    ~MpvIpc();
    MpvIpc(const MpvIpc&) = delete;
    MpvIpc& operator=(const MpvIpc&) = delete;

    void start();
    // Closes the connection; no callback runs afterwards.
    void stop();
    bool connected() const;
    std::uint64_t events() const;  // events handed to the caller

  private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toast::client
