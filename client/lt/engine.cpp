#include "client/lt/engine.hpp"

#include <csignal>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include "client/lt/http_stream.hpp"
#include "client/lt/server_access.hpp"
#include "client/lt/session_factory.hpp"
#include "client/lt/stream_session.hpp"
#include "client/lt/telemetry_sender.hpp"

namespace asio = boost::asio;

namespace toast::client {

namespace {

SessionConfig session_config(const ClientOptions& o) {
    SessionConfig sc;
    sc.interface = o.listen_host;
    sc.listen_port = o.listen_port;
    sc.ssl_listen_port = ssl_listen_port_of(o);
    sc.enable_upnp = o.upnp;
    sc.enable_natpmp = o.natpmp;
    sc.upload_limit = o.upload_limit;
    sc.download_limit = o.download_limit;
    sc.choker = choker_kind_of(o.choker);
    sc.enable_dht = o.enable_dht;
    sc.unchoke_slots = unchoke_slots_of(o);
    sc.max_connections = o.max_connections;
    sc.disk_io = o.disk_io;
    return sc;
}

// The final QoE report gets this long to reach the operator before the client exits.
constexpr auto kTelemetryFlush = std::chrono::seconds(2);
// libtorrent gets this long to say goodbye (trackers, peers) once the title is done: its trackers get a
// second (stop_tracker_timeout).
constexpr auto kSessionClose = std::chrono::milliseconds(1500);

}  // namespace

ChokerKind choker_kind_of(ChokerOption c) {
    switch (c) {
        case ChokerOption::seed:
            return ChokerKind::seed;
        case ChokerOption::nearest:
            return ChokerKind::nearest;
        case ChokerOption::leader:
            return ChokerKind::leader;
        case ChokerOption::tit_for_tat:
            return ChokerKind::tit_for_tat;
    }
    return ChokerKind::tit_for_tat;
}

ServerAccess server_access_for(const ClientOptions& o) {
    ServerAccess access;
    if (!o.ca_file.empty()) {
        access.tls = make_client_tls(o.ca_file.string());
    } else {
        try {
            access.tls = make_client_tls("");
        } catch (const std::exception& e) {
            // Only https:// servers need it; they then fail, saying why.
            spdlog::warn("{}", e.what());
        }
    }
    if (!o.token.empty()) {
        access.credential = std::make_shared<AccessCredential>(o.token);
    } else if (!o.token_file.empty()) {
        access.credential = std::make_shared<AccessCredential>(read_token_file(o.token_file), o.token_file);
    }
    return access;
}

std::optional<ServerUrl> telemetry_endpoint(const ClientOptions& o, const std::vector<ServerUrl>& servers) {
    if (o.telemetry == "off") return std::nullopt;
    if (!o.telemetry.empty()) {
        auto url = parse_http_url(o.telemetry);
        if (!url)
            throw std::runtime_error("--telemetry '" + o.telemetry + "' is not an http:// or https:// URL");
        return url;
    }
    if (servers.empty()) return std::nullopt;
    auto url = servers.front();
    url.target = "/telemetry";
    url.text = origin_url(url) + url.target;
    return url;
}

class Engine::Impl {
  public:
    // libtorrent runs on io_, the title's own loop (LtThread::shared): one thread for a title, and none of
    // the wake-ups that handing every alert, plan and read from one thread to another costs.
    Impl(ClientOptions options, TitleTorrent torrent, ClientTuning tuning)
        : launched_(std::chrono::steady_clock::now()), tuning_(std::move(tuning)), signals_(io_) {
        session_ = std::make_unique<StreamSession>(
            io_, session_config(options),
            load_peer_credentials(options.passkey, options.ssl_cert, options.ssl_key), LtThread::shared);
        try {
            // Adding the torrent is a synchronous libtorrent call: made from inside io_'s handlers.
            std::exception_ptr failed;
            bool done = false;
            asio::post(io_, [&] {
                try {
                    set_up(std::move(options), std::move(torrent));
                } catch (...) {
                    failed = std::current_exception();
                }
                done = true;
            });
            while (!done)
                io_.run_one();
            if (failed) std::rethrow_exception(failed);
        } catch (...) {
            session_->close(kSessionClose);
            throw;
        }
    }

