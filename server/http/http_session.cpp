#include "server/http/http_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "server/core/stream_redirect.hpp"
#include "server/http/request_view.hpp"
#include "server/io/tier_client.hpp"
#include "toast/common/access_token.hpp"
#include "toast/common/log.hpp"

namespace toast::server {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kLingerTime = std::chrono::seconds(1);
// What one SSL write takes from the send chain: large enough for full TLS records, small enough that a slow
// client's connection holds little memory.
constexpr std::uint64_t kTlsWriteChunk = 256 * 1024;

// A /stream this node refused, sent to a node of the tier with room (none: nullopt, and the 503 stands).
std::optional<HttpResponse> redirect_stream(ServerShared& shared, std::string_view target,
                                            const std::string& reason) {
    if (!shared.tier || !shared.config.tier) return std::nullopt;
    const auto& tier = *shared.config.tier;
    auto refused = refused_nodes(target);
    std::vector<std::size_t> exclude;
    for (const auto& id : refused)
        if (auto i = tier.layout.find(id)) exclude.push_back(shared.tier->node(tier.layout.node(*i).url));
    const auto other = shared.tier->node_with_room(exclude);
    if (!other) return std::nullopt;
    return stream_redirect(shared.tier->url(*other), target, std::move(refused), tier.self_node().id, reason);
}

bool peer_left(const beast::error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::operation_aborted ||
           ec == asio::error::connection_reset || ec == asio::error::bad_descriptor ||
           ec == http::error::partial_message || ec == asio::error::eof;
}

}  // namespace

HttpSession::HttpSession(ServerShared& shared, tcp::socket socket, bool admin_listener, bool counted,
                         bool reject)
    : shared_(shared),
      socket_(std::move(socket)),
      tls_context_(admin_listener ? nullptr : shared.tls()),
      watchdog_(socket_.get_executor()),
      pace_timer_(socket_.get_executor()),
      admin_listener_(admin_listener),
      counted_(counted),
      reject_(reject) {}

void HttpSession::start() {
    beast::error_code ec;
    auto remote = socket_.remote_endpoint(ec);
    if (!ec) {
        auto addr = remote.address();
        loopback_ = addr.is_loopback() ||
                    (addr.is_v6() && addr.to_v6().is_v4_mapped() &&
                     asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6()).is_loopback());
        peer_address_ = remote.address().to_string();
        peer_ = peer_address_ + ":" + std::to_string(remote.port());
    }
    socket_.set_option(tcp::no_delay(true), ec);
    socket_.non_blocking(true, ec);
    shared_.register_session(this, weak_from_this());
    if (shared_.draining.load()) {  // accepted while the service began to drain
        close();
        return;
    }
    last_activity_ = Clock::now();
    const auto settings = shared_.settings();
    arm_watchdog(settings->idle_timeout);
    if (tls_context_) {
        tls_.emplace(socket_, *tls_context_);
        state_ = State::writing;  // the watchdog counts a handshake that makes no progress as idle
        tls_->async_handshake(boost::asio::ssl::stream_base::server,
                              [self = shared_from_this()](beast::error_code handshake_ec) {
                                  self->on_handshake(handshake_ec);
                              });
        return;
    }
    begin();
}

void HttpSession::on_handshake(beast::error_code ec) {
    if (state_ == State::closed) return;
    if (ec) {
        shared_.metrics.tls_handshake_failures.inc();
        spdlog::debug("{}: TLS handshake failed: {}", peer_, ec.message());
        close();
        return;
    }
    state_ = State::idle;
    last_activity_ = Clock::now();
    begin();
}

void HttpSession::begin() {
    const auto settings = shared_.settings();
    if (reject_) {
        auto r = error_response(
            503, "connection limit of " + std::to_string(settings->max_connections) + " reached");
        r.headers.push_back({"Retry-After", "1"});
        Job job;
        job.response = std::move(r);
        job.received = Clock::now();
        job.what = "(connection)";
        enqueue(std::move(job));
        return;
    }
    do_read();
}

void HttpSession::drain() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
        if (self->state_ == State::closed) return;
        self->input_ended_ = true;
        if (self->state_ == State::idle) self->close();
    });
}

// ---- reading requests ---------------------------------------------------------------------------------

void HttpSession::do_read() {
    if (input_ended_ || read_in_flight_ || queue_full()) return;  // resumed when a response finishes
    if (state_ == State::lingering || state_ == State::closed) return;
    parser_.emplace();
    header_limit_ = shared_.settings()->header_limit;
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(header_limit_, UINT32_MAX)));
    parser_->body_limit(kMaxRequestBody);
    read_in_flight_ = true;
    if (state_ == State::idle) last_activity_ = Clock::now();
    auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); };
    if (tls_) {
        http::async_read(*tls_, buffer_, *parser_, std::move(done));
    } else {
        http::async_read(socket_, buffer_, *parser_, std::move(done));
    }
}

