#include "client/lt/http_fetcher.hpp"

#include <algorithm>
#include <deque>
#include <set>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "client/lt/http_stream.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

namespace toast::client {

namespace {

using Clock = std::chrono::steady_clock;

struct Job {
    PieceRequest request;
    int attempt = 0;
    Clock::time_point ready{};
    std::optional<std::size_t> refused_by;  // the last server that refused it: another is asked first
    bool hedged = false;                    // taken back once from a server that missed its deadline
};

// What an answer that failed said, beyond the failure itself; the default is a server that did not answer.
struct FailedAnswer {
    FetchFault fault = FetchFault::server;
    std::optional<std::chrono::seconds> retry_after;
    std::optional<UnavailableBytes> unavailable;
    // The answer was whole and the server keeps the connection: the next request can use it.
    bool connection_reusable = false;
};

}  // namespace

class HttpFetcher::Impl : public std::enable_shared_from_this<HttpFetcher::Impl> {
  public:
    struct Connection {
        Connection(asio::io_context& io, const ServerUrl& url, std::shared_ptr<asio::ssl::context> tls,
                   std::size_t s)
            : stream(io, url, std::move(tls)), server(s) {
            // Beast reads as much as the buffer has room for, at least 512 bytes, and a flat_buffer grows
            // only to what it is asked for: without room made here a piece would come in 512-byte reads,
            // each a system call (and a pass through the event loop). A read takes up to 64 KiB.
            buffer.reserve(read_chunk);
        }
        static constexpr std::size_t read_chunk = 64 * 1024;
        HttpStream stream;
        beast::flat_buffer buffer;
        std::size_t server;
        bool busy = false;
        bool connected = false;
        bool fresh = false;  // connected for the current request (a failure is then the server's)
        // Changes when a request is abandoned: completions of what was started before are ignored.
        std::uint64_t generation = 0;
        Job job;
        Clock::time_point started;
        http::request<http::empty_body> request;
        std::optional<http::response_parser<http::vector_body<char>>> parser;
    };

    Impl(asio::io_context& io, std::vector<ServerUrl> servers, FetcherConfig config, OnPiece on_piece)
        : io_(io),
          urls_(std::move(servers)),
          config_(config),
          on_piece_(std::move(on_piece)),
          pool_(urls_.size(), config.server_backoff),
          timer_(io) {
        for (std::size_t s = 0; s < urls_.size(); ++s) {
            conns_.emplace_back();
            for (int i = 0; i < std::max(config_.connections_per_server, 1); ++i) {
                conns_.back().push_back(std::make_shared<Connection>(io_, urls_[s], config_.access.tls, s));
            }
        }
    }

    bool fetch(const PieceRequest& r, std::chrono::milliseconds delay) {
        if (stopped_ || urls_.empty() || r.length == 0 || busy_.count(r.piece)) return false;
        busy_.insert(r.piece);
        queue_.push_back({r, 0, Clock::now() + delay, std::nullopt});
        pump();
        return true;
    }

    std::optional<std::uint64_t> abandon(PieceIndex piece) {
        if (busy_.erase(piece) == 0) return std::nullopt;
        auto it = std::find_if(queue_.begin(), queue_.end(),
                               [&](const Job& j) { return j.request.piece == piece; });
        if (it != queue_.end()) {
            queue_.erase(it);
            return 0;
        }
        auto c = fetching(piece);
        if (!c) return std::nullopt;
        std::uint64_t received = c->parser ? c->parser->get().body().size() : 0;
        ++c->generation;
        close(c);
        c->busy = false;
        stats_.bytes_received += received;
        ++stats_.abandoned;
        // Not at once: the closed socket's aborted completions are queued now, and the connection must not
        // start its next request before they have run.
        asio::post(io_, [self = shared_from_this()] { self->guarded(nullptr, [&] { self->pump(); }); });
        return received;
    }

    // The connection whose request in flight is for `piece`, if any.
    std::shared_ptr<Connection> fetching(PieceIndex piece) const {
        for (const auto& per_server : conns_) {
            for (const auto& c : per_server) {
                if (c->busy && c->job.request.piece == piece) return c;
            }
        }
        return nullptr;
    }

    bool busy(PieceIndex piece) const { return busy_.count(piece) > 0; }
    std::size_t in_flight() const { return busy_.size() - queue_.size(); }
    std::size_t queued() const { return queue_.size(); }

