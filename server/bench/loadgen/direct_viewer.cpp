#include "server/bench/loadgen/direct_viewer.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "server/bench/loadgen/playback.hpp"

namespace toast::loadgen {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kHeadLimit = 16 * 1024;

struct Answer {
    int status = 0;
    std::optional<std::uint64_t> length;
    std::optional<std::uint64_t> total;  // of the title, from Content-Range
    std::optional<double> load;          // Toast-Load
};

// The status line and the headers a direct viewer reads; nullopt when a value is malformed.
std::optional<Answer> parse_answer(const std::string& head) {
    std::istringstream in(head);
    std::string version, line;
    Answer a;
    in >> version >> a.status;
    std::getline(in, line);
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        auto name = line.substr(0, colon);
        for (auto& c : name)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        try {
            if (name == "content-length") a.length = std::stoull(value);
            if (name == "toast-load") a.load = std::stod(value);
            if (name == "content-range") {
                const auto slash = value.rfind('/');
                if (slash == std::string::npos) return std::nullopt;
                a.total = std::stoull(value.substr(slash + 1));
            }
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    return a;
}

class DirectViewer final : public TrialViewer, public std::enable_shared_from_this<DirectViewer> {
  public:
    DirectViewer(asio::io_context& io, Shared& shared, const TierLayout& tier,
                 std::vector<tcp::endpoint> nodes, std::string title, std::uint64_t salt)
        : timer_(io),
          shared_(shared),
          tier_(tier),
          nodes_(std::move(nodes)),
          loads_(nodes_.size()),
          title_(std::move(title)),
          salt_(salt) {
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            sockets_.emplace_back(io);
    }

    void start() override {
        started_ = true;
        requested_ = Clock::now();
        fetch();
    }

    bool overdue(Clock::time_point now) const override {
        if (done_ || !started_) return false;
        if (!playback_) return now - requested_ > std::chrono::duration<double>(shared_.spec.slack * 2);
        return std::chrono::duration<double>(now - requested_).count() > deadline_;
    }
    void cut_off() override {
        fail("cut off: still playing " + std::to_string(shared_.spec.slack) + " s after its schedule");
    }

  private:
    std::uint64_t block_size() const { return shared_.spec.block_size; }

    // Asks for block_ from the less loaded of its holders not yet tried for it.
    void fetch() {
        if (done_) return;
        const auto now = Clock::now();
        std::vector<HolderView> views;
        for (auto h : tier_.holders(title_, block_)) {
            if (tried_.contains(h.value())) continue;
            const auto& heard = loads_[h.value()];
            const double age_ms = heard && !shared_.spec.loads_fresh
                                      ? std::chrono::duration<double, std::milli>(now - heard->second).count()
                                      : 0.0;
            views.push_back({h, true, false, heard ? std::optional(heard->first) : std::nullopt, age_ms});
        }
        const auto chosen =
            choose_holder(views, shared_.spec.ties_to_first ? 0 : holder_tie_break(salt_, block_));
        if (!chosen) return fail("block " + std::to_string(block_) + ": every holder failed or refused");
        node_ = chosen->value();
        tried_.insert(node_);
        ++shared_.node_asks[node_];
        const auto first = block_ * block_size();
        const auto end = size_ ? std::min(first + block_size(), *size_) : first + block_size();
        const auto& ep = nodes_[node_];
        request_ = "GET /titles/" + title_ + " HTTP/1.1\r\nHost: " + ep.address().to_string() + ":" +
                   std::to_string(ep.port()) + "\r\nRange: bytes=" + std::to_string(first) + "-" +
                   std::to_string(end - 1) + "\r\nToast-Direct: 1\r\n\r\n";
        head_.clear();
        body_left_ = 0;
        in_body_ = false;
        auto& socket = sockets_[node_];
        if (socket.is_open()) {
            reused_ = true;
            return send();
        }
        reused_ = false;
        socket.async_connect(ep, [self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return self->on_failure("connect: " + ec.message());
            self->send();
        });
    }

    void send() {
        asio::async_write(sockets_[node_], asio::buffer(request_),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                              if (ec) return self->on_failure("write: " + ec.message());
                              self->read();
                          });
    }

    void read() {
        sockets_[node_].async_read_some(
            asio::buffer(buffer_), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                self->on_read(ec, n);
            });
    }

    void on_read(boost::system::error_code ec, std::size_t n) {
        if (done_) return;
        const auto now = Clock::now();
        if (n > 0 && !consume(now, n)) return;  // the answer is complete, or the viewer moved on
        if (ec) {
            if (reused_ && head_.empty() && !in_body_) {
                // The node closed the idle keep-alive connection: ask again on a new one.
                close_socket(node_);
                tried_.erase(node_);
                return fetch();
            }
            return on_failure(ec == asio::error::eof ? "connection closed early" : "read: " + ec.message());
        }
        read();
    }

