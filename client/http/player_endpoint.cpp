#include "client/http/player_endpoint.hpp"

#include <set>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include "client/http/local_server.hpp"
#include "client/http/player_request.hpp"
#include "toast/common/beast_request_head.hpp"
#include "toast/common/http_status.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace toast::client {

namespace {

std::chrono::milliseconds ms_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t);
}

class Session;

}  // namespace

struct detail::PlayerEndpointShared : LocalServerState<Session> {
    PlayerEndpointShared(asio::io_context& io_, MediaSource& source_, PlayerEndpointConfig config_)
        : LocalServerState(io_), source(source_), config(std::move(config_)) {}
    MediaSource& source;
    PlayerEndpointConfig config;
    std::string path;
    bool first_get_seen = false;
    PlayerEndpointStats stats;
    std::set<Session*> waiting;  // connections waiting for bytes
};

namespace {

// One connection: read a request, answer it (waiting for bytes when needed), then the next one.
class Session : public LocalConnection<detail::PlayerEndpointShared, Session> {
  public:
    using LocalConnection::LocalConnection;
    ~Session() { sh_->waiting.erase(this); }

    // Open, and neither waiting for the swarm nor making progress for stalled_after: its slot may go to a
    // newcomer.
    bool stalled(Clock::time_point now) const {
        return open_ && !waiting_ && now - last_progress_ >= sh_->config.stalled_after;
    }
    bool open() const { return open_; }
    Clock::time_point last_progress() const { return last_progress_; }

    void start(bool reject) {
        boost::system::error_code ec;
        socket_.set_option(tcp::no_delay(true), ec);
        if (sh_->config.send_buffer > 0)
            socket_.set_option(asio::socket_base::send_buffer_size(sh_->config.send_buffer), ec);
        if (reject) {
            keep_alive_ = false;
            write_error(503, "too many connections to this player endpoint");
            return;
        }
        do_read();
    }

    void close() {
        open_ = false;
        timer_.cancel();
        close_socket(socket_);
    }

    // Bytes arrived: a waiting read looks again now.
    void wake() { timer_.cancel(); }

  private:
    void do_read() {
        parser_.emplace();
        parser_->header_limit(sh_->config.header_limit);
        arm_idle_timer();
        // The head only: a body is never read (the request is answered and the connection closed).
        http::async_read_header(
            socket_, buffer_, *parser_,
            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void arm_idle_timer() {
        timer_.expires_after(sh_->config.idle_timeout);
        timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
            if (ec != asio::error::operation_aborted && self->timer_.expiry() <= Clock::now()) self->close();
        });
    }

    void on_read(beast::error_code ec) {
        if (read_ended(ec)) return;
        keep_alive_ = false;
        if (ec == http::error::header_limit) {
            write_error(431,
                        "request header larger than " + std::to_string(sh_->config.header_limit) + " bytes");
            return;
        }
        if (ec) {
            write_error(400, "malformed request: " + ec.message());
            return;
        }
        ++sh_->stats.requests;
        const auto& req = parser_->get();
        arrived_ = Clock::now();
        last_progress_ = arrived_;
        // A body left unread would be taken for the next request.
        keep_alive_ = req.keep_alive() && parser_->is_done();
        if (auto refused = refuse_request_head(request_head_of(req),
                                               EndpointIdentity{sh_->config.listen.host, sh_->port})) {
            keep_alive_ = false;
            spdlog::debug("player: refused ({}): {}", refused->status, refused->reason);
            write_error(refused->status, refused->reason);
            return;
        }
        PlayerRequest pr{req.method_string(), req.target(), req[http::field::range]};
        response_ = decide_player_response(pr, sh_->path, sh_->source.size().value());
        spdlog::debug("player: {} {} range '{}' -> {}", std::string_view(req.method_string()),
                      std::string_view(req.target()), std::string_view(req[http::field::range]),
                      response_.status);
        if (!response_.body_from_title()) {
            write_error(response_.status, response_.reason, response_.content_range);
            return;
        }
        pos_ = response_.first;
        remaining_ = response_.head ? 0 : response_.length;
        header_sent_ = false;
        waiting_ = false;
        reported_ = false;
        seek_request_ = false;
        first_request_ = false;
        if (!response_.head && response_.length > 0 && !sh_->first_get_seen) {
            sh_->first_get_seen = true;
            first_request_ = true;
        }
        pump();
    }

