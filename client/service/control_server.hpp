// The service's local HTTP server: the control API, the piece map page and the status event stream, on one
// loopback port. It only moves bytes: each request (method, target, content type, body) goes to the handler,
// which answers now or later through its Reply; what a request means is decided in client/core/service_api.
// An answer marked `event_stream` turns the connection into a server-sent event stream (text/event-stream)
// that receives every publish() until the client goes away.
//
// One session object per connection, all on the caller's io_context (one thread): no locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "toast/common/endpoint.hpp"

namespace toast::client {

struct ControlRequest {
    std::string method;
    std::string target;
    std::string content_type;
    std::string body;
    std::string host;    // the Host header
    std::string origin;  // the Origin header, empty when absent
};

struct ControlResponse {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::string allow{};        // 405: the Allow header
    bool event_stream = false;  // keep the connection open as an event stream; `body` is its first event
};

struct ControlServerConfig {
    Endpoint listen{"127.0.0.1", 0};
    std::size_t body_limit = 5 * 1024 * 1024;  // larger bodies get 413
    std::uint32_t header_limit = 16 * 1024;    // larger headers get 431
    std::chrono::milliseconds idle_timeout{30'000};
    std::size_t max_connections = 64;     // more get 503
    std::size_t max_queued_events = 256;  // a stream this far behind is closed: its reader is gone or stuck
};

namespace detail {
struct ControlServerShared;
}

class ControlServer {
  public:
    using Reply = std::function<void(ControlResponse)>;
    // Called once per request; `reply` must be called exactly once (it may outlive the connection: a reply to
    // a closed connection is dropped).
    using Handler = std::function<void(const ControlRequest&, Reply)>;

    ControlServer(boost::asio::io_context& io, ControlServerConfig config, Handler handler);
    ~ControlServer();
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    // Binds and starts accepting. Throws std::runtime_error naming the address when it cannot listen.
    void start();
    std::uint16_t port() const;
    // Sends one server-sent event ("event: NAME\ndata: DATA\n\n"; DATA is one line) to every open stream.
    void publish(const std::string& event, const std::string& data);
    std::size_t streams() const;
    // Stops accepting and closes every connection. Idempotent; the destructor calls it.
    void stop();

  private:
    std::shared_ptr<detail::ControlServerShared> shared_;
};

// "event: NAME\ndata: DATA\n\n"
std::string sse_event(const std::string& event, const std::string& data);

}  // namespace toast::client