    // Takes n bytes from buffer_; false when nothing more is to be read for this request.
    bool consume(Clock::time_point now, std::size_t n) {
        std::size_t body = n;
        if (!in_body_) {
            head_.append(buffer_.data(), n);
            const auto end = head_.find("\r\n\r\n");
            if (end == std::string::npos) {
                if (head_.size() > kHeadLimit) return fail("response head over 16 KiB"), false;
                return true;
            }
            if (!on_head(head_.substr(0, end + 2))) return false;
            body = head_.size() - end - 4;
        }
        const auto take = std::min<std::uint64_t>(body, body_left_);
        received_ += take;
        body_left_ -= take;
        playback_->on_bytes(now, received_);
        if (received_ >= *size_ || playback_->done()) return finish(now), false;
        if (body_left_ > 0) return true;
        next_block();
        return false;
    }

    // The answer's head: true when its body is the block's bytes.
    bool on_head(const std::string& head) {
        const auto a = parse_answer(head);
        if (!a) return fail("malformed answer head"), false;
        if (a->load) loads_[node_] = std::pair{*a->load, Clock::now()};
        const auto first = block_ * block_size();
        if (a->status != 206 || !a->length || !a->total || (size_ && *a->total != *size_) ||
            *a->total <= first) {
            if (a->status == 307) ++shared_.result.redirects;
            if (a->status == 503) ++shared_.result.refusals;
            // The other holder is asked; this connection's unread body makes it unusable.
            on_failure("status " + std::to_string(a->status) + " for block " + std::to_string(block_));
            return false;
        }
        const auto expected = std::min(block_size(), *a->total - first);
        if (*a->length != expected)
            return fail("a block answer of " + std::to_string(*a->length) + " bytes"), false;
        if (!size_) begin(*a->total);
        in_body_ = true;
        body_left_ = *a->length;
        return true;
    }

    // The first block's answer: the title's size is known, playback is judged from here.
    void begin(std::uint64_t size) {
        size_ = size;
        const auto& spec = shared_.spec;
        ++shared_.result.admitted;
        ++shared_.streaming;
        streaming_ = true;
        shared_.result.peak_streams = std::max(shared_.result.peak_streams, shared_.streaming);
        NeedCurve need = NeedCurve::constant(bytes_per_second(spec.bitrate), size);
        const double duration = need.duration();
        playback_.emplace(std::move(need), bytes_in(spec.bitrate, spec.time_slice).value(), requested_,
                          spec.watch);
        deadline_ = (spec.watch ? std::min(*spec.watch, duration) : duration) +
                    2 * std::chrono::duration<double>(spec.time_slice).count() + spec.slack;
    }

    // Blocks 0 and 1 at once, then block j at the start plus j - 1 time slices (or now, when later).
    void next_block() {
        ++block_;
        tried_.clear();
        const auto due = requested_ + static_cast<long>(block_ - 1) * shared_.spec.time_slice;
        if (due <= Clock::now()) return fetch();
        timer_.expires_at(std::chrono::time_point_cast<Clock::duration>(due));
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->fetch();
        });
    }

    // This holder failed the block: the other one is asked.
    void on_failure(const std::string& why) {
        if (done_) return;
        close_socket(node_);
        last_failure_ = why;
        fetch_or_fail();
    }
    void fetch_or_fail() {
        for (auto h : tier_.holders(title_, block_))
            if (!tried_.contains(h.value())) return fetch();
        fail(last_failure_);
    }

    void finish(Clock::time_point now) {
        if (done_) return;
        record_finish(shared_.result, *playback_, now);
        close();
    }

    void fail(const std::string& why) {
        if (done_) return;
        record_failure(shared_.result, playback_, title_, why);
        close();
    }

    void close_socket(std::size_t node) {
        boost::system::error_code ec;
        sockets_[node].shutdown(tcp::socket::shutdown_both, ec);
        sockets_[node].close(ec);
    }

    void close() {
        if (done_) return;
        done_ = true;
        --shared_.open;
        if (streaming_) --shared_.streaming;
        timer_.cancel();
        for (std::size_t i = 0; i < sockets_.size(); ++i)
            close_socket(i);
    }

    asio::steady_timer timer_;
    Shared& shared_;
    const TierLayout& tier_;
    std::vector<tcp::endpoint> nodes_;
    std::vector<tcp::socket> sockets_;  // one keep-alive connection per node, opened when first asked
    // Each node's Toast-Load in this viewer's last answer from it, and when that answer came.
    std::vector<std::optional<std::pair<double, Clock::time_point>>> loads_;
    std::string title_;
    std::uint64_t salt_;
    std::uint64_t block_ = 0;
    std::set<std::uint32_t> tried_;  // holders asked for block_
    std::uint32_t node_ = 0;         // the node asked now
    bool reused_ = false;
    std::string request_;
    std::string head_;
    bool in_body_ = false;
    std::uint64_t body_left_ = 0;
    std::array<char, 64 * 1024> buffer_{};
    std::optional<std::uint64_t> size_;
    std::optional<Playback> playback_;
    std::uint64_t received_ = 0;
    Clock::time_point requested_;
    double deadline_ = 0;
    std::string last_failure_;
    bool started_ = false;
    bool streaming_ = false;
    bool done_ = false;
};

}  // namespace

std::shared_ptr<TrialViewer> make_direct_viewer(asio::io_context& io, Shared& shared, const TierLayout& tier,
                                                const std::vector<tcp::endpoint>& nodes, std::string title,
                                                std::uint64_t salt) {
    return std::make_shared<DirectViewer>(io, shared, tier, nodes, std::move(title), salt);
}

}  // namespace toast::loadgen