void HttpSession::on_read(beast::error_code ec) {
    read_in_flight_ = false;
    if (state_ == State::closed) return;
    if (state_ == State::lingering) {
        if (ec) {
            close();
        } else {
            linger_read();
        }
        return;
    }
    if (ec) {
        if (peer_left(ec)) {
            end_input();
            return;
        }
        HttpResponse r;
        if (ec == http::error::header_limit) {
            r = error_response(431, "request header larger than " + std::to_string(header_limit_) + " bytes");
        } else if (ec == http::error::body_limit) {
            r = error_response(413, "request body larger than " + std::to_string(kMaxRequestBody) + " bytes");
        } else if (ec.category() == beast::error_code(http::error::end_of_stream).category()) {
            r = error_response(400, "malformed request: " + ec.message());
        } else {
            spdlog::debug("{}: read failed: {}", peer_, ec.message());
            end_input();
            return;
        }
        r.close = true;
        Job job;
        job.response = std::move(r);
        job.received = Clock::now();
        job.what = "(unparsed request)";
        enqueue(std::move(job));
        return;
    }

    const auto& msg = parser_->get();
    Job job;
    job.received = Clock::now();
    // A token in the URL is a credential: logs show that there was one, not what it was.
    const auto target = redact_token(msg.target());
    job.what = log_escape(std::string(msg.method_string()) + " " + target);
    if (shared_.access_log()) {
        job.access.emplace();
        job.access->received = std::chrono::system_clock::now();
        job.access->request_line = std::string(msg.method_string()) + " " + target +
                                   (msg.version() == 10 ? " HTTP/1.0" : " HTTP/1.1");
        job.access->referer = std::string(msg[http::field::referer]);
        job.access->user_agent = std::string(msg[http::field::user_agent]);
        job.access->range = std::string(msg[http::field::range]);
    }
    if (auto rejection = framing_rejection(msg)) {
        job.response = std::move(*rejection);
    } else {
        const auto settings = shared_.settings();
        HandlerContext ctx{shared_.store, shared_.disks, shared_.registry, settings->limits,
                           shared_.node_report};
        ctx.push = shared_.push.get();
        ctx.access = &settings->access;
        ctx.unix_now = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
        ctx.telemetry = &shared_.qoe;
        job.response = handle_request(request_view(msg, loopback_, admin_listener_, peer_address_), ctx);
        if (!job.response.denial.empty()) shared_.metrics.count_denial(job.response.denial);
        if (job.response.token_renewed) shared_.metrics.renewals.inc();
        admit(job, msg.target());
    }
    job.keep_alive = msg.keep_alive() && !job.response.close && !shared_.draining.load();
    enqueue(std::move(job));
    do_read();
}

// No further request will be read; an idle connection closes now, a busy one after its queued responses.
void HttpSession::end_input() {
    input_ended_ = true;
    if (state_ == State::idle && queue_.empty()) close();
}

void HttpSession::enqueue(Job job) {
    if (!job.keep_alive) input_ended_ = true;
    queue_.push_back(std::move(job));
    if (state_ == State::idle) start_response();
}

// ---- responding ---------------------------------------------------------------------------------------

// A paced stream goes through admission control when it is configured: admitted, it holds its reservations
// until the job ends; refused, it becomes a 503 whose Retry-After says when the array would have room.
void HttpSession::admit(Job& job, std::string_view target) {
    // An empty title reads nothing and sends nothing: there is nothing to reserve.
    if (!shared_.admission || !job.response.paced || job.response.head_only || job.response.status != 200 ||
        !job.response.title || job.response.title->size == 0)
        return;
    auto decision = shared_.admission->admit(*job.response.title, Clock::now());
    if (!decision.ticket) {
        if (auto elsewhere = redirect_stream(shared_, target, decision.reason)) {
            shared_.redirected_streams.inc();
            job.response = std::move(*elsewhere);
            return;
        }
        job.response = error_response(503, std::move(decision.reason));
        job.response.headers.push_back({"Retry-After", std::to_string(decision.retry_after.count())});
        return;
    }
    job.admission = std::move(decision.ticket);
    job.start_at = decision.start;
}

void HttpSession::start_response() {
    auto& job = queue_.front();
    ++generation_;
    if (job.start_at && *job.start_at > Clock::now()) {
        // Admitted for a later round: wait for it like for the pacer.
        state_ = State::pacing;
        pace_timer_.expires_at(*job.start_at);
        pace_timer_.async_wait([self = shared_from_this(), gen = generation_](beast::error_code ec) {
            if (ec || gen != self->generation_ || self->state_ != State::pacing) return;
            self->queue_.front().start_at.reset();
            self->start_response();
        });
        return;
    }
    transfer_.emplace(job.response, serialize_head(job.response, job.keep_alive, cached_http_date()),
                      shared_.settings()->transfer_limits);
    state_ = State::awaiting_store;
    pump();
}

