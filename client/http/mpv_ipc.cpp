#include "client/http/mpv_ipc.hpp"

#include <string>

#include <spdlog/spdlog.h>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace toast::client {

class MpvIpc::Impl : public std::enable_shared_from_this<MpvIpc::Impl> {
  public:
    Impl(asio::io_context& io, std::filesystem::path path, OnEvent on_event, MpvIpcConfig config)
        : path_(std::move(path)), on_event_(std::move(on_event)), config_(config), socket_(io), timer_(io) {}

    void start() {
        started_ = std::chrono::steady_clock::now();
        try_connect();
    }

    void stop() {
        stopped_ = true;
        timer_.cancel();
        boost::system::error_code ignored;
        socket_.close(ignored);
    }

    bool connected() const { return connected_; }
    std::uint64_t events() const { return events_; }

  private:
    void try_connect() {
        if (stopped_) return;
        boost::system::error_code ec;
        socket_.close(ec);
        socket_.open(local(), ec);
        if (!ec) socket_.connect(local::endpoint(path_.string()), ec);
        if (!ec) {
            connected_ = true;
            spdlog::info("following mpv's position through {}", path_.string());
            commands_ = mpv_observe_commands();
            asio::async_write(socket_, asio::buffer(commands_),
                              [self = shared_from_this()](boost::system::error_code wec, std::size_t) {
                                  if (self->stopped_) return;
                                  if (wec) return self->lost("write: " + wec.message());
                                  self->read();
                              });
            return;
        }
        if (std::chrono::steady_clock::now() - started_ >= config_.give_up) {
            spdlog::warn(
                "mpv's IPC socket {} did not answer within {} ms ({}): the position is estimated from "
                "the player's reads",
                path_.string(), config_.give_up.count(), ec.message());
            return;
        }
        timer_.expires_after(config_.retry);
        timer_.async_wait([self = shared_from_this()](boost::system::error_code tec) {
            if (!tec) self->try_connect();
        });
    }

    void read() {
        asio::async_read_until(
            socket_, asio::dynamic_buffer(buffer_, config_.max_line), '\n',
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                if (self->stopped_) return;
                if (ec) return self->lost(ec == asio::error::eof ? "mpv closed it" : ec.message());
                self->on_line(n);
                self->read();
            });
    }

    void on_line(std::size_t n) {
        std::string line = buffer_.substr(0, n - 1);
        buffer_.erase(0, n);
        auto e = parse_mpv_line(line);
        if (!e) return;
        ++events_;
        // Nothing may escape an asio handler: a failing callback costs this event, not the client.
        try {
            on_event_(*e);
        } catch (const std::exception& x) {
            spdlog::error("mpv IPC: handling an event failed: {}", x.what());
        }
    }

    void lost(const std::string& why) {
        connected_ = false;
        boost::system::error_code ignored;
        socket_.close(ignored);
        spdlog::info("mpv's IPC connection ended ({})", why);
    }

    std::filesystem::path path_;
    OnEvent on_event_;
    MpvIpcConfig config_;
    local::socket socket_;
    asio::steady_timer timer_;
    std::string buffer_;
    std::string commands_;
    std::chrono::steady_clock::time_point started_{};
    bool connected_ = false;
    bool stopped_ = false;
    std::uint64_t events_ = 0;
};

MpvIpc::MpvIpc(asio::io_context& io, std::filesystem::path socket, OnEvent on_event, MpvIpcConfig config)
    : impl_(std::make_shared<Impl>(io, std::move(socket), std::move(on_event), config)) {}

MpvIpc::~MpvIpc() {
    impl_->stop();
}

void MpvIpc::start() {
    impl_->start();
}
void MpvIpc::stop() {
    impl_->stop();
}
bool MpvIpc::connected() const {
    return impl_->connected();
}
std::uint64_t MpvIpc::events() const {
    return impl_->events();
}

}  // namespace toast::client
