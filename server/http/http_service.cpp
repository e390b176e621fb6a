// The service: one io_context per thread (like nginx's worker processes, each running its own event loop),
// connections handed out round-robin by the acceptors, and a drain that spans all of them. A connection stays
// on the context that accepted it, so its handlers never run concurrently and need no strand.
#include "server/http/http_service.hpp"

#include <csignal>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/http/http_session.hpp"
#include "server/http/server_shared.hpp"
#include "server/http/tls_context.hpp"

namespace toast::server {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// After the event loops stop, store reads still running post to them; they are interrupted and waited for
// this long at most.
constexpr auto kOutstandingReadWait = std::chrono::seconds(2);

}  // namespace

struct HttpService::Impl : std::enable_shared_from_this<HttpService::Impl> {
    using Guard = asio::executor_work_guard<asio::io_context::executor_type>;

    struct Listener {
        explicit Listener(asio::io_context& ioc) : acceptor(ioc) {}
        tcp::acceptor acceptor;
        bool admin = false;
        std::uint16_t port = 0;
    };

    Impl(const ServerConfig& config, TitleStore& store, DiskControl& disks, MetricsRegistry& metrics,
         TierClient* tier)
        : shared(config, store, disks, metrics, tier) {
        // Concurrency hint 1: each context is run by exactly one thread, which lets asio skip cross-thread
        // wake-ups inside a loop (store completions still post to it safely from other threads).
        for (unsigned i = 0; i < config.io_threads; ++i) {
            contexts.push_back(std::make_unique<asio::io_context>(1));
            guards.emplace_back(contexts.back()->get_executor());
        }
        drain_timer.emplace(control());
    }

    asio::io_context& control() { return *contexts.front(); }

    // Every I/O object goes before its io_context; then the contexts destroy the handlers they still hold
    // (and the sessions those keep alive) while `shared` still exists.
    void teardown() {
        signals.reset();
        drain_timer.reset();
        listeners.clear();
        guards.clear();
        contexts.clear();
    }

    void bind(Listener& l, const Endpoint& ep) {
        boost::system::error_code ec;
        auto address = asio::ip::make_address(ep.host, ec);
        if (ec) {
            tcp::resolver resolver(control());
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
        auto& target = *contexts[next_context++ % contexts.size()];
        l.acceptor.async_accept(
            target, [self = shared_from_this(), &l](boost::system::error_code ec, tcp::socket socket) {
                self->on_accept(l, ec, std::move(socket));
            });
    }

    void on_accept(Listener& l, boost::system::error_code ec, tcp::socket socket) {
        if (shared.draining.load() || !l.acceptor.is_open()) return;
        if (ec) {
            if (ec == asio::error::operation_aborted) return;
            // Out of descriptors and the like: back off briefly instead of spinning.
            spdlog::warn("accept failed: {}", ec.message());
            auto timer = std::make_shared<asio::steady_timer>(control(), std::chrono::milliseconds(50));
            timer->async_wait(
                [self = shared_from_this(), &l, timer](boost::system::error_code) { self->do_accept(l); });
            return;
        }
        bool reject = false;
        if (shared.connections.fetch_add(1) >= shared.settings()->max_connections) {
            shared.connections.fetch_sub(1);
            shared.metrics.rejected_connections.inc();
            reject = true;
        } else {
            shared.metrics.open_connections.add(1);
        }
        // start() runs on the session's own context, like everything the session does later.
        auto session = std::make_shared<HttpSession>(shared, std::move(socket), l.admin, !reject, reject);
        asio::post(session->executor(), [session] { session->start(); });
        do_accept(l);
    }

    // Runs on the control context.
    void begin_drain(std::chrono::milliseconds limit) {
        if (shared.draining.exchange(true)) return;
        spdlog::info("draining: no new connections, finishing in-flight responses (at most {} ms)",
                     limit.count());
        for (auto& l : listeners) {
            boost::system::error_code e;
            l->acceptor.close(e);
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
            self->stop_all();
        });
    }

    void finish() {
        if (drain_timer) drain_timer->cancel();
        if (signals) {
            boost::system::error_code ec;
            signals->cancel(ec);
        }
        stop_all();
    }

    void stop_all() {
        for (auto& c : contexts)
            c->stop();
    }