void HttpSession::pump() {
    issue_reads();
    const bool committed_before = transfer_->head_committed();
    const auto step = transfer_->next(out_, Clock::now());
    if (!committed_before && transfer_->head_committed()) {
        shared_.metrics.count_response(queue_.front().response.status);
        log_response(queue_.front());
    }
    switch (step) {
        case ResponseTransfer::Step::send:
            state_ = State::writing;
            last_activity_ = Clock::now();
            write();
            return;
        case ResponseTransfer::Step::wait_store:
            state_ = State::awaiting_store;
            return;
        case ResponseTransfer::Step::wait_pacer:
            state_ = State::pacing;
            pace_timer_.expires_at(transfer_->pacer_wakeup());
            pace_timer_.async_wait([self = shared_from_this(), gen = generation_](beast::error_code ec) {
                if (ec || gen != self->generation_ || self->state_ != State::pacing) return;
                self->pump();
            });
            return;
        case ResponseTransfer::Step::done:
            finish_response();
            return;
        case ResponseTransfer::Step::failed:
            on_transfer_failed();
            return;
    }
}

void HttpSession::issue_reads() {
    const auto& job = queue_.front();
    // A paced stream reads one round ahead of sending; a range request is due when its client said.
    std::optional<Clock::time_point> deadline;
    if (job.response.paced) {
        deadline = Clock::now() + shared_.settings()->transfer_limits.time_slice;
    } else if (job.response.deadline) {
        deadline = job.received + *job.response.deadline;
    }
    for (const auto& read : transfer_->take_reads()) {
        shared_.outstanding_reads.fetch_add(1);
        auto done = [self = shared_from_this(), gen = generation_, item = read.item](ReadResult result) {
            auto& shared = self->shared_;
            asio::post(self->socket_.get_executor(), [self, gen, item, result = std::move(result)]() mutable {
                self->on_store_read(gen, item, std::move(result));
            });
            shared.outstanding_reads.fetch_sub(1);
        };
        shared_.store.read(ReadRequest{.title = job.response.title,
                                       .offset = read.offset,
                                       .length = read.length,
                                       .deadline = deadline,
                                       .revalidate = job.response.revalidate},
                           std::move(done));
    }
}

void HttpSession::on_store_read(std::uint64_t generation, std::size_t item, ReadResult result) {
    if (state_ == State::closed || generation != generation_) return;
    transfer_->on_store_read(item, std::move(result));
    if (state_ == State::awaiting_store) pump();
}

void HttpSession::write() {
    if (tls_) {
        write_tls();
        return;
    }
    const auto sent = send_chain(socket_.native_handle(), out_);
    if (sent.sent > 0) {
        last_activity_ = Clock::now();
        const auto body = transfer_->on_sent(sent.sent);
        queue_.front().body_sent += body;
        count_bytes(body);
    }
    switch (sent.status) {
        case SendStatus::done:
            pump();
            return;
        case SendStatus::would_block:
            socket_.async_wait(tcp::socket::wait_write, [self = shared_from_this()](beast::error_code ec) {
                if (self->state_ != State::writing) return;
                if (ec) {
                    self->close();
                } else {
                    self->write();
                }
            });
            return;
        case SendStatus::failed:
            spdlog::debug("{}: send failed: {}", peer_, std::strerror(sent.error));
            close();
            return;
        case SendStatus::file_short:
            spdlog::error("{} {}: store file ended before the segment did; closing", peer_,
                          queue_.front().what);
            close();
            return;
    }
}