    void stop() {
        stopped_ = true;
        timer_.cancel();
        for (auto& per_server : conns_) {
            for (auto& c : per_server)
                c->stream.close();
        }
        queue_.clear();
        busy_.clear();
    }

    asio::io_context& io_;
    std::vector<ServerUrl> urls_;
    FetcherConfig config_;
    OnPiece on_piece_;
    OnFailed on_failed_;
    ServerPool pool_;
    asio::steady_timer timer_;
    std::vector<std::vector<std::shared_ptr<Connection>>> conns_;
    std::deque<Job> queue_;
    std::set<PieceIndex> busy_;  // queued or in flight
    FetcherStats stats_;
    std::optional<TierRoutes> routes_;
    bool stopped_ = false;

  private:
    // Runs a handler's body. Nothing may escape an asio handler: it would leave io_context::run and end the
    // client. What throws (a socket call, the caller's on_piece) is logged; a request still in flight on
    // `c` fails and is retried like any other failure, and the queue moves on.
    template <class Body>
    void guarded(const std::shared_ptr<Connection>& c, Body&& body) noexcept {
        try {
            body();
            return;
        } catch (const std::exception& e) {
            recover(c, e.what());
        } catch (...) {
            recover(c, "unknown exception");
        }
    }

    void recover(const std::shared_ptr<Connection>& c, const char* what) noexcept {
        ++stats_.handler_errors;
        try {
            spdlog::error("fallback: a handler failed: {}", what);
            if (c && c->busy) {
                fail(c, std::string("handler: ") + what);
            } else {
                pump();
            }
        } catch (...) {
            // Failing again while recovering: the next fetch() or completion pumps again.
        }
    }

    std::shared_ptr<Connection> idle_connection(std::size_t server) {
        for (auto& c : conns_[server]) {
            if (!c->busy) return c;
        }
        return nullptr;
    }

    void pump() {
        if (stopped_) return;
        auto now = Clock::now();
        hedge(now);
        for (auto it = queue_.begin(); it != queue_.end();) {
            if (it->ready > now) {
                ++it;
                continue;
            }
            auto server = choose_server(now, *it);
            if (!server) break;
            auto conn = idle_connection(*server);
            if (!conn) {
                ++it;  // another job may be for another server
                continue;
            }
            Job job = *it;
            it = queue_.erase(it);
            start(conn, job);
        }
        // Requests just started count too: the timer must wake when one of them is due to be hedged.
        arm_timer(now, hedge(now));
    }

    // A piece on a tier goes to its holders first (the power of two choices over their loads); with none
    // usable, or off a tier, to the best server of all.
    std::optional<std::size_t> choose_server(Clock::time_point now, const Job& job) const {
        if (routes_) {
            const auto& holders = routes_->holders(job.request.piece);
            if (auto h = pool_.choose_holder(now, holders, job.refused_by, tie_break(job.request.piece)))
                return h;
        }
        return pool_.choose(now, job.refused_by);
    }

    std::uint64_t tie_break(PieceIndex piece) const {
        return holder_tie_break(config_.tie_salt, static_cast<std::uint64_t>(piece.value()));
    }

    bool holds(std::size_t server, PieceIndex piece) const {
        if (!routes_) return false;
        const auto& h = routes_->holders(piece);
        return std::find(h.begin(), h.end(), server) != h.end();
    }

    // Requests past their deadline and unanswered for hedge_after go to another usable holder of the piece.
    // Returns when the next one will be due.
    Clock::time_point hedge(Clock::time_point now) {
        auto next = Clock::time_point::max();
        if (!routes_) return next;
        for (const auto& per_server : conns_) {
            for (const auto& c : per_server) {
                if (!c->busy || c->job.hedged || !c->job.request.deadline) continue;
                const auto due = std::max(*c->job.request.deadline, c->started + config_.hedge_after);
                const auto& holders = routes_->holders(c->job.request.piece);
                const auto other =
                    pool_.choose_holder(now, holders, c->server, tie_break(c->job.request.piece));
                if (!other || !idle_connection(*other)) continue;
                if (due > now) {
                    next = std::min(next, due);
                    continue;
                }
                Job job = c->job;
                job.hedged = true;
                job.refused_by = c->server;
                pool_.on_late(c->server, now);
                ++c->generation;
                close(c);
                c->busy = false;
                ++stats_.hedged;
                spdlog::info("fallback: piece {} unanswered by {} past its deadline; asking {}",
                             job.request.piece.value(), urls_[c->server].text, urls_[*other].text);
                job.ready = now;
                queue_.push_front(job);
            }
        }
        return next;
    }