    void set_up(ClientOptions options, TitleTorrent torrent) {
        const bool every_interface = options.listen_host.empty();
        const bool ssl = ssl_listen_port_of(options).has_value();
        session_->on_session_event([this, every_interface, ssl](const LtEvent& e) {
            if (e.kind != LtEventKind::listen_failed) return;
            // On every interface, one address that cannot be bound (an IPv6 address still being checked
            // for duplicates, say) leaves the others; the box cannot work only when nothing listens.
            auto& s = session_->session();
            if (every_interface && s.listen_port() != 0 && (!ssl || s.ssl_listen_port() != 0)) {
                spdlog::warn("not listening on {} port {}: {} (listening on the other addresses)", e.address,
                             e.port, e.message);
                return;
            }
            spdlog::error("cannot listen on port {}: {}", e.port, e.message);
            title_->fail("cannot listen on port " + std::to_string(e.port) + ": " + e.message);
        });
        auto access = server_access_for(options);
        title_ = std::make_unique<TitleStream>(
            *session_, options, std::move(torrent), tuning_, [this] { on_title_finished(); }, launched_,
            access);
        const auto& servers = title_->server_urls();
        if (access.credential && !servers.empty()) {
            renewer_ = std::make_unique<TokenRenewer>(io_, access, servers.front());
        }
        if (auto endpoint = telemetry_endpoint(options, servers)) {
            telemetry_ = std::make_unique<TelemetrySender>(io_, access, *endpoint);
            title_->report_to(*telemetry_);
        }
    }

    ~Impl() {
        session_->close(kSessionClose);  // done already when run() returned
        title_.reset();
        renewer_.reset();
        telemetry_.reset();
        session_.reset();
    }

    // The title's last report goes out (for a moment at most), then the loop stops.
    void on_title_finished() {
        boost::system::error_code ignored;
        signals_.cancel(ignored);
        if (renewer_) renewer_->stop();
        if (!telemetry_) {
            io_.stop();
            return;
        }
        telemetry_->flush(kTelemetryFlush, [this] {
            const auto& t = telemetry_->stats();
            spdlog::info("telemetry to {}: {} reports sent, {} dropped",
                         redact_token(telemetry_->endpoint().text), t.sent, t.dropped);
            io_.stop();
        });
    }

    EngineResult run(bool handle_signals) {
        if (handle_signals) {
            signals_.add(SIGINT);
            signals_.add(SIGTERM);
            signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
                if (ec) return;
                spdlog::info("signal {}: stopping", sig);
                title_->stop();
            });
        }
        if (renewer_) renewer_->start();
        title_->start();
        io_.run();
        session_->close(kSessionClose);
        return title_->result();
    }

    void stop() {
        asio::post(io_, [this] { title_->stop(); });
    }

    TitleStream& title() { return *title_; }

  private:
    std::chrono::steady_clock::time_point launched_;
    ClientTuning tuning_;
    asio::io_context io_;
    asio::signal_set signals_;
    std::unique_ptr<StreamSession> session_;
    std::unique_ptr<TitleStream> title_;
    std::unique_ptr<TokenRenewer> renewer_;
    std::unique_ptr<TelemetrySender> telemetry_;
};

Engine::Engine(ClientOptions options, TitleTorrent torrent, ClientTuning tuning)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(torrent), std::move(tuning))) {}
Engine::~Engine() = default;
EngineResult Engine::run(bool handle_signals) {
    return impl_->run(handle_signals);
}
void Engine::stop() {
    impl_->stop();
}
std::string Engine::player_url() const {
    return impl_->title().player_url();
}
std::chrono::milliseconds Engine::resume_time() const {
    return impl_->title().resume_time();
}
void Engine::watch_player(std::function<bool()> running) {
    impl_->title().watch_player(std::move(running));
}
void Engine::follow_mpv(const std::filesystem::path& socket) {
    impl_->title().follow_mpv(socket);
}

}  // namespace toast::client
