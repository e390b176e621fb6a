#include "server/http/http_session.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "server/http/request_view.hpp"

namespace toast::server {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// Store reads are at most this large, so a whole-title GET neither waits for nor holds the whole title.
constexpr std::uint64_t kWindow = 4 * 1024 * 1024;
// Store reads in flight or done but unsent per connection: one being sent, one being read.
constexpr std::size_t kMaxSlots = 2;
constexpr std::size_t kNoPart = static_cast<std::size_t>(-1);
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr int kMaxIov = 16;

std::string sanitise(std::string_view s, std::size_t max = 200) {
    std::string out;
    for (char c : s.substr(0, max)) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    if (s.size() > max) out += "...";
    return out;
}

}  // namespace

HttpSession::HttpSession(ServerShared& shared, tcp::socket socket, bool admin_listener, bool counted,
                         bool reject)
    : shared_(shared),
      socket_(std::move(socket)),
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
        peer_ = remote.address().to_string() + ":" + std::to_string(remote.port());
    }
    socket_.set_option(tcp::no_delay(true), ec);
    socket_.non_blocking(true, ec);
    shared_.register_session(this, weak_from_this());
    if (shared_.draining.load()) {  // accepted while the service began to drain
        close();
        return;
    }
    last_activity_ = Clock::now();
    arm_watchdog(shared_.config.idle_timeout);
    if (reject_) {
        auto r = error_response(
            503, "connection limit of " + std::to_string(shared_.config.max_connections) + " reached");
        r.headers.push_back({"Retry-After", "1"});
        enqueue(Job{std::move(r), false, Clock::now(), "(connection)"});
        return;
    }
    do_read();
}

void HttpSession::drain() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
        if (self->closed_) return;
        self->close_after_ = true;
        if (!self->responding_ && self->queue_.empty()) self->close();
    });
}

// ---- reading ------------------------------------------------------------------------------------------

void HttpSession::do_read() {
    if (closed_ || reading_ || close_after_ || lingering_) return;
    if (queue_.size() >= shared_.config.max_pipelined) return;  // resumed when a response finishes
    parser_.emplace();
    parser_->header_limit(
        static_cast<std::uint32_t>(std::min<std::size_t>(shared_.config.header_limit, UINT32_MAX)));
    parser_->body_limit(kMaxRequestBody);
    reading_ = true;
    if (!responding_) last_activity_ = Clock::now();
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void HttpSession::on_read(beast::error_code ec) {
    reading_ = false;
    if (closed_) return;
    if (lingering_) {
        if (ec) {
            close();
        } else {
            linger_read();
        }
        return;
    }
    if (ec) {
        if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted ||
            ec == asio::error::connection_reset || ec == asio::error::bad_descriptor ||
            ec == http::error::partial_message || ec == asio::error::eof) {
            // The peer left (or we closed on a timeout): finish what is queued, then close.
            close_after_ = true;
            if (!responding_ && queue_.empty()) close();
            return;
        }
        HttpResponse r;
        if (ec == http::error::header_limit) {
            r = error_response(
                431, "request header larger than " + std::to_string(shared_.config.header_limit) + " bytes");
        } else if (ec == http::error::body_limit) {
            r = error_response(413, "request body larger than " + std::to_string(kMaxRequestBody) + " bytes");
        } else if (ec.category() == beast::error_code(http::error::end_of_stream).category()) {
            r = error_response(400, "malformed request: " + ec.message());
        } else {
            spdlog::debug("{}: read failed: {}", peer_, ec.message());
            close_after_ = true;
            if (!responding_ && queue_.empty()) close();
            return;
        }
        r.close = true;
        enqueue(Job{std::move(r), false, Clock::now(), "(unparsed request)"});
        return;
    }

    auto& msg = parser_->get();
    HttpRequest req = request_view(msg, loopback_, admin_listener_);

    HandlerContext ctx{shared_.store, shared_.disks, shared_.registry, shared_.limits};
    Job job;
    job.received = Clock::now();
    job.what = sanitise(std::string(req.method) + " " + std::string(req.target));
    job.response = handle_request(req, ctx);
    job.keep_alive = msg.keep_alive() && !job.response.close && !shared_.draining.load();
    bool keep = job.keep_alive;
    enqueue(std::move(job));
    if (keep) do_read();
}

