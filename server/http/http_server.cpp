#include "server/http/http_server.hpp"

#include <csignal>
#include <ctime>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "server/core/http_date.hpp"
#include "server/http/http_service.hpp"
#include "server/http/http_session.hpp"
#include "server/http/server_shared.hpp"

namespace toast::server {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// ---- shared state -------------------------------------------------------------------------------------

HttpMetrics::HttpMetrics(MetricsRegistry& registry)
    : open_connections(registry.gauge("toast_http_open_connections", "HTTP connections currently open")),
      rejected_connections(registry.counter("toast_http_rejected_connections_total",
                                            "Connections answered 503 because max_connections was reached")),
      response_seconds(registry.histogram("toast_http_response_seconds",
                                          "Time from a parsed request to its last response byte written",
                                          latency_buckets())),
      registry_(registry) {}

void HttpMetrics::count_response(unsigned status) {
    if (status >= by_status_.size()) status = 599;
    auto* c = by_status_[status].load(std::memory_order_acquire);
    if (!c) {
        c = &registry_.counter("toast_http_requests_total", "HTTP responses by status code",
                               {{"status", std::to_string(status)}});
        by_status_[status].store(c, std::memory_order_release);
    }
    c->inc();
}

void HttpMetrics::add_bytes_sent(const std::string& title, std::uint64_t bytes) {
    registry_.counter("toast_http_bytes_sent_total", "Title body bytes sent over HTTP", {{"title", title}})
        .inc(bytes);
}

ServerShared::ServerShared(const ServerConfig& c, TitleStore& s, DiskControl& d, MetricsRegistry& m)
    : config(c), store(s), disks(d), registry(m), metrics(m) {
    limits.max_ranges = c.max_ranges;
    limits.max_multipart_bytes = c.max_multipart_bytes.value();
    limits.admin_on_separate_listener = c.admin_listen.has_value();
}

void ServerShared::register_session(HttpSession* key, std::weak_ptr<HttpSession> session) {
    std::lock_guard lock(mutex_);
    sessions_.emplace(key, std::move(session));
}

void ServerShared::unregister_session(HttpSession* key, bool counted) {
    std::function<void()> done;
    {
        std::lock_guard lock(mutex_);
        sessions_.erase(key);
        if (counted) {
            connections.fetch_sub(1);
            metrics.open_connections.add(-1);
        }
        if (sessions_.empty() && draining.load()) done = on_all_closed;
    }
    if (done) done();
}

std::vector<std::shared_ptr<HttpSession>> ServerShared::live_sessions() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<HttpSession>> out;
    for (auto& [key, weak] : sessions_) {
        if (auto s = weak.lock()) out.push_back(std::move(s));
    }
    return out;
}

std::string_view cached_http_date() {
    thread_local std::time_t cached_second = -1;
    thread_local std::string cached;
    auto now = std::chrono::system_clock::now();
    auto second = std::chrono::system_clock::to_time_t(now);
    if (second != cached_second) {
        cached_second = second;
        cached = format_http_date(now);
    }
    return cached;
}

// ---- the service --------------------------------------------------------------------------------------

struct HttpService::Impl : std::enable_shared_from_this<HttpService::Impl> {
    struct Listener {
        explicit Listener(asio::io_context& ioc) : acceptor(asio::make_strand(ioc)) {}
        tcp::acceptor acceptor;
        bool admin = false;
        std::uint16_t port = 0;
    };

    Impl(const ServerConfig& config, TitleStore& store, DiskControl& disks, MetricsRegistry& metrics)
        : ioc(std::in_place, static_cast<int>(config.io_threads)),
          shared(config, store, disks, metrics),
          control(asio::make_strand(*ioc)),
          drain_timer(std::in_place, *control) {}

    // Every I/O object and executor goes before the io_context; then the context destroys the handlers it
    // still holds (and the sessions they keep alive) while `shared` still exists.
    void teardown() {
        signals.reset();
        drain_timer.reset();
        listeners.clear();
        control.reset();
        ioc.reset();
    }

    void bind(Listener& l, const Endpoint& ep) {
        boost::system::error_code ec;
        auto address = asio::ip::make_address(ep.host, ec);
        if (ec) {
            tcp::resolver resolver(*ioc);
            auto results = resolver.resolve(ep.host, std::to_string(ep.port), ec);
            if (ec || results.empty()) {
                throw std::runtime_error("cannot resolve listen address " + ep.to_string() + ": " +
                                         ec.message());
            }
            address = results.begin()->endpoint().address();
        }
        tcp::endpoint endpoint(address, ep.port);
        l.acceptor.open(endpoint.protocol(), ec);
        if (!ec) l.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
        if (!ec) l.acceptor.bind(endpoint, ec);
        if (!ec) l.acceptor.listen(asio::socket_base::max_listen_connections, ec);
        if (ec) throw std::runtime_error("cannot listen on " + ep.to_string() + ": " + ec.message());
        l.port = l.acceptor.local_endpoint().port();
    }

    void do_accept(Listener& l) {
        l.acceptor.async_accept(
            asio::make_strand(*ioc),
            [self = shared_from_this(), &l](boost::system::error_code ec, tcp::socket socket) {
                self->on_accept(l, ec, std::move(socket));
            });
    }

