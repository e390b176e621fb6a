// The local HTTP endpoint a real player (mpv, VLC, ffplay, a set-top-box UI) reads the title from while the
// swarm downloads it. GET and HEAD with byte ranges (200/206/416), keep-alive and pipelining; a request
// must name the endpoint in its Host (localhost or the bound address: no DNS rebinding), and its framing
// must follow RFC 9112 (player_request.hpp). Request bodies are not read: a request with one is answered
// (405 for POST and the like) and the connection closed.
// A read of bytes not yet present waits until they arrive (on_data_arrived()), bounded by wait_timeout:
// before the response header that gives 503, after it the connection closes; wrong or zero-filled bytes are
// never sent. Every chunk it sends, and every wait, is reported to the MediaSource as a player read, which
// drives the StreamWatcher and makes the awaited piece urgent.
//
// One session object per connection, all on one io_context: no thread per connection. The io_context must
// be run by one thread (the engine's), the same one that calls on_data_arrived() and the MediaSource.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "client/http/media_source.hpp"
#include "toast/common/endpoint.hpp"

namespace toast::client {

namespace detail {
struct PlayerEndpointShared;  // the listener, the connections and the counters (player_endpoint.cpp)
}

struct PlayerEndpointConfig {
    Endpoint listen{"127.0.0.1", 0};
    std::string file_name = "title";  // the URL's path is title_path(file_name)
    // How long a read waits for missing bytes before giving up (503, or closing mid-body).
    std::chrono::milliseconds wait_timeout{60'000};
    // A keep-alive connection with no request for this long is closed.
    std::chrono::milliseconds idle_timeout{120'000};
    // A write the reader has not taken in this long closes the connection (a player paused for longer
    // reconnects when it plays on).
    std::chrono::milliseconds write_timeout{60'000};
    // When every connection slot is taken, a newcomer takes the slot of the connection that has made no
    // progress (no request read, no write completed) for longest, if that is at least this long. A
    // connection waiting for the swarm's bytes keeps its slot (its wait is bounded by wait_timeout). So
    // connections that ask and never read, or connect and never ask, cannot lock the player out.
    std::chrono::milliseconds stalled_after{2'000};
    std::size_t chunk_size = 256 * 1024;
    // SO_SNDBUF of each connection; small so the kernel holds little and the bytes the endpoint has sent
    // (the read frontier) stay close to what the player has consumed. 0 leaves the kernel's default.
    int send_buffer = 256 * 1024;
    std::size_t max_connections = 32;  // more get 503 and are closed, unless one is stalled (stalled_after)
    std::uint32_t header_limit = 8 * 1024;
};

struct PlayerEndpointStats {
    std::uint64_t requests = 0;
    std::uint64_t bytes_sent = 0;      // body bytes
    std::uint64_t waits = 0;           // reads that found their first byte missing and waited
    std::uint64_t wait_timeouts = 0;   // waits that ran out: 503 answers and connections closed mid-body
    std::uint64_t errors = 0;          // 4xx answers
    std::uint64_t write_timeouts = 0;  // connections closed because the reader took nothing for write_timeout
    std::uint64_t evicted = 0;         // stalled connections closed to make room for a newcomer
    // Time to first playable data: the first GET that asks for body bytes, from its arrival to its first
    // body byte handed to the socket.
    std::optional<std::chrono::milliseconds> first_byte;
    // Seek-to-data: each request whose first read was a seek (ReadKind::seek), from its arrival to its first
    // body byte handed to the socket.
    std::vector<std::chrono::milliseconds> seek_latencies;
};

class PlayerEndpoint {
  public:
    PlayerEndpoint(boost::asio::io_context& io, MediaSource& source, PlayerEndpointConfig config);
    ~PlayerEndpoint();
    PlayerEndpoint(const PlayerEndpoint&) = delete;
    PlayerEndpoint& operator=(const PlayerEndpoint&) = delete;

    // Binds and starts accepting. Throws std::runtime_error naming the address when it cannot listen.
    void start();
    std::uint16_t port() const;
    // "http://HOST:PORT/<file name>", valid after start().
    std::string url() const;
    // Some bytes became present: every waiting read looks again.
    void on_data_arrived();
    // Stops accepting and closes every connection. Idempotent; the destructor calls it.
    void stop();
    const PlayerEndpointStats& stats() const;
    std::size_t connections() const;

  private:
    std::shared_ptr<detail::PlayerEndpointShared> shared_;
};

}  // namespace toast::client