    void arm_timer(Clock::time_point now, Clock::time_point hedge_due) {
        if (queue_.empty() && hedge_due == Clock::time_point::max()) return;
        auto wake = hedge_due;
        for (const auto& j : queue_)
            wake = std::min(wake, j.ready);
        if (!queue_.empty() && !pool_.choose(now)) wake = std::max(wake, pool_.next_ready());
        // Also wake when a connection may have freed up; completions call pump() themselves.
        if (wake <= now) return;
        timer_.expires_at(wake);
        timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
            if (!ec) self->guarded(nullptr, [&] { self->pump(); });
        });
    }

    void start(const std::shared_ptr<Connection>& c, const Job& job) {
        c->busy = true;
        c->job = job;
        c->started = Clock::now();
        const auto& url = urls_[c->server];
        const auto& r = job.request;
        c->request = {};
        c->request.method(http::verb::get);
        c->request.target(url.target);
        c->request.version(11);
        c->request.set(http::field::host, url.host + ":" + url.port);
        c->request.set(http::field::user_agent, "toast-client/0.1");
        c->request.set(http::field::range, range_header(r));
        if (r.revalidate) c->request.set(http::field::cache_control, "no-cache");
        if (r.deadline) c->request.set("Toast-Deadline", deadline_header(*r.deadline, c->started));
        // A holder of the piece answers from its own disks (or says where it is); any other server relays.
        if (holds(c->server, r.piece)) c->request.set("Toast-Direct", "1");
        // The token as it is now: a renewal between two requests applies to the next one.
        if (auto auth = config_.access.authorization(); !auth.empty())
            c->request.set(http::field::authorization, auth);
        c->request.keep_alive(true);
        ++stats_.requests;
        if (c->connected) {
            c->fresh = false;
            write(c);
        } else {
            connect(c);
        }
    }

    // A completion of something started before the request was abandoned (the socket was closed under it).
    bool stale(const std::shared_ptr<Connection>& c, std::uint64_t generation) const {
        return stopped_ || c->generation != generation;
    }

    void connect(const std::shared_ptr<Connection>& c) {
        c->fresh = true;
        c->stream.reset();
        c->stream.connect(config_.timeout,
                          [self = shared_from_this(), c, gen = c->generation](beast::error_code ec) {
                              self->guarded(c, [&] {
                                  if (self->stale(c, gen)) return;
                                  self->on_connect(c, ec);
                              });
                          });
    }

    void on_connect(const std::shared_ptr<Connection>& c, beast::error_code ec) {
        if (ec) return fail(c, "connect: " + ec.message());
        c->connected = true;
        c->stream.set_no_delay();
        write(c);
    }

    void write(const std::shared_ptr<Connection>& c) {
        c->stream.expires_after(config_.timeout);
        c->stream.async_write(c->request, [self = shared_from_this(), c, gen = c->generation](
                                              beast::error_code ec, std::size_t) {
            self->guarded(c, [&] {
                if (self->stale(c, gen)) return;
                if (ec) return self->connection_error(c, "write: " + ec.message());
                self->read(c);
            });
        });
    }

    void read(const std::shared_ptr<Connection>& c) {
        c->parser.emplace();
        c->parser->body_limit(static_cast<std::uint64_t>(c->job.request.length) + 64 * 1024);
        c->stream.expires_after(config_.timeout);
        c->stream.async_read(
            c->buffer, *c->parser,
            [self = shared_from_this(), c, gen = c->generation](beast::error_code ec, std::size_t) {
                self->guarded(c, [&] {
                    if (self->stale(c, gen)) return;
                    if (ec) return self->connection_error(c, "read: " + ec.message());
                    self->on_response(c);
                });
            });
    }

    // A kept-alive connection the server closed in the meantime fails on first use: that is not the
    // server's fault, so the request is sent again at once on a new connection.
    void connection_error(const std::shared_ptr<Connection>& c, const std::string& what) {
        bool nothing_received = !c->parser || !c->parser->got_some();
        if (!c->fresh && nothing_received) {
            close(c);
            connect(c);
            return;
        }
        fail(c, what);
    }

    void on_response(const std::shared_ptr<Connection>& c) {
        auto response = c->parser->release();
        const auto& r = c->job.request;
        auto body = std::move(response.body());
        stats_.bytes_received += body.size();
        const int status = static_cast<int>(response.result_int());
        auto problem = answer_problem(r, status, response[http::field::content_range], body.size());
        if (auto load = parse_load(response["Toast-Load"])) pool_.on_load(c->server, *load, Clock::now());
        if (!response.keep_alive()) close(c);
        if (!problem.empty()) {
            stats_.bytes_rejected += body.size();
            FailedAnswer answer;
            answer.retry_after = parse_retry_after(response[http::field::retry_after]);
            if (status == 503) answer.unavailable = parse_unavailable(response["Toast-Unavailable"]);
            answer.fault = answer_fault(status, answer.retry_after.has_value());
            // A server refusing one piece answered in full and goes on serving: its connection stays open.
            answer.connection_reusable = answer.fault == FetchFault::piece && response.keep_alive();
            return fail(c, problem, answer);
        }
        const auto now = Clock::now();
        pool_.on_success(c->server, body.size(), now - c->started);
        if (!response["Toast-Late"].empty()) {
            ++stats_.late_answers;
            pool_.on_late(c->server, now);
            spdlog::debug("fallback: piece {} from {} came {} ms after its deadline", r.piece.value(),
                          redact_token(urls_[c->server].text), std::string(response["Toast-Late"]));
        }
        c->busy = false;
        busy_.erase(r.piece);
        ++stats_.delivered;
        on_piece_(r, std::move(body), c->server);
        pump();
    }

    void close(const std::shared_ptr<Connection>& c) {
        c->stream.close();
        c->buffer.clear();
        c->connected = false;
    }

    void fail(const std::shared_ptr<Connection>& c, const std::string& what,
              const FailedAnswer& answer = {}) {
        ++stats_.failures;
        if (!answer.connection_reusable) close(c);
        c->busy = false;
        auto now = Clock::now();
        Job job = c->job;
        ++job.attempt;
        // A server that failed rests; one that refused only this piece keeps serving the others, and the
        // piece asks another server first.
        std::optional<std::size_t> avoid;
        if (answer.fault == FetchFault::server) {
            pool_.on_failure(c->server, now, answer.retry_after);
        } else {
            ++stats_.refusals;
            job.refused_by = avoid = c->server;
        }
        // Another server may take it at once; with none left the piece itself backs off, at least until a
        // server is ready again (one that said Retry-After rests that long).
        auto other = pool_.choose(now, avoid);
        job.ready = other && other != avoid
                        ? now
                        : std::max(now + backoff_delay(job.attempt, config_.retry_initial, config_.retry_max),
                                   pool_.next_ready());
        spdlog::warn("fallback: piece {} from {} failed ({}); retry {} in {} ms", job.request.piece.value(),
                     redact_token(urls_[c->server].text), what, job.attempt,
                     std::chrono::duration_cast<std::chrono::milliseconds>(job.ready - now).count());
        queue_.push_back(job);
        if (on_failed_) on_failed_(job.request, answer.fault, answer.unavailable);
        pump();
    }
};