void HttpSession::enqueue(Job job) {
    if (!job.keep_alive) close_after_ = true;
    queue_.push_back(std::move(job));
    if (!responding_) start_response();
}

// ---- responding ---------------------------------------------------------------------------------------

void HttpSession::start_response() {
    if (closed_ || queue_.empty()) return;
    responding_ = true;
    reset_transfer();
    auto& job = queue_.front();
    const auto& r = job.response;
    if (r.title && !r.head_only && r.content_length() > 0) {
        plan_items(r);
        pump();
        return;
    }
    commit_head();
    if (!r.head_only && !r.body.empty()) out_.push_back(Chunk{r.body.data(), r.body.size(), -1, 0, nullptr});
    flush();
}

void HttpSession::plan_items(const HttpResponse& r) {
    std::uint64_t slice = 0;
    if (r.paced) {
        pacer_.emplace(r.title->bitrate, shared_.config.time_slice);
        slice = pacer_->slice_bytes().value();
    }
    std::uint64_t body_pos = 0;  // position within the title bytes of the body, for slice boundaries
    for (std::size_t i = 0; i < r.parts.size(); ++i) {
        const auto& part = r.parts[i];
        if (!part.prefix.empty()) items_.push_back(Item{true, i, 0, part.prefix.size(), false, false});
        std::uint64_t pos = part.range.first;
        std::uint64_t end = part.range.last + 1;
        while (pos < end) {
            std::uint64_t n = std::min(kWindow, end - pos);
            Item item{false, i, pos, n, false, false};
            if (slice > 0) {
                std::uint64_t into = body_pos % slice;
                n = std::min(n, slice - into);
                item.length = n;
                item.slice_start = into == 0;
                item.slice_end = into + n == slice || pos + n == end;
            }
            items_.push_back(item);
            pos += n;
            body_pos += n;
        }
    }
    if (!r.trailer.empty()) items_.push_back(Item{true, kNoPart, 0, r.trailer.size(), false, false});
}

void HttpSession::issue_reads() {
    while (next_fetch_ < items_.size() && slots_.size() < kMaxSlots) {
        const auto& item = items_[next_fetch_];
        if (!item.literal) {
            slots_.push_back(Slot{next_fetch_, false, {}});
            shared_.outstanding_reads.fetch_add(1);
            auto done = [self = shared_from_this(), gen = generation_,
                         index = next_fetch_](ReadResult result) {
                auto& shared = self->shared_;
                asio::post(self->socket_.get_executor(),
                           [self, gen, index, result = std::move(result)]() mutable {
                               self->on_store_read(gen, index, std::move(result));
                           });
                shared.outstanding_reads.fetch_sub(1);
            };
            shared_.store.read(queue_.front().response.title, item.offset, item.length, std::move(done));
        }
        ++next_fetch_;
    }
}

void HttpSession::on_store_read(std::uint64_t generation, std::size_t item, ReadResult result) {
    if (closed_ || generation != generation_) return;
    for (auto& slot : slots_) {
        if (slot.item == item) {
            slot.ready = true;
            slot.result = std::move(result);
            break;
        }
    }
    if (!flushing_ && !pacing_wait_) pump();
}

bool HttpSession::append_window(const Item& item, ReadResult& result) {
    std::uint64_t total = 0;
    for (const auto& seg : result.segments) {
        std::visit([&](const auto& s) { total += s.length; }, seg);
    }
    if (total != item.length) {
        result.status = ReadStatus::io_error;
        result.message =
            "store returned " + std::to_string(total) + " bytes for a read of " + std::to_string(item.length);
        return false;
    }
    for (auto& seg : result.segments) {
        if (auto* f = std::get_if<FileSegment>(&seg)) {
            if (f->length > 0) out_.push_back(Chunk{nullptr, f->length, f->file->fd(), f->offset, f->file});
        } else {
            auto& m = std::get<MemorySegment>(seg);
            if (m.length > 0) out_.push_back(Chunk{m.data->data() + m.offset, m.length, -1, 0, m.data});
        }
    }
    return true;
}

