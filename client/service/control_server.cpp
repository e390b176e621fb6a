#include "client/service/control_server.hpp"

#include <array>
#include <deque>
#include <optional>
#include <set>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include "client/core/service_api.hpp"
#include "client/http/local_server.hpp"
#include "client/http/player_request.hpp"
#include "toast/common/beast_request_head.hpp"
#include "toast/common/http_status.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace toast::client {

namespace {

class Connection;

}  // namespace

std::string sse_event(const std::string& event, const std::string& data) {
    return "event: " + event + "\ndata: " + data + "\n\n";
}

struct detail::ControlServerShared : LocalServerState<Connection> {
    ControlServerShared(asio::io_context& io_, ControlServerConfig config_, ControlServer::Handler handler_)
        : LocalServerState(io_), config(std::move(config_)), handler(std::move(handler_)) {}
    ControlServerConfig config;
    ControlServer::Handler handler;
    std::set<Connection*> streams;  // connections serving the event stream
};

namespace {

class Connection : public LocalConnection<detail::ControlServerShared, Connection> {
  public:
    using LocalConnection::LocalConnection;
    ~Connection() { sh_->streams.erase(this); }

    void start(bool reject) {
        if (reject) {
            respond({.status = 503, .body = api_error_body("too many connections")}, false);
            return;
        }
        do_read();
    }

    void close() {
        timer_.cancel();
        sh_->streams.erase(this);
        close_socket(socket_);
    }

    void push_event(const std::string& text) {
        if (queue_.size() >= sh_->config.max_queued_events) {
            spdlog::debug("control: closing an event stream that is {} events behind", queue_.size());
            close();
            return;
        }
        queue_.push_back(text);
        if (!writing_) write_next();
    }

  private:
    void do_read() {
        parser_.emplace();
        parser_->header_limit(sh_->config.header_limit);
        parser_->body_limit(sh_->config.body_limit);
        timer_.expires_after(sh_->config.idle_timeout);
        timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
            if (ec != asio::error::operation_aborted) self->close();
        });
        http::async_read(
            socket_, buffer_, *parser_,
            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(beast::error_code ec) {
        if (read_ended(ec)) return;
        if (ec == http::error::header_limit) {
            error(431, "request header larger than " + std::to_string(sh_->config.header_limit) + " bytes");
            return;
        }
        if (ec == http::error::body_limit) {
            error(413, "request body larger than " + std::to_string(sh_->config.body_limit) + " bytes");
            return;
        }
        if (ec) {
            error(400, "malformed request: " + ec.message());
            return;
        }
        auto& req = parser_->get();
        keep_alive_ = req.keep_alive();
        // The player endpoint's rules for the request head: one Host naming this address (a web page that
        // rebinds its DNS name to 127.0.0.1 must not reach the API), body framing that is unambiguous.
        if (auto refused = refuse_request_head(request_head_of(req),
                                               EndpointIdentity{sh_->config.listen.host, sh_->port})) {
            error(refused->status, refused->reason);
            return;
        }
        ControlRequest cr{.method = std::string(req.method_string()),
                          .target = std::string(req.target()),
                          .content_type = std::string(req[http::field::content_type]),
                          .body = std::move(req.body()),
                          .host = std::string(req[http::field::host]),
                          .origin = std::string(req[http::field::origin])};
        spdlog::debug("control: {} {}", cr.method, cr.target);
        auto answered = std::make_shared<bool>(false);
        sh_->handler(cr, [self = shared_from_this(), answered](ControlResponse r) {
            if (*answered) return;
            *answered = true;
            self->respond(std::move(r), self->keep_alive_);
        });
    }

    // An event stream reads nothing more; the pending read keeps the connection alive and sees the client go.
    void watch_close() {
        socket_.async_read_some(asio::buffer(drain_),
                                [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                    if (ec) {
                                        self->close();
                                        return;
                                    }
                                    self->watch_close();
                                });
    }

    void error(int status, const std::string& message) {
        respond({.status = status, .body = api_error_body(message)}, false);
    }

    void respond(ControlResponse r, bool keep_alive) {
        if (sh_->stopped || !socket_.is_open()) return;
        std::string h =
            "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(reason_phrase(r.status)) + "\r\n";
        h += "Server: toast-client\r\nContent-Type: " + r.content_type + "\r\nCache-Control: no-store\r\n";
        if (!r.allow.empty()) h += "Allow: " + r.allow + "\r\n";
        if (r.event_stream) {
            // The stream ends when the connection does; no length, no keep-alive.
            h += "Connection: close\r\n\r\n";
            stream_ = true;
            keep_alive_ = false;
            sh_->streams.insert(this);
            watch_close();
        } else {
            keep_alive_ = keep_alive;
            h += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
            h += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
        }
        queue_.push_back(h + r.body);
        if (!writing_) write_next();
    }

    void write_next() {
        if (queue_.empty()) {
            writing_ = false;
            if (stream_) return;
            if (keep_alive_) {
                do_read();
            } else {
                boost::system::error_code ec;
                socket_.shutdown(tcp::socket::shutdown_send, ec);
                close();
            }
            return;
        }
        writing_ = true;
        current_ = std::move(queue_.front());
        queue_.pop_front();
        asio::async_write(socket_, asio::buffer(current_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) {
                                  self->writing_ = false;
                                  self->close();
                                  return;
                              }
                              self->write_next();
                          });
    }

    std::optional<http::request_parser<http::string_body>> parser_;
    std::deque<std::string> queue_;
    std::string current_;
    std::array<char, 512> drain_{};
    bool writing_ = false;
    bool keep_alive_ = false;
    bool stream_ = false;
};

void do_accept(const std::shared_ptr<detail::ControlServerShared>& sh) {
    sh->acceptor.async_accept([sh](beast::error_code ec, tcp::socket socket) {
        if (sh->stopped) return;
        if (!ec) {
            bool reject = sh->connections.size() >= sh->config.max_connections;
            std::make_shared<Connection>(sh, std::move(socket))->start(reject);
        }
        do_accept(sh);
    });
}

}  // namespace

ControlServer::ControlServer(asio::io_context& io, ControlServerConfig config, Handler handler)
    : shared_(std::make_shared<detail::ControlServerShared>(io, std::move(config), std::move(handler))) {}

ControlServer::~ControlServer() {
    stop();
}

void ControlServer::start() {
    auto& sh = *shared_;
    boost::system::error_code ec;
    auto address = asio::ip::make_address(sh.config.listen.host, ec);
    if (ec) throw std::runtime_error("control API address '" + sh.config.listen.host + "': " + ec.message());
    if (auto failed = sh.listen(tcp::endpoint(address, sh.config.listen.port)))
        throw std::runtime_error("cannot listen on " + sh.config.listen.to_string() + ": " +
                                 failed.message());
    do_accept(shared_);
}

std::uint16_t ControlServer::port() const {
    return shared_->port;
}

void ControlServer::publish(const std::string& event, const std::string& data) {
    auto text = sse_event(event, data);
    // push_event may close (and so unregister) a stream: iterate over a copy.
    auto streams = shared_->streams;
    for (auto* c : streams)
        c->push_event(text);
}

std::size_t ControlServer::streams() const {
    return shared_->streams.size();
}

void ControlServer::stop() {
    shared_->stop();
}

}  // namespace toast::client