    void run(bool handle_signals, std::function<void()> hangup) {
        on_hangup = std::move(hangup);
        if (handle_signals) {
            signals.emplace(control(), SIGINT, SIGTERM);
            if (on_hangup) signals->add(SIGHUP);
            wait_signal();
        }
        for (auto& l : listeners)
            do_accept(*l);
        std::vector<std::thread> threads;
        for (std::size_t i = 1; i < contexts.size(); ++i)
            threads.emplace_back([c = contexts[i].get()] { c->run(); });
        control().run();
        for (auto& t : threads)
            t.join();
        // Store reads still running will post to the stopped contexts, which must outlive them: stop their
        // waiting (emulated timing, injected latency) and wait for them to return.
        if (shared.outstanding_reads.load() > 0) shared.store.interrupt_reads();
        const auto give_up = std::chrono::steady_clock::now() + kOutstandingReadWait;
        while (shared.outstanding_reads.load() > 0 && std::chrono::steady_clock::now() < give_up)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (shared.outstanding_reads.load() > 0) {
            spdlog::warn("{} store reads still outstanding at exit", shared.outstanding_reads.load());
        }
    }

    void wait_signal() {
        signals->async_wait([self = shared_from_this()](boost::system::error_code ec, int signo) {
            if (ec) return;
            if (signo == SIGHUP) {
                if (!self->shared.draining.load()) self->on_hangup();
                self->wait_signal();
                return;
            }
            if (self->shared.draining.load()) {
                spdlog::warn("signal {} during drain: stopping now", signo);
                self->stop_all();
                return;
            }
            spdlog::info("signal {}: shutting down", signo);
            self->begin_drain(std::chrono::seconds(5));
            self->wait_signal();
        });
    }

    ServerShared shared;
    std::vector<std::unique_ptr<asio::io_context>> contexts;
    std::vector<Guard> guards;
    std::size_t next_context = 0;  // used on the control context only
    std::optional<asio::steady_timer> drain_timer;
    std::optional<asio::signal_set> signals;
    std::function<void()> on_hangup;
    std::vector<std::unique_ptr<Listener>> listeners;
};

HttpService::HttpService(const ServerConfig& config, TitleStore& store, DiskControl& disks,
                         MetricsRegistry& metrics, TierClient* tier)
    : impl_(std::make_shared<Impl>(config, store, disks, metrics, tier)) {
    std::weak_ptr<Impl> weak = impl_;
    impl_->shared.on_all_closed = [weak] {
        if (auto self = weak.lock()) asio::post(self->control(), [self] { self->finish(); });
    };
    // sendfile(2) to a peer that has gone raises SIGPIPE; we want EPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    if (config.access_log) impl_->shared.set_access_log(std::make_shared<AccessLogFile>(*config.access_log));
    if (config.tls) impl_->shared.set_tls(make_server_tls(*config.tls));
    auto main = std::make_unique<Impl::Listener>(impl_->control());
    impl_->bind(*main, config.listen);
    impl_->listeners.push_back(std::move(main));
    if (config.admin_listen) {
        auto admin = std::make_unique<Impl::Listener>(impl_->control());
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

void HttpService::run(bool handle_signals, std::function<void()> on_hangup) {
    impl_->run(handle_signals, std::move(on_hangup));
}

std::vector<std::string> HttpService::reload(const ServerConfig& config) {
    std::vector<std::string> problems;
    impl_->shared.set_settings(config);
    // A TLS server stays one (tls added or removed needs a restart): only the certificate and key change.
    if (config.tls && impl_->shared.tls()) {
        try {
            impl_->shared.set_tls(make_server_tls(*config.tls));
        } catch (const std::exception& e) {
            problems.push_back(std::string(e.what()) + "; still using the previous certificate");
        }
    }
    auto current = impl_->shared.access_log();
    if (!config.access_log) {
        impl_->shared.set_access_log(nullptr);
    } else if (current && current->path() == *config.access_log) {
        if (auto error = current->reopen()) problems.push_back(*error + "; still writing the previous file");
    } else {
        try {
            impl_->shared.set_access_log(std::make_shared<AccessLogFile>(*config.access_log));
        } catch (const std::exception& e) {
            problems.push_back(std::string(e.what()) +
                               (current ? "; still writing " + current->path().string() : ""));
        }
    }
    return problems;
}

void HttpService::shutdown(std::chrono::milliseconds drain_limit) {
    asio::post(impl_->control(), [impl = impl_, drain_limit] { impl->begin_drain(drain_limit); });
}

}  // namespace toast::server