void HttpSession::pump() {
    if (closed_ || queue_.empty()) return;
    issue_reads();
    if (flushing_ || pacing_wait_) return;
    auto& job = queue_.front();
    bool appended = false;
    while (next_item_ < items_.size()) {
        const auto& item = items_[next_item_];
        if (pacer_ && item.slice_start) {
            if (appended) break;  // send the previous slice on its own
            auto now = Clock::now();
            if (!pacer_->initial() && now < next_slice_at_) {
                pacing_wait_ = true;
                pace_timer_.expires_at(next_slice_at_);
                pace_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
                    if (ec || self->closed_)
                        return;  // cancelled: reset_transfer() or close() cleared the wait
                    self->pacing_wait_ = false;
                    self->pump();
                });
                return;
            }
            slice_started_at_ = now;
        }
        if (item.literal) {
            const std::string& text =
                item.part == kNoPart ? job.response.trailer : job.response.parts[item.part].prefix;
            out_.push_back(Chunk{text.data(), text.size(), -1, 0, nullptr});
        } else {
            if (slots_.empty() || slots_.front().item != next_item_ || !slots_.front().ready) break;
            auto& slot = slots_.front();
            if (slot.result.status != ReadStatus::ok || !append_window(item, slot.result)) {
                auto status = slot.result.status;
                auto message = slot.result.message;
                fail_before_head(status, message, item);
                return;
            }
            slots_.pop_front();
        }
        ++next_item_;
        appended = true;
        if (pacer_ && item.slice_end) {
            slice_done_pending_ = true;
            break;
        }
    }
    issue_reads();
    if (appended) {
        if (!head_sent_) commit_head();
        flush();
        return;
    }
    if (next_item_ == items_.size()) finish_response();
}

void HttpSession::fail_before_head(ReadStatus status, const std::string& message, const Item& item) {
    auto& job = queue_.front();
    const auto& title = *job.response.title;
    std::string where = "title '" + title.name + "' bytes " + std::to_string(item.offset) + "-" +
                        std::to_string(item.offset + item.length - 1);
    if (head_sent_) {
        spdlog::warn("{} {}: closing mid-response, store read of {} failed: {}", peer_, job.what, where,
                     message);
        close();
        return;
    }
    unsigned code = status == ReadStatus::unavailable ? 503 : 500;
    auto keep_alive = job.keep_alive;
    job.response = error_response(code, where + ": " + message);
    job.keep_alive = keep_alive;
    reset_transfer();
    out_.clear();
    commit_head();
    out_.push_back(Chunk{job.response.body.data(), job.response.body.size(), -1, 0, nullptr});
    flush();
}

void HttpSession::commit_head() {
    auto& job = queue_.front();
    head_ = serialize_head(job.response, job.keep_alive, cached_http_date());
    out_.push_front(Chunk{head_.data(), head_.size(), -1, 0, nullptr});
    head_left_ = head_.size();
    head_sent_ = true;
    shared_.metrics.count_response(job.response.status);
    log_response(job);
}

// ---- writing ------------------------------------------------------------------------------------------

void HttpSession::flush() {
    if (closed_) return;
    flushing_ = true;
    last_activity_ = Clock::now();
    const int fd = socket_.native_handle();
    while (!out_.empty()) {
        ssize_t n;
        auto& front = out_.front();
        if (front.fd < 0) {
            iovec iov[kMaxIov];
            int count = 0;
            std::size_t i = 0;
            for (; i < out_.size() && count < kMaxIov && out_[i].fd < 0; ++i) {
                iov[count].iov_base = const_cast<char*>(out_[i].data);
                iov[count].iov_len = out_[i].size;
                ++count;
            }
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = static_cast<std::size_t>(count);
            // MSG_MORE when file data follows, so the head and the first body bytes share packets.
            n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | (i < out_.size() ? MSG_MORE : 0));
        } else {
            auto off = static_cast<off_t>(front.offset);
            n = ::sendfile(fd, front.fd, &off, std::min<std::uint64_t>(front.size, 0x7ffff000));
            if (n == 0) {
                spdlog::error("{} {}: store file ended before the segment did; closing", peer_,
                              queue_.empty() ? "" : queue_.front().what);
                close();
                return;
            }
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                socket_.async_wait(tcp::socket::wait_write,
                                   [self = shared_from_this()](beast::error_code ec) {
                                       if (ec || self->closed_) {
                                           self->close();
                                       } else {
                                           self->flush();
                                       }
                                   });
                return;
            }
            spdlog::debug("{}: send failed: {}", peer_, std::strerror(errno));
            close();
            return;
        }
        auto left = static_cast<std::uint64_t>(n);
        auto from_head = std::min(left, head_left_);
        head_left_ -= from_head;
        body_sent_ += left - from_head;
        while (left > 0) {
            auto& c = out_.front();
            auto used = std::min(left, c.size);
            c.size -= used;
            left -= used;
            if (c.fd < 0) {
                c.data += used;
            } else {
                c.offset += used;
            }
            if (c.size == 0) out_.pop_front();
        }
        last_activity_ = Clock::now();
    }
    flushing_ = false;
    on_flushed();
}