// The next part of the chain, up to kTlsWriteChunk, copied (memory) or read (file regions) into tls_out_
// and written through the SSL stream.
void HttpSession::write_tls() {
    tls_out_.clear();
    for (const auto& b : out_.buffers()) {
        if (tls_out_.size() >= kTlsWriteChunk) break;
        const auto n = std::min<std::uint64_t>(b.size, kTlsWriteChunk - tls_out_.size());
        if (b.fd < 0) {
            tls_out_.append(b.data, n);
            continue;
        }
        const auto at = tls_out_.size();
        tls_out_.resize(at + n);
        std::uint64_t got = 0;
        while (got < n) {
            const auto r =
                ::pread(b.fd, tls_out_.data() + at + got, n - got, static_cast<off_t>(b.offset + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                spdlog::error("{} {}: store file read failed ({}); closing", peer_, queue_.front().what,
                              r < 0 ? std::strerror(errno) : "file ended before the segment did");
                close();
                return;
            }
            got += static_cast<std::uint64_t>(r);
        }
    }
    asio::async_write(
        *tls_, asio::buffer(tls_out_),
        [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_tls_written(ec, n); });
}

void HttpSession::on_tls_written(beast::error_code ec, std::size_t n) {
    if (state_ != State::writing) return;
    if (ec) {
        spdlog::debug("{}: TLS write failed: {}", peer_, ec.message());
        close();
        return;
    }
    last_activity_ = Clock::now();
    out_.consume(n);
    const auto body = transfer_->on_sent(n);
    queue_.front().body_sent += body;
    count_bytes(body);
    if (out_.empty()) {
        pump();
    } else {
        write_tls();
    }
}

// Counted as bytes leave, so a long paced stream shows its progress while it runs.
void HttpSession::count_bytes(std::uint64_t body_bytes) {
    const auto& title = queue_.front().response.title;
    if (body_bytes == 0 || !title) return;
    if (!bytes_counter_ || bytes_counter_title_ != title->name) {
        bytes_counter_ = &shared_.metrics.bytes_sent(title->name);
        bytes_counter_title_ = title->name;
    }
    bytes_counter_->inc(body_bytes);
}

void HttpSession::on_transfer_failed() {
    auto& job = queue_.front();
    const auto failure = transfer_->failure();
    if (transfer_->head_committed()) {
        spdlog::warn("{} {}: closing mid-response, store read of {}", peer_, job.what,
                     log_escape(failure.message, 400));
        close();
        return;
    }
    transfer_.reset();
    out_.clear();
    const bool keep_alive = job.keep_alive;
    job.response = error_response(failure.status == ReadStatus::unavailable ? 503 : 500, failure.message);
    // Which bytes cannot be served: a Toast client asks its peers for every piece in them, not only for the
    // one it asked the server for.
    if (failure.unavailable_block) {
        job.response.headers.push_back(
            {"Toast-Unavailable", "bytes " + std::to_string(failure.unavailable_block->first) + "-" +
                                      std::to_string(failure.unavailable_block->second)});
    }
    job.keep_alive = keep_alive;
    start_response();
}

void HttpSession::finish_response() {
    auto& job = queue_.front();
    shared_.metrics.response_seconds.observe(
        std::chrono::duration<double>(Clock::now() - job.received).count());
    write_access_log(job);
    const bool keep_alive = job.keep_alive;
    transfer_.reset();
    ++generation_;
    queue_.pop_front();
    state_ = State::idle;
    if (!keep_alive || (input_ended_ && queue_.empty())) {
        linger_close();
        return;
    }
    if (!queue_.empty()) {
        start_response();
    } else {
        last_activity_ = Clock::now();
    }
    do_read();
}

// ---- closing ------------------------------------------------------------------------------------------

// Half-close and discard what the peer still sends for a moment: closing with unread input would make the
// kernel send RST, which can destroy the response the peer has not read yet.
void HttpSession::linger_close() {
    if (state_ == State::closed || state_ == State::lingering) return;
    state_ = State::lingering;
    last_activity_ = Clock::now();
    arm_watchdog(kLingerTime);
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    if (ec) {
        close();
        return;
    }
    if (!read_in_flight_) linger_read();
}

void HttpSession::linger_read() {
    read_in_flight_ = true;
    socket_.async_read_some(asio::buffer(discard_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                self->read_in_flight_ = false;
                                if (ec || self->state_ == State::closed) {
                                    self->close();
                                } else {
                                    self->linger_read();
                                }
                            });
}

void HttpSession::close() {
    if (state_ == State::closed) return;
    // A response cut short (the peer left, a store failure mid-body) is logged with what it sent.
    if (transfer_ && transfer_->head_committed() && !queue_.empty()) write_access_log(queue_.front());
    state_ = State::closed;
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    watchdog_.cancel();
    pace_timer_.cancel();
    out_.clear();
    transfer_.reset();
    shared_.unregister_session(this, counted_);
}

void HttpSession::arm_watchdog(Clock::duration d) {
    watchdog_.expires_after(d);
    watchdog_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (!ec) self->on_watchdog();
    });
}

// One timer per connection instead of one per operation: it fires at most every idle_timeout and checks
// whether the peer made progress. Waiting for the store or the pacer is not the peer's idleness.
void HttpSession::on_watchdog() {
    if (state_ == State::closed) return;
    const Clock::duration limit = state_ == State::lingering
                                      ? Clock::duration(kLingerTime)
                                      : Clock::duration(shared_.settings()->idle_timeout);
    if (state_ == State::awaiting_store || state_ == State::pacing) {
        arm_watchdog(limit);
        return;
    }
    const auto idle = Clock::now() - last_activity_;
    if (idle >= limit) {
        if (state_ != State::lingering)
            spdlog::debug("{}: closing after {} ms without progress", peer_,
                          std::chrono::duration_cast<std::chrono::milliseconds>(idle).count());
        close();
        return;
    }
    arm_watchdog(limit - idle);
}

}  // namespace toast::server
