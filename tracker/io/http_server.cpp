#include "tracker/io/http_server.hpp"

#include <array>
#include <chrono>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tracker/io/asio_address.hpp"

namespace toast::tracker {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// One connection: read a request, answer it, repeat while keep-alive holds. A protocol error gets one
// answer and then the connection is closed, since the stream position can no longer be trusted.
class Session : public std::enable_shared_from_this<Session> {
  public:
    Session(tcp::socket socket, TrackerService& service, std::shared_ptr<HttpServer::Connections> connections)
        : stream_(std::move(socket)), service_(service), connections_(std::move(connections)) {
        beast::error_code ec;
        auto remote = stream_.socket().remote_endpoint(ec);
        if (!ec) source_ = to_ip(remote.address());
        connections_->opened();
    }
    ~Session() { connections_->closed(); }

    void start() { do_read(); }

  private:
    void do_read() {
        parser_.emplace();
        parser_->header_limit(static_cast<std::uint32_t>(service_.config().http.header_limit));
        parser_->body_limit(0);
        stream_.expires_after(service_.config().http.idle_timeout);
        http::async_read(
            stream_, buffer_, *parser_,
            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(beast::error_code ec) {
        if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
            ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
            ec == asio::error::eof) {
            return close();
        }
        if (ec == http::error::header_limit) {
            const int status = header_limit_status();
            return reply_error(status,
                               status == 414 ? "request target too long" : "request header too large");
        }
        if (ec == http::error::body_limit || ec == http::error::unexpected_body) {
            return reply_error(400, "requests to this tracker carry no body");
        }
        if (ec) return reply_error(400, "malformed HTTP request");

        const auto started = std::chrono::steady_clock::now();
        const auto& req = parser_->get();
        HttpAnswer answer = service_.handle_http(req.method_string(), req.target(), source_, started);
        const bool keep_alive = req.keep_alive();
        write(std::move(answer), keep_alive, req.version());
        service_.observe_latency(
            false, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }

    // A request line that alone exceeds the target limit is "URI too long"; otherwise the headers are.
    int header_limit_status() const {
        auto data = buffer_.cdata();
        std::string_view head(static_cast<const char*>(data.data()), data.size());
        auto eol = head.find("\r\n");
        std::size_t line = eol == std::string_view::npos ? head.size() : eol;
        return line > service_.config().http.max_target_length ? 414 : 431;
    }

    void reply_error(int status, const std::string& reason) {
        write(service_.http_error(status, reason), false, 11);
    }

    void write(HttpAnswer answer, bool keep_alive, unsigned version) {
        res_ = {};
        res_.version(version == 10 ? 10 : 11);
        res_.result(static_cast<unsigned>(answer.status));
        if (!answer.reason.empty()) res_.reason(answer.reason);
        res_.set(http::field::server, "toast-tracker");
        res_.set(http::field::content_type, answer.content_type);
        for (const auto& [name, value] : answer.headers)
            res_.set(name, value);
        res_.keep_alive(keep_alive);
        res_.body() = std::move(answer.body);
        res_.prepare_payload();
        close_after_write_ = !keep_alive;
        stream_.expires_after(service_.config().http.idle_timeout);
        http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
            self->service_.count_sent(false, n);
            self->on_write(ec);
        });
    }

    void on_write(beast::error_code ec) {
        if (ec) return close();
        if (close_after_write_) return drain_and_close();
        do_read();
    }

    // Closing a socket that still holds unread request bytes makes the kernel send RST, and the client may
    // then lose the answer we just wrote (typical after a request too large to read). So: stop sending, read
    // and discard what the client still sends for at most a second, then close.
    void drain_and_close() {
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
        if (ec) return close();
        if (!drain_deadline_set_) {
            stream_.expires_after(std::chrono::seconds(1));
            drain_deadline_set_ = true;
        }
        stream_.async_read_some(asio::buffer(scratch_),
                                [self = shared_from_this()](beast::error_code e, std::size_t) {
                                    if (e) return self->close();
                                    self->drain_and_close();
                                });
    }

    void close() {
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
        stream_.socket().close(ec);
    }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::empty_body>> parser_;
    http::response<http::string_body> res_;
    TrackerService& service_;
    std::shared_ptr<HttpServer::Connections> connections_;
    IpAddress source_;
    bool close_after_write_ = false;
    bool drain_deadline_set_ = false;
    std::array<char, 4096> scratch_{};
};

}  // namespace

HttpServer::HttpServer(asio::io_context& ioc, const tcp::endpoint& listen, TrackerService& service)
    : ioc_(ioc),
      acceptor_(ioc),
      retry_timer_(ioc),
      service_(service),
      connections_(std::make_shared<Connections>(Connections{0, &service.http_connections()})) {
    acceptor_.open(listen.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    if (listen.address().is_v6()) acceptor_.set_option(asio::ip::v6_only(false));
    acceptor_.bind(listen);
    acceptor_.listen(asio::socket_base::max_listen_connections);
}

void HttpServer::start() {
    do_accept();
}

void HttpServer::stop() {
    stopped_ = true;
    beast::error_code ec;
    acceptor_.close(ec);
    retry_timer_.cancel();
}

void HttpServer::do_accept() {
    acceptor_.async_accept(ioc_, [this](beast::error_code ec, tcp::socket socket) {
        if (stopped_ || ec == asio::error::operation_aborted) return;
        if (ec) {
            // Typically out of file descriptors: pause instead of spinning on the same error.
            spdlog::warn("accept failed: {}", ec.message());
            retry_timer_.expires_after(std::chrono::milliseconds(100));
            retry_timer_.async_wait([this](beast::error_code wait_ec) {
                if (!wait_ec && !stopped_) do_accept();
            });
            return;
        }
        if (connections_->open >= service_.config().http.max_connections) {
            service_.count_http_connection_refused();
            beast::error_code ignored;
            socket.close(ignored);
        } else {
            socket.set_option(tcp::no_delay(true), ec);
            std::make_shared<Session>(std::move(socket), service_, connections_)->start();
        }
        do_accept();
    });
}

}  // namespace toast::tracker