void HttpSession::on_flushed() {
    if (queue_.empty()) return;
    if (slice_done_pending_) {
        slice_done_pending_ = false;
        next_slice_at_ = pacer_->on_transmitted(slice_started_at_, Clock::now());
    }
    if (items_.empty()) {
        finish_response();
    } else {
        pump();
    }
}

void HttpSession::finish_response() {
    auto& job = queue_.front();
    auto seconds = std::chrono::duration<double>(Clock::now() - job.received).count();
    shared_.metrics.response_seconds.observe(seconds);
    if (job.response.title && body_sent_ > 0)
        shared_.metrics.add_bytes_sent(job.response.title->name, body_sent_);
    bool keep_alive = job.keep_alive;
    queue_.pop_front();
    reset_transfer();
    responding_ = false;
    if (!keep_alive || (close_after_ && queue_.empty())) {
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

void HttpSession::reset_transfer() {
    ++generation_;
    items_.clear();
    slots_.clear();
    next_item_ = next_fetch_ = 0;
    head_sent_ = false;
    head_left_ = 0;
    body_sent_ = 0;
    pacer_.reset();
    slice_done_pending_ = false;
    if (pacing_wait_) pace_timer_.cancel();
    pacing_wait_ = false;
}

// ---- closing ------------------------------------------------------------------------------------------

// Half-close and discard what the peer still sends for a moment: closing with unread input would make the
// kernel send RST, which can destroy the response the peer has not read yet.
void HttpSession::linger_close() {
    if (closed_ || lingering_) return;
    lingering_ = true;
    last_activity_ = Clock::now();
    arm_watchdog(kLingerTime);
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    if (ec) {
        close();
        return;
    }
    if (!reading_) linger_read();
}

void HttpSession::linger_read() {
    reading_ = true;
    socket_.async_read_some(asio::buffer(discard_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                self->reading_ = false;
                                if (ec || self->closed_) {
                                    self->close();
                                } else {
                                    self->linger_read();
                                }
                            });
}

void HttpSession::close() {
    if (closed_) return;
    closed_ = true;
    if (!queue_.empty() && queue_.front().response.title && body_sent_ > 0) {
        shared_.metrics.add_bytes_sent(queue_.front().response.title->name, body_sent_);
        body_sent_ = 0;
    }
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    watchdog_.cancel();
    pace_timer_.cancel();
    out_.clear();
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
    if (closed_) return;
    Clock::duration limit =
        lingering_ ? Clock::duration(kLingerTime) : Clock::duration(shared_.config.idle_timeout);
    bool waiting_on_us = responding_ && !flushing_ && !lingering_;
    auto now = Clock::now();
    if (waiting_on_us) {
        arm_watchdog(limit);
        return;
    }
    auto idle = now - last_activity_;
    if (idle >= limit) {
        if (!lingering_)
            spdlog::debug("{}: closing after {} ms without progress", peer_,
                          std::chrono::duration_cast<std::chrono::milliseconds>(idle).count());
        close();
        return;
    }
    arm_watchdog(limit - idle);
}

void HttpSession::log_response(const Job& job) const {
    const auto& r = job.response;
    if (r.status < 400) return;
    if (r.status >= 500) {
        spdlog::warn("{} {} -> {} {}: {}", peer_, job.what, r.status, reason_phrase(r.status), r.reason);
    } else {
        spdlog::info("{} {} -> {} {}: {}", peer_, job.what, r.status, reason_phrase(r.status), r.reason);
    }
}

}  // namespace toast::server