HttpFetcher::HttpFetcher(asio::io_context& io, std::vector<ServerUrl> servers, FetcherConfig config,
                         OnPiece on_piece)
    : impl_(std::make_shared<Impl>(io, std::move(servers), config, std::move(on_piece))) {}

void HttpFetcher::on_failed(OnFailed callback) {
    impl_->on_failed_ = std::move(callback);
}

void HttpFetcher::set_routes(TierRoutes routes) {
    impl_->routes_ = std::move(routes);
}

HttpFetcher::~HttpFetcher() {
    impl_->stop();
}

bool HttpFetcher::fetch(const PieceRequest& request, std::chrono::milliseconds delay) {
    return impl_->fetch(request, delay);
}
std::optional<std::uint64_t> HttpFetcher::abandon(PieceIndex piece) {
    return impl_->abandon(piece);
}
bool HttpFetcher::busy(PieceIndex piece) const {
    return impl_->busy(piece);
}
std::size_t HttpFetcher::in_flight() const {
    return impl_->in_flight();
}
std::size_t HttpFetcher::queued() const {
    return impl_->queued();
}
const FetcherStats& HttpFetcher::stats() const {
    return impl_->stats_;
}
const ServerPool& HttpFetcher::servers() const {
    return impl_->pool_;
}
const std::vector<ServerUrl>& HttpFetcher::urls() const {
    return impl_->urls_;
}
void HttpFetcher::stop() {
    impl_->stop();
}

}  // namespace toast::client