    std::string header_text() const {
        std::string h = "HTTP/1.1 " + std::to_string(response_.status) + " " +
                        std::string(reason_phrase(response_.status)) + "\r\n";
        h += "Server: toast-client\r\n";
        h += "Content-Type: " + sh_->source.content_type() + "\r\n";
        h += "Content-Length: " + std::to_string(response_.length) + "\r\n";
        h += "Accept-Ranges: bytes\r\n";
        if (!response_.content_range.empty()) h += "Content-Range: " + response_.content_range + "\r\n";
        h += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
        return h;
    }

    // Reports a read to the source; the first one of a request decides whether the request is a seek.
    void report_read(std::uint64_t length) {
        auto kind = sh_->source.on_player_read(ByteOffset(pos_), Bytes(length), reported_);
        if (reported_) return;
        reported_ = true;
        seek_request_ = kind == ReadKind::seek;
    }

    // Sends what is present from pos_, or waits for it.
    void pump() {
        if (sh_->stopped) return;
        if (remaining_ == 0) {
            if (!header_sent_) {
                header_ = header_text();
                header_sent_ = true;
                send({}, 0);
                return;
            }
            finish_response();
            return;
        }
        auto want = std::min<std::uint64_t>(sh_->config.chunk_size, remaining_);
        auto n = sh_->source.available(ByteOffset(pos_), Bytes(want)).value();
        n = std::min(n, want);
        if (n == 0) {
            if (!waiting_) {
                waiting_ = true;
                wait_deadline_ = Clock::now() + sh_->config.wait_timeout;
                ++sh_->stats.waits;
                report_read(1);
            }
            sh_->waiting.insert(this);
            timer_.expires_at(wait_deadline_);
            timer_.async_wait([self = shared_from_this()](beast::error_code) { self->on_wait(); });
            return;
        }
        waiting_ = false;
        report_read(n);
        chunk_.resize(n);
        std::string error;
        if (!sh_->source.read(ByteOffset(pos_), std::span<char>(chunk_.data(), n), error)) {
            // Never send something else in place of the title's bytes.
            close();
            return;
        }
        if (!header_sent_) {
            header_ = header_text();
            header_sent_ = true;
        }
        if (!measured_this_request_) {
            // The first body byte goes to the socket now.
            measured_this_request_ = true;
            if (first_request_) sh_->stats.first_byte = ms_since(arrived_);
            if (seek_request_) sh_->stats.seek_latencies.push_back(ms_since(arrived_));
        }
        send(std::span<const char>(chunk_.data(), n), n);
    }

    void on_wait() {
        sh_->waiting.erase(this);
        if (sh_->stopped || !socket_.is_open()) return;
        if (Clock::now() < wait_deadline_) {
            pump();
            return;
        }
        ++sh_->stats.wait_timeouts;
        if (header_sent_) {
            close();  // mid-body: the only honest answer left is a short response
            return;
        }
        keep_alive_ = false;
        write_error(503,
                    "byte " + std::to_string(pos_) + " did not arrive within " +
                        std::to_string(sh_->config.wait_timeout.count()) + " ms",
                    {}, true);
    }

    // Writes the pending header (if any) and `body`.
    void send(std::span<const char> body, std::uint64_t n) {
        std::array<asio::const_buffer, 2> bufs{asio::buffer(header_), asio::buffer(body.data(), body.size())};
        arm_write_timer();
        asio::async_write(socket_, bufs, [self = shared_from_this(), n](beast::error_code ec, std::size_t) {
            self->timer_.cancel();
            self->header_.clear();
            self->on_written(ec, n);
        });
    }

