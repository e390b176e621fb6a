#include "tracker/io/http_server.hpp"

#include <array>
#include <chrono>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tracker/core/passkeys.hpp"
#include "tracker/io/asio_address.hpp"
#include "tracker/io/http_request_rules.hpp"

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
        if (ec) {
            auto data = buffer_.cdata();
            auto refusal =
                read_error_refusal(ec, parser_->get().target(),
                                   std::string_view(static_cast<const char*>(data.data()), data.size()),
                                   service_.config().http.max_target_length);
            if (!refusal) return close();
            started_ = std::chrono::steady_clock::now();
            received_ = std::chrono::system_clock::now();
            request_line_.clear();
            return reply_error(*refusal);
        }
        const auto& req = parser_->get();
        const auto started = std::chrono::steady_clock::now();
        started_ = started;
        received_ = std::chrono::system_clock::now();
        if (service_.access_log()) remember_request(req);
        if (auto refusal = check_request_head(req.base())) return reply_error(*refusal);

        HttpAnswer answer = service_.handle_http(req.method_string(), req.target(), source_, started);
        const bool keep_alive = req.keep_alive();
        write(std::move(answer), keep_alive, req.version());
        service_.observe_latency(
            false, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }

    void reply_error(const HttpRefusal& refusal) {
        linger_ = true;  // the request may not have been read to its end
        write(service_.http_error(refusal), false, 11);
    }

    void remember_request(const http::request<http::empty_body>& req) {
        request_line_.assign(req.method_string());
        request_line_ += ' ';
        request_line_ += redact_passkey(req.target());
        request_line_ += req.version() == 10 ? " HTTP/1.0" : " HTTP/1.1";
        user_agent_.assign(req[http::field::user_agent]);
        referer_.assign(req[http::field::referer]);
    }

    void log_access() {
        auto* log = service_.access_log();
        if (!log) return;
        const auto peer = source_.to_string();
        log->write(
            format_access_log(AccessLogEntry{.peer = peer,
                                             .received = received_,
                                             .request_line = request_line_,
                                             .status = res_.result_int(),
                                             .body_bytes = res_.body().size(),
                                             .referer = referer_,
                                             .user_agent = user_agent_,
                                             .duration = std::chrono::steady_clock::now() - started_}));
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
            self->log_access();
            self->on_write(ec);
        });
    }

    void on_write(beast::error_code ec) {
        if (ec) return close();
        if (!close_after_write_) return do_read();
        // Like nginx's lingering_close "on": linger only when the client may still be sending, that is after
        // a refused request or when more bytes are already here. A complete "Connection: close" request with
        // nothing behind it (what a BitTorrent client sends) is closed at once, which spares a wake-up and
        // a read per announce.
        beast::error_code avail_ec;
        const auto pending = stream_.socket().available(avail_ec);
        if (linger_ || buffer_.size() > 0 || pending > 0 || avail_ec) return drain_and_close();
        close();
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
    std::chrono::steady_clock::time_point started_;
    std::chrono::system_clock::time_point received_;
    std::string request_line_;  // for the access log, kept only when there is one
    std::string user_agent_;
    std::string referer_;
    bool close_after_write_ = false;
    bool linger_ = false;
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