    void on_accept(Listener& l, boost::system::error_code ec, tcp::socket socket) {
        if (shared.draining.load() || !l.acceptor.is_open()) return;
        if (ec) {
            if (ec == asio::error::operation_aborted) return;
            // Out of descriptors and the like: back off briefly instead of spinning.
            spdlog::warn("accept failed: {}", ec.message());
            auto timer = std::make_shared<asio::steady_timer>(l.acceptor.get_executor(),
                                                              std::chrono::milliseconds(50));
            timer->async_wait(
                [self = shared_from_this(), &l, timer](boost::system::error_code) { self->do_accept(l); });
            return;
        }
        bool reject = false;
        if (shared.connections.fetch_add(1) >= shared.config.max_connections) {
            shared.connections.fetch_sub(1);
            shared.metrics.rejected_connections.inc();
            reject = true;
        } else {
            shared.metrics.open_connections.add(1);
        }
        std::make_shared<HttpSession>(shared, std::move(socket), l.admin, !reject, reject)->start();
        do_accept(l);
    }

    void begin_drain(std::chrono::milliseconds limit) {
        if (shared.draining.exchange(true)) return;
        spdlog::info("draining: no new connections, finishing in-flight responses (at most {} ms)",
                     limit.count());
        for (auto& l : listeners) {
            asio::post(l->acceptor.get_executor(), [self = shared_from_this(), lp = l.get()] {
                boost::system::error_code e;
                lp->acceptor.close(e);
            });
        }
        auto sessions = shared.live_sessions();
        if (sessions.empty()) {
            finish();
            return;
        }
        for (auto& s : sessions)
            s->drain();
        drain_timer->expires_after(limit);
        drain_timer->async_wait([self = shared_from_this()](boost::system::error_code e) {
            if (e) return;
            spdlog::warn("drain limit reached with {} connections open; stopping",
                         self->shared.live_sessions().size());
            self->ioc->stop();
        });
    }

    void finish() {
        if (drain_timer) drain_timer->cancel();
        if (signals) {
            boost::system::error_code ec;
            signals->cancel(ec);
        }
        ioc->stop();
    }

    void run(bool handle_signals) {
        if (handle_signals) {
            signals.emplace(*control, SIGINT, SIGTERM);
            wait_signal();
        }
        for (auto& l : listeners)
            do_accept(*l);
        std::vector<std::thread> threads;
        for (unsigned i = 1; i < shared.config.io_threads; ++i)
            threads.emplace_back([this] { ioc->run(); });
        ioc->run();
        for (auto& t : threads)
            t.join();
        // Store reads still running will post to the stopped context; wait for them to return (bounded).
        for (int i = 0; i < 10'000 && shared.outstanding_reads.load() > 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (shared.outstanding_reads.load() > 0) {
            spdlog::warn("{} store reads still outstanding at exit", shared.outstanding_reads.load());
        }
    }

    void wait_signal() {
        signals->async_wait([self = shared_from_this()](boost::system::error_code ec, int signo) {
            if (ec) return;
            if (self->shared.draining.load()) {
                spdlog::warn("signal {} during drain: stopping now", signo);
                self->ioc->stop();
                return;
            }
            spdlog::info("signal {}: shutting down", signo);
            self->begin_drain(std::chrono::seconds(5));
            self->wait_signal();
        });
    }

    std::optional<asio::io_context> ioc;
    ServerShared shared;
    std::optional<asio::strand<asio::io_context::executor_type>> control;
    std::optional<asio::steady_timer> drain_timer;
    std::optional<asio::signal_set> signals;
    std::vector<std::unique_ptr<Listener>> listeners;
};

HttpService::HttpService(const ServerConfig& config, TitleStore& store, DiskControl& disks,
                         MetricsRegistry& metrics)
    : impl_(std::make_shared<Impl>(config, store, disks, metrics)) {
    std::weak_ptr<Impl> weak = impl_;
    impl_->shared.on_all_closed = [weak] {
        if (auto self = weak.lock()) asio::post(*self->control, [self] { self->finish(); });
    };
    // sendfile(2) to a peer that has gone raises SIGPIPE; we want EPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    auto main = std::make_unique<Impl::Listener>(*impl_->ioc);
    impl_->bind(*main, config.listen);
    impl_->listeners.push_back(std::move(main));
    if (config.admin_listen) {
        auto admin = std::make_unique<Impl::Listener>(*impl_->ioc);
        admin->admin = true;
        impl_->bind(*admin, *config.admin_listen);
        impl_->listeners.push_back(std::move(admin));
    }
}

HttpService::~HttpService() {
    impl_->teardown();
}

std::uint16_t HttpService::port() const {
    return impl_->listeners.front()->port;
}

std::optional<std::uint16_t> HttpService::admin_port() const {
    if (impl_->listeners.size() < 2) return std::nullopt;
    return impl_->listeners[1]->port;
}

void HttpService::run(bool handle_signals) {
    impl_->run(handle_signals);
}

void HttpService::shutdown(std::chrono::milliseconds drain_limit) {
    asio::post(*impl_->control, [impl = impl_, drain_limit] { impl->begin_drain(drain_limit); });
}

int run_http_server(const ServerConfig& config, TitleStore& store, DiskControl& disks,
                    MetricsRegistry& metrics) {
    HttpService service(config, store, disks, metrics);
    spdlog::info(
        "serving HTTP on {}:{}{}", config.listen.host, service.port(),
        service.admin_port() ? " (admin on port " + std::to_string(*service.admin_port()) + ")" : "");
    service.run(true);
    spdlog::info("HTTP server stopped");
    return 0;
}

}  // namespace toast::server
