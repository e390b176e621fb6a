#include "server/io/tier_client.hpp"

#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "toast/common/endpoint.hpp"

namespace toast::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// "bytes FIRST-LAST/TOTAL" naming exactly [offset, offset + length).
bool content_range_matches(std::string_view value, std::uint64_t offset, std::uint64_t length) {
    const auto expected = "bytes " + std::to_string(offset) + "-" + std::to_string(offset + length - 1) + "/";
    return value.substr(0, expected.size()) == expected;
}

std::optional<double> parse_load(std::string_view value) {
    if (value.empty()) return std::nullopt;
    try {
        std::size_t used = 0;
        const double v = std::stod(std::string(value), &used);
        if (used != value.size() || !(v >= 0)) return std::nullopt;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

struct TierClient::Impl : std::enable_shared_from_this<TierClient::Impl> {
    struct Job {
        RelayRequest request;
        Done done;
        bool status_poll = false;
    };
    struct Connection {
        explicit Connection(asio::io_context& io) : stream(io) {}
        beast::tcp_stream stream;
        beast::flat_buffer buffer;
        bool connected = false;
        bool busy = false;
        http::request<http::empty_body> request;
        std::optional<http::response_parser<http::string_body>> parser;
        Job job;
    };
    struct Peer {
        std::string url;
        Endpoint endpoint;
        std::vector<std::shared_ptr<Connection>> connections;
        std::deque<Job> queue;
    };

    Impl(const TierConfig& tier, MetricsRegistry& metrics)
        : config(tier),
          poll_timer(io),
          work(asio::make_work_guard(io)),
          view(urls_of(tier), tier.self.value(), TierView::Options{}),
          relayed_bytes(metrics.counter("toast_tier_relayed_bytes_total",
                                        "Title bytes this node read from other nodes of its tier")),
          relays_ok(metrics.counter("toast_tier_relays_total", "Relayed reads from other nodes, by result",
                                    Labels{{"result", "ok"}})),
          relays_failed(metrics.counter("toast_tier_relays_total",
                                        "Relayed reads from other nodes, by result",
                                        Labels{{"result", "failed"}})) {}

    static std::vector<std::string> urls_of(const TierConfig& c) {
        std::vector<std::string> out;
        for (const auto& n : c.layout.nodes)
            out.push_back(n.url);
        return out;
    }

    void start() {
        thread = std::thread([self = shared_from_this()] { self->io.run(); });
        asio::post(io, [self = shared_from_this()] { self->poll(); });
    }

    // ---- the view, shared with the store's threads ----
    std::size_t node(std::string_view url) {
        std::lock_guard lock(mutex);
        return view.index_of(url);
    }

    // ---- requests (on the client's thread) ----
    Peer& peer(std::size_t node) {
        while (peers.size() <= node)
            peers.emplace_back();
        auto& p = peers[node];
        if (p.url.empty()) {
            std::lock_guard lock(mutex);
            p.url = view.url(node);
            if (auto ep = parse_endpoint(std::string_view(p.url).substr(7), false)) p.endpoint = *ep;
        }
        return p;
    }

    void submit(std::size_t node, Job job) {
        if (stopped) return fail_now(node, std::move(job), "the tier client is stopped");
        auto& p = peer(node);
        if (p.endpoint.port == 0) return fail_now(node, std::move(job), "bad node url \"" + p.url + "\"");
        p.queue.push_back(std::move(job));
        pump(node);
    }

    void fail_now(std::size_t node, Job job, const std::string& why) {
        if (!job.status_poll) {
            std::lock_guard lock(mutex);
            view.on_failure(node, Clock::now());
        }
        if (job.done) job.done(RelayAnswer{nullptr, why});
    }

    void pump(std::size_t node) {
        auto& p = peers[node];
        while (!p.queue.empty()) {
            std::shared_ptr<Connection> idle;
            for (auto& c : p.connections)
                if (!c->busy) {
                    idle = c;
                    break;
                }
            if (!idle && p.connections.size() < config.relay_connections) {
                idle = std::make_shared<Connection>(io);
                p.connections.push_back(idle);
            }
            if (!idle) return;
            idle->busy = true;
            idle->job = std::move(p.queue.front());
            p.queue.pop_front();
            start(node, idle);
        }
    }

    void start(std::size_t node, const std::shared_ptr<Connection>& c) {
        const auto& p = peers[node];
        const auto& r = c->job.request;
        c->request = {};
        c->request.method(http::verb::get);
        c->request.version(11);
        c->request.target(r.target);
        c->request.set(http::field::host, p.endpoint.to_string());
        c->request.set(http::field::user_agent, "toast-server/tier");
        c->request.keep_alive(true);
        if (!c->job.status_poll) {
            c->request.set(http::field::range, "bytes=" + std::to_string(r.offset) + "-" +
                                                   std::to_string(r.offset + r.length - 1));
            c->request.set("Toast-Direct", "1");
            if (!r.etag.empty()) c->request.set(http::field::if_match, r.etag);
            if (auto auth = authorization(r.title); !auth.empty())
                c->request.set(http::field::authorization, auth);
            if (r.revalidate) c->request.set(http::field::cache_control, "no-cache");
            if (r.deadline) {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(*r.deadline - Clock::now());
                c->request.set("Toast-Deadline",
                               std::to_string(std::clamp<std::int64_t>(left.count(), 0, 600000)));
            }
        }
        c->stream.expires_after(config.relay_timeout);
        if (c->connected) return write(node, c, true);
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(p.endpoint.host, ec);
        if (ec) {
            // A host name: resolved each time a connection opens (rarely: connections are kept alive).
            auto resolver = std::make_shared<tcp::resolver>(io);
            resolver->async_resolve(p.endpoint.host, std::to_string(p.endpoint.port),
                                    [self = shared_from_this(), node, c, resolver](
                                        beast::error_code rec, tcp::resolver::results_type results) {
                                        if (rec) return self->finish(node, c, "resolve: " + rec.message());
                                        c->stream.async_connect(
                                            results,
                                            [self, node, c](beast::error_code cec, const tcp::endpoint&) {
                                                self->on_connect(node, c, cec);
                                            });
                                    });
            return;
        }
        c->stream.async_connect(
            tcp::endpoint(address, p.endpoint.port),
            [self = shared_from_this(), node, c](beast::error_code cec) { self->on_connect(node, c, cec); });
    }

    void on_connect(std::size_t node, const std::shared_ptr<Connection>& c, beast::error_code ec) {
        if (ec) return finish(node, c, "connect: " + ec.message());
        c->connected = true;
        beast::error_code ignored;
        c->stream.socket().set_option(tcp::no_delay(true), ignored);
        write(node, c, false);
    }

    void write(std::size_t node, const std::shared_ptr<Connection>& c, bool reused) {
        http::async_write(c->stream, c->request,
                          [self = shared_from_this(), node, c, reused](beast::error_code ec, std::size_t) {
                              if (ec) return self->on_io_error(node, c, reused, "write: " + ec.message());
                              self->read(node, c, reused);
                          });
    }

    void read(std::size_t node, const std::shared_ptr<Connection>& c, bool reused) {
        c->parser.emplace();
        c->parser->body_limit(c->job.status_poll ? 64 * 1024 : c->job.request.length + 64 * 1024);
        http::async_read(c->stream, c->buffer, *c->parser,
                         [self = shared_from_this(), node, c, reused](beast::error_code ec, std::size_t) {
                             if (ec) return self->on_io_error(node, c, reused, "read: " + ec.message());
                             self->on_response(node, c);
                         });
    }

    // A kept-alive connection the node closed meanwhile fails on first use: not the node's fault, so the
    // request goes again at once on a new connection.
    void on_io_error(std::size_t node, const std::shared_ptr<Connection>& c, bool reused,
                     const std::string& what) {
        const bool nothing = !c->parser || !c->parser->got_some();
        close(c);
        if (reused && nothing && !stopped) {
            c->stream.expires_after(config.relay_timeout);
            start(node, c);
            return;
        }
        finish(node, c, what);
    }

    void on_response(std::size_t node, const std::shared_ptr<Connection>& c) {
        auto response = c->parser->release();
        if (!response.keep_alive()) close(c);
        const auto now = Clock::now();
        if (c->job.status_poll) {
            std::optional<NodeStatus> status;
            if (response.result_int() == 200) {
                const auto json = nlohmann::json::parse(response.body(), nullptr, false);
                status = parse_node_status(json);
            }
            if (!status) return finish(node, c, "GET /tier: status " + std::to_string(response.result_int()));
            {
                std::lock_guard lock(mutex);
                view.on_status(node, *status, now);
            }
            return finish(node, c, {});
        }
        const auto& r = c->job.request;
        std::string problem;
        if (response.result_int() != 206) {
            problem = "status " + std::to_string(response.result_int());
        } else if (!content_range_matches(response[http::field::content_range], r.offset, r.length)) {
            problem = "Content-Range \"" + std::string(response[http::field::content_range]) +
                      "\" is not the range asked";
        } else if (response.body().size() != r.length) {
            problem = "body of " + std::to_string(response.body().size()) + " bytes, asked " +
                      std::to_string(r.length);
        }
        if (!problem.empty()) return finish(node, c, problem);
        {
            std::lock_guard lock(mutex);
            view.on_answer(node, parse_load(response["Toast-Load"]), !response["Toast-Late"].empty(), now);
        }
        relayed_bytes.inc(r.length);
        relays_ok.inc();
        auto data = std::make_shared<const std::string>(std::move(response.body()));
        finish(node, c, {}, std::move(data));
    }

    // Ends the connection's job: `error` empty for success.
    void finish(std::size_t node, const std::shared_ptr<Connection>& c, const std::string& error,
                std::shared_ptr<const std::string> data = nullptr) {
        auto job = std::move(c->job);
        c->job = {};
        c->busy = false;
        if (!error.empty()) {
            close(c);
            if (!job.status_poll) relays_failed.inc();
            std::lock_guard lock(mutex);
            view.on_failure(node, Clock::now());
        }
        if (job.done) {
            try {
                job.done(RelayAnswer{std::move(data), error});
            } catch (const std::exception& e) {
                spdlog::error("tier: a relay completion failed: {}", e.what());
            }
        }
        if (!stopped) pump(node);
    }

    void close(const std::shared_ptr<Connection>& c) {
        beast::error_code ignored;
        c->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        c->stream.close();
        c->buffer.clear();
        c->connected = false;
    }

    std::string authorization(std::string_view title) {
        std::lock_guard lock(mutex);
        return authorizer ? authorizer(title) : std::string();
    }

    // ---- status poll ----
    void poll() {
        if (stopped) return;
        for (std::size_t n = 0; n < config.layout.nodes.size(); ++n) {
            if (n == config.self.value()) continue;
            auto& p = peer(n);
            if (p.endpoint.port == 0) continue;
            // One poll at a time per node: a node too slow to answer within the interval is not asked twice.
            if (polling.size() <= n) polling.resize(n + 1, false);
            if (polling[n]) continue;
            polling[n] = true;
            Job job;
            job.status_poll = true;
            job.request.target = "/tier";
            job.done = [self = shared_from_this(), n](const RelayAnswer&) { self->polling[n] = false; };
            p.queue.push_front(std::move(job));
            pump(n);
        }
        poll_timer.expires_after(config.status_interval);
        poll_timer.async_wait([self = shared_from_this()](beast::error_code ec) {
            if (!ec) self->poll();
        });
    }

    void stop_all() {
        stopped = true;
        poll_timer.cancel();
        for (auto& p : peers) {
            for (auto& c : p.connections)
                close(c);
            auto queued = std::move(p.queue);
            for (auto& job : queued)
                if (job.done) job.done(RelayAnswer{nullptr, "the tier client stopped"});
        }
    }

    TierConfig config;
    asio::io_context io;
    asio::steady_timer poll_timer;
    asio::executor_work_guard<asio::io_context::executor_type> work;
    std::thread thread;
    std::mutex mutex;
    TierView view;          // guarded by mutex
    Authorizer authorizer;  // guarded by mutex
    std::vector<Peer> peers;
    std::vector<bool> polling;
    bool stopped = false;
    Counter& relayed_bytes;
    Counter& relays_ok;
    Counter& relays_failed;
};

TierClient::TierClient(const TierConfig& config, MetricsRegistry& metrics)
    : impl_(std::make_shared<Impl>(config, metrics)), self_(config.self.value()) {
    impl_->start();
}

TierClient::~TierClient() {
    stop();
    impl_->work.reset();
    impl_->io.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
}

std::size_t TierClient::node(std::string_view url) {
    return impl_->node(url);
}

std::string TierClient::url(std::size_t node) {
    std::lock_guard lock(impl_->mutex);
    return impl_->view.url(node);
}

std::optional<std::size_t> TierClient::choose(std::span<const std::size_t> holders,
                                              std::span<const std::size_t> tried, std::uint64_t tie_break) {
    std::lock_guard lock(impl_->mutex);
    return impl_->view.choose(holders, tried, Clock::now(), tie_break);
}

std::optional<std::size_t> TierClient::node_with_room(std::span<const std::size_t> exclude) {
    std::lock_guard lock(impl_->mutex);
    return impl_->view.node_with_room(exclude, Clock::now());
}

void TierClient::fetch(std::size_t node, RelayRequest request, Done done) {
    Impl::Job job;
    job.request = std::move(request);
    job.done = std::move(done);
    asio::post(impl_->io,
               [impl = impl_, node, job = std::move(job)]() mutable { impl->submit(node, std::move(job)); });
}

void TierClient::set_authorizer(Authorizer authorizer) {
    std::lock_guard lock(impl_->mutex);
    impl_->authorizer = std::move(authorizer);
}

void TierClient::stop() {
    std::promise<void> stopped;
    auto done = stopped.get_future();
    asio::post(impl_->io, [impl = impl_, &stopped] {
        impl->stop_all();
        stopped.set_value();
    });
    if (impl_->thread.joinable() && std::this_thread::get_id() != impl_->thread.get_id())
        done.wait_for(std::chrono::seconds(5));
}

}  // namespace toast::server