    // A reader that takes nothing for write_timeout loses the connection.
    void arm_write_timer() {
        timer_.expires_after(sh_->config.write_timeout);
        timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
            // A completion that raced the expiry re-armed the timer: this wait is stale.
            if (ec == asio::error::operation_aborted || !self->open_ || self->timer_.expiry() > Clock::now())
                return;
            ++self->sh_->stats.write_timeouts;
            self->close();
        });
    }

    void on_written(beast::error_code ec, std::uint64_t n) {
        if (ec || sh_->stopped) {
            close();
            return;
        }
        last_progress_ = Clock::now();
        if (n > 0) {
            sh_->stats.bytes_sent += n;
            pos_ += n;
            remaining_ -= n;
        }
        pump();
    }

    void finish_response() {
        measured_this_request_ = false;
        if (!keep_alive_) {
            close();
            return;
        }
        do_read();
    }

    void write_error(int status, const std::string& reason, const std::string& content_range = {},
                     bool retry_after = false) {
        if (status >= 400 && status < 500) ++sh_->stats.errors;
        std::string body = reason + "\n";
        header_ = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) + "\r\n";
        header_ += "Server: toast-client\r\nContent-Type: text/plain\r\n";
        header_ += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        if (!content_range.empty()) header_ += "Content-Range: " + content_range + "\r\n";
        if (status == 405) header_ += "Allow: GET, HEAD\r\n";
        if (retry_after) header_ += "Retry-After: 1\r\n";
        header_ += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
        header_ += body;
        arm_write_timer();
        asio::async_write(socket_, asio::buffer(header_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              self->timer_.cancel();
                              self->last_progress_ = Clock::now();
                              self->header_.clear();
                              if (ec || !self->keep_alive_ || self->sh_->stopped) {
                                  self->close();
                                  return;
                              }
                              self->do_read();
                          });
    }

    std::optional<http::request_parser<http::empty_body>> parser_;
    PlayerResponse response_;
    bool keep_alive_ = false;
    std::uint64_t pos_ = 0;
    std::uint64_t remaining_ = 0;
    bool header_sent_ = false;
    std::string header_;
    std::vector<char> chunk_;
    bool waiting_ = false;
    Clock::time_point wait_deadline_{};
    Clock::time_point arrived_{};
    bool reported_ = false;
    bool seek_request_ = false;
    bool first_request_ = false;
    bool measured_this_request_ = false;
    bool open_ = true;
    Clock::time_point last_progress_ = Clock::now();
};

// Room for a newcomer when every slot is taken: the open connection stalled longest gives up its slot.
// False when none is stalled.
bool make_room(detail::PlayerEndpointShared& sh) {
    auto now = Clock::now();
    Session* victim = nullptr;
    for (auto* s : sh.connections) {
        if (s->stalled(now) && (!victim || s->last_progress() < victim->last_progress())) victim = s;
    }
    if (!victim) return false;
    ++sh.stats.evicted;
    spdlog::debug("player: a connection stalled for {} ms gives its slot to a newcomer",
                  ms_since(victim->last_progress()).count());
    victim->close();
    return true;
}

std::size_t open_sessions(const detail::PlayerEndpointShared& sh) {
    std::size_t n = 0;
    for (auto* s : sh.connections)
        n += s->open() ? 1 : 0;
    return n;
}

void do_accept(const std::shared_ptr<detail::PlayerEndpointShared>& sh) {
    sh->acceptor.async_accept([sh](beast::error_code ec, tcp::socket socket) {
        if (sh->stopped || ec == asio::error::operation_aborted) return;
        if (!ec) {
            bool reject = open_sessions(*sh) >= sh->config.max_connections && !make_room(*sh);
            std::make_shared<Session>(sh, std::move(socket))->start(reject);
        }
        do_accept(sh);
    });
}

}  // namespace

PlayerEndpoint::PlayerEndpoint(asio::io_context& io, MediaSource& source, PlayerEndpointConfig config)
    : shared_(std::make_shared<detail::PlayerEndpointShared>(io, source, std::move(config))) {
    shared_->path = title_path(shared_->config.file_name);
}

PlayerEndpoint::~PlayerEndpoint() {
    stop();
}

void PlayerEndpoint::start() {
    auto& sh = *shared_;
    const auto& where = sh.config.listen;
    boost::system::error_code ec;
    auto address = asio::ip::make_address(where.host, ec);
    if (ec)
        throw std::runtime_error("--http " + where.to_string() + ": '" + where.host +
                                 "' is not an IP address");
    if (auto failed = sh.listen(tcp::endpoint(address, where.port)))
        throw std::runtime_error("cannot serve the player on " + where.to_string() + ": " + failed.message());
    do_accept(shared_);
}

std::uint16_t PlayerEndpoint::port() const {
    return shared_->port;
}

std::string PlayerEndpoint::url() const {
    Endpoint e{shared_->config.listen.host, shared_->port};
    return "http://" + e.to_string() + shared_->path;
}

void PlayerEndpoint::on_data_arrived() {
    for (auto* s : shared_->waiting)
        s->wake();
}

void PlayerEndpoint::stop() {
    shared_->stop();
}

const PlayerEndpointStats& PlayerEndpoint::stats() const {
    return shared_->stats;
}

std::size_t PlayerEndpoint::connections() const {
    return shared_->connections.size();
}

}  // namespace toast::client
