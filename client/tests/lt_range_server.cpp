#include "lt_range_server.hpp"

#include <optional>
#include <regex>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace toast::client::testing {

struct RangeServer::State {
    asio::io_context io;
    std::optional<tcp::acceptor> acceptor;
    std::vector<std::weak_ptr<tcp::socket>> sockets;
};

namespace {

struct Session : std::enable_shared_from_this<Session> {
    Session(std::shared_ptr<tcp::socket> s, RangeServer& srv, const std::string& path,
            const std::vector<char>& d)
        : socket(std::move(s)), timer(socket->get_executor()), server(srv), path_(path), data(d) {}
    std::shared_ptr<tcp::socket> socket;
    asio::steady_timer timer;
    RangeServer& server;
    const std::string& path_;
    const std::vector<char>& data;
    beast::flat_buffer buffer;
    http::request<http::empty_body> request;
    http::response<http::vector_body<char>> response;

    void read() {
        request = {};
        http::async_read(*socket, buffer, request,
                         [self = shared_from_this()](beast::error_code ec, std::size_t) {
                             if (ec) return;
                             self->answer();
                         });
    }

    void answer() {
        ++server.requests;
        response = {};
        response.version(11);
        response.keep_alive(request.keep_alive());
        std::smatch m;
        std::string range(request[http::field::range]);
        server.record_deadline(range, std::string(request["Toast-Deadline"]));
        const auto refused = server.refuse_offset.load();
        const bool direct = request["Toast-Direct"] == "1";
        if (direct) ++server.direct_requests;
        if (server.load_ms.load() >= 0)
            response.set("Toast-Load", std::to_string(server.load_ms.load()) + ".0");
        if (direct && server.not_holder.load()) {
            response.result(http::status::temporary_redirect);
            response.set(http::field::location, "http://127.0.0.1:1" + path_);
        } else if (server.fail_first.fetch_sub(1) > 0) {
            response.result(http::status::internal_server_error);
        } else if (server.busy_first.fetch_sub(1) > 0) {
            response.result(http::status::service_unavailable);
            response.set(http::field::retry_after, "1");
        } else if (refused >= 0 && range.rfind("bytes=" + std::to_string(refused) + "-", 0) == 0) {
            response.result(http::status::service_unavailable);
            if (const auto last = server.refuse_last.load(); last >= 0)
                response.set("Toast-Unavailable",
                             "bytes " + std::to_string(refused) + "-" + std::to_string(last));
        } else if (std::string(request.target()) != path_) {
            response.result(http::status::not_found);
        } else if (std::regex_match(range, m, std::regex("bytes=(\\d+)-(\\d+)"))) {
            auto first = std::stoull(m[1]), last = std::stoull(m[2]);
            if (first > last || last >= data.size()) {
                response.result(http::status::range_not_satisfiable);
            } else {
                response.result(http::status::partial_content);
                response.body().assign(data.begin() + static_cast<long>(first),
                                       data.begin() + static_cast<long>(last) + 1);
                if (server.corrupt_first.fetch_sub(1) > 0)
                    response.body()[response.body().size() / 2] ^= 0x5a;
                if (server.late_first.fetch_sub(1) > 0) response.set("Toast-Late", "250");
                response.set(http::field::content_range, "bytes " + std::to_string(first) + "-" +
                                                             std::to_string(last) + "/" +
                                                             std::to_string(data.size()));
            }
        } else {
            response.result(http::status::ok);
            response.body() = data;
        }
        server.body_bytes += response.body().size();
        response.prepare_payload();
        timer.expires_after(std::chrono::milliseconds(server.delay_ms.load()));
        timer.async_wait([self = shared_from_this()](beast::error_code) {
            http::async_write(*self->socket, self->response, [self](beast::error_code ec, std::size_t) {
                if (ec || !self->response.keep_alive()) return;
                self->read();
            });
        });
    }
};

// The handler holds the state by plain pointer: a shared_ptr would keep the io_context alive from inside its
// own queue after stop() (a cycle LeakSanitizer reports). stop() joins the io thread before it drops the
// state.
void accept(RangeServer::State* state, RangeServer& server, const std::string& path,
            const std::vector<char>& data) {
    state->acceptor->async_accept([state, &server, &path, &data](beast::error_code ec, tcp::socket socket) {
        if (ec) return;
        ++server.connections;
        auto s = std::make_shared<tcp::socket>(std::move(socket));
        state->sockets.push_back(s);
        std::make_shared<Session>(s, server, path, data)->read();
        accept(state, server, path, data);
    });
}

}  // namespace

RangeServer::RangeServer(std::string path, std::vector<char> data, std::uint16_t port)
    : path_(std::move(path)), data_(std::move(data)), port_(port) {
    start();
}

RangeServer::~RangeServer() {
    stop();
}

void RangeServer::start() {
    if (state_) return;
    state_ = std::make_shared<State>();
    state_->acceptor.emplace(state_->io);
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port_);
    state_->acceptor->open(ep.protocol());
    state_->acceptor->set_option(tcp::acceptor::reuse_address(true));
    state_->acceptor->bind(ep);
    state_->acceptor->listen();
    port_ = state_->acceptor->local_endpoint().port();
    accept(state_.get(), *this, path_, data_);
    thread_ = std::thread([state = state_] { state->io.run(); });
}

void RangeServer::stop() {
    if (!state_) return;
    asio::post(state_->io, [state = state_] {
        beast::error_code ignored;
        state->acceptor->close(ignored);
        for (auto& w : state->sockets) {
            if (auto s = w.lock()) {
                s->shutdown(tcp::socket::shutdown_both, ignored);
                s->close(ignored);
            }
        }
        state->io.stop();
    });
    thread_.join();
    state_.reset();
}

std::vector<std::pair<std::string, std::string>> RangeServer::deadlines() const {
    std::lock_guard lock(seen_mutex_);
    return deadlines_;
}

void RangeServer::record_deadline(std::string range, std::string deadline) {
    std::lock_guard lock(seen_mutex_);
    deadlines_.emplace_back(std::move(range), std::move(deadline));
}

}  // namespace toast::client::testing
