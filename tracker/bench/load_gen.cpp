// Load generator for toast-tracker: N distinct peers over M swarms announce R times each (first "started",
// then regular re-announces), over HTTP keep-alive connections or the UDP protocol, from C concurrent
// clients on one thread. Over HTTP either on keep-alive connections or, with --new-connection, one
// connection per announce as BitTorrent clients do (and as a tracker without keep-alive, like Debian's
// opentracker, requires); the latency then includes the TCP handshake. Bounded by the announce count and a
// wall-clock limit. Prints one line:
//   mode=http announces=N errors=N timeouts=N seconds=S announces_per_s=R p50_ms=MS p99_ms=MS max_ms=MS
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tracker/core/udp_protocol.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;
using namespace toast::tracker;

struct Options {
    std::string mode = "http";
    std::uint16_t port = 0;
    std::size_t peers = 10000;
    std::size_t swarms = 100;
    std::size_t rounds = 3;
    std::size_t concurrency = 32;
    double time_limit = 60;
    bool new_connection = false;
};

// The announce plan: announce k is peer k % peers, round k / peers; shared by every client.
struct Plan {
    Options opt;
    std::size_t next = 0;
    std::size_t total() const { return opt.peers * opt.rounds; }
    Clock::time_point deadline;
    std::vector<double> latencies_ms;
    std::size_t errors = 0;
    std::size_t timeouts = 0;

    bool take(std::size_t& k) {
        if (next >= total() || Clock::now() >= deadline) return false;
        k = next++;
        return true;
    }
    AnnounceRequest request(std::size_t k) const {
        const std::size_t peer = k % opt.peers;
        const std::size_t round = k / opt.peers;
        AnnounceRequest r;
        char buf[32];
        std::snprintf(buf, sizeof buf, "BENCHSWARM%010zu", peer % opt.swarms);
        r.info_hash = *InfoHash::from_bytes(std::string_view(buf, 20));
        std::snprintf(buf, sizeof buf, "-BENCH0-%012zu", peer);
        r.peer_id = *PeerId::from_bytes(std::string_view(buf, 20));
        r.port = static_cast<std::uint16_t>(1024 + peer % 60000);
        r.left = peer % 4 == 0 ? 0 : 1'000'000;  // a quarter seeders
        r.event = round == 0 ? AnnounceEvent::started : AnnounceEvent::none;
        return r;
    }
};

std::string escape(std::string_view bytes) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (char c : bytes) {
        auto b = static_cast<unsigned char>(c);
        if (std::isalnum(b)) {
            out += c;
        } else {
            out += '%';
            out += digits[b >> 4];
            out += digits[b & 0xf];
        }
    }
    return out;
}

class HttpClient : public std::enable_shared_from_this<HttpClient> {
  public:
    HttpClient(asio::io_context& ioc, Plan& plan) : stream_(ioc), plan_(plan) {}

    void start(const asio::ip::tcp::endpoint& ep) {
        ep_ = ep;
        if (plan_.opt.new_connection) return next();
        connect([self = shared_from_this()] { self->next(); });
    }

  private:
    template <class Then>
    void connect(Then then) {
        stream_.expires_after(std::chrono::seconds(10));
        stream_.async_connect(ep_, [self = shared_from_this(), then](beast::error_code ec) {
            if (ec) return self->fail();
            beast::error_code ignored;
            self->stream_.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
            then();
        });
    }

    void next() {
        std::size_t k = 0;
        if (!plan_.take(k)) return;
        started_ = Clock::now();
        if (plan_.opt.new_connection) {
            beast::error_code ignored;
            stream_.socket().close(ignored);
            buffer_.clear();
            return connect([self = shared_from_this(), k] { self->send(k); });
        }
        send(k);
    }

    void send(std::size_t k) {
        auto r = plan_.request(k);
        std::string target = "/announce?info_hash=" + escape(r.info_hash.view()) +
                             "&peer_id=" + escape(r.peer_id.view()) + "&port=" + std::to_string(r.port) +
                             "&uploaded=0&downloaded=0&left=" + std::to_string(r.left) + "&compact=1" +
                             (r.event == AnnounceEvent::started ? "&event=started" : "");
        req_ = {http::verb::get, target, 11};
        req_.set(http::field::host, "127.0.0.1");
        if (plan_.opt.new_connection) req_.keep_alive(false);
        stream_.expires_after(std::chrono::seconds(10));
        http::async_write(stream_, req_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return self->fail();
            self->parser_.emplace();
            http::async_read(self->stream_, self->buffer_, *self->parser_,
                             [self](beast::error_code rec, std::size_t) { self->on_read(rec); });
        });
    }

    void on_read(beast::error_code ec) {
        if (ec) return fail();
        plan_.latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - started_).count());
        // A refusal (e.g. a whitelist that does not list the swarm) may come as 200 with a failure reason.
        const auto& res = parser_->get();
        if (res.result_int() != 200 || res.body().find("failure reason") != std::string::npos) plan_.errors++;
        next();
    }

    void fail() { plan_.errors++; }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    http::request<http::empty_body> req_;
    std::optional<http::response_parser<http::string_body>> parser_;
    Plan& plan_;
    asio::ip::tcp::endpoint ep_;
    Clock::time_point started_;
};

class UdpClient : public std::enable_shared_from_this<UdpClient> {
  public:
    UdpClient(asio::io_context& ioc, Plan& plan, asio::ip::udp::endpoint target, std::uint32_t id)
        : socket_(ioc, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
          timer_(ioc),
          plan_(plan),
          target_(target),
          txid_(id << 20) {}

    void start() { send_connect(); }

  private:
    void send_connect() {
        connecting_ = true;
        send(udp::write_connect_request(++txid_));
    }

    void next() {
        if (!plan_.take(current_)) return;
        send_announce();
    }

    void send_announce() {
        connecting_ = false;
        started_ = Clock::now();
        send(udp::write_announce_request(connection_id_, ++txid_, plan_.request(current_), 0, -1));
    }

    void send(std::vector<std::uint8_t> packet) {
        out_ = std::move(packet);
        socket_.send_to(asio::buffer(out_), target_);
        timer_.expires_after(std::chrono::seconds(1));
        timer_.async_wait([self = shared_from_this(), tx = txid_](beast::error_code ec) {
            if (ec || tx != self->txid_) return;
            // Lost or dropped: count it and try again (a fresh connect, in case the id went stale).
            self->plan_.timeouts++;
            if (++self->retries_ > 5) {
                self->plan_.errors++;
                return;
            }
            self->socket_.cancel();
        });
        socket_.async_receive(
            asio::buffer(in_),
            [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_receive(ec, n); });
    }

    void on_receive(beast::error_code ec, std::size_t n) {
        if (ec == asio::error::operation_aborted) {
            // Timed out: repeat the same step.
            if (connecting_) return send_connect();
            return send_announce();
        }
        if (ec || n < 8) {
            plan_.errors++;
            return;
        }
        auto u32 = [&](std::size_t at) {
            return (std::uint32_t{in_[at]} << 24) | (std::uint32_t{in_[at + 1]} << 16) |
                   (std::uint32_t{in_[at + 2]} << 8) | in_[at + 3];
        };
        if (u32(4) != txid_) {  // a late answer to a retried request: keep waiting for ours
            socket_.async_receive(
                asio::buffer(in_),
                [self = shared_from_this()](beast::error_code e, std::size_t m) { self->on_receive(e, m); });
            return;
        }
        timer_.cancel();
        retries_ = 0;
        const std::uint32_t action = u32(0);
        if (connecting_) {
            if (action != 0 || n < 16) {
                plan_.errors++;
                return;
            }
            connection_id_ = (std::uint64_t{u32(8)} << 32) | u32(12);
            return next();
        }
        plan_.latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - started_).count());
        if (action != 1) plan_.errors++;
        next();
    }

    asio::ip::udp::socket socket_;
    asio::steady_timer timer_;
    Plan& plan_;
    asio::ip::udp::endpoint target_;
    std::uint32_t txid_;
    std::uint64_t connection_id_ = 0;
    std::size_t current_ = 0;
    bool connecting_ = true;
    int retries_ = 0;
    std::vector<std::uint8_t> out_;
    std::array<std::uint8_t, 2048> in_{};
    Clock::time_point started_;
};

double percentile(std::vector<double>& v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

int usage(const char* msg) {
    std::fprintf(stderr,
                 "tracker_load_gen: %s\nusage: tracker_load_gen --mode http|udp --port PORT [--peers 10000] "
                 "[--swarms 100] [--rounds 3] [--concurrency 32] [--time-limit 60] [--new-connection]\n",
                 msg);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--new-connection") {
            opt.new_connection = true;
            continue;
        }
        if (i + 1 >= argc) return usage(("missing value for " + a).c_str());
        std::string v = argv[++i];
        char* end = nullptr;
        const double n = std::strtod(v.c_str(), &end);
        const bool numeric = end && *end == '\0' && n > 0;
        if (a == "--mode") {
            if (v != "http" && v != "udp") return usage("mode must be http or udp");
            opt.mode = v;
        } else if (!numeric) {
            return usage(("bad value for " + a + ": " + v).c_str());
        } else if (a == "--port") {
            opt.port = static_cast<std::uint16_t>(n);
        } else if (a == "--peers") {
            opt.peers = static_cast<std::size_t>(n);
        } else if (a == "--swarms") {
            opt.swarms = static_cast<std::size_t>(n);
        } else if (a == "--rounds") {
            opt.rounds = static_cast<std::size_t>(n);
        } else if (a == "--concurrency") {
            opt.concurrency = static_cast<std::size_t>(n);
        } else if (a == "--time-limit") {
            opt.time_limit = n;
        } else {
            return usage(("unknown option " + a).c_str());
        }
    }
    if (opt.port == 0) return usage("--port is required");

    asio::io_context ioc(1);
    Plan plan;
    plan.opt = opt;
    plan.latencies_ms.reserve(plan.total());
    const auto start = Clock::now();
    plan.deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.time_limit));
    const auto addr = asio::ip::make_address("127.0.0.1");
    for (std::size_t i = 0; i < opt.concurrency; ++i) {
        if (opt.mode == "http") {
            std::make_shared<HttpClient>(ioc, plan)->start(asio::ip::tcp::endpoint(addr, opt.port));
        } else {
            std::make_shared<UdpClient>(ioc, plan, asio::ip::udp::endpoint(addr, opt.port),
                                        static_cast<std::uint32_t>(i + 1))
                ->start();
        }
    }
    ioc.run();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::size_t done = plan.latencies_ms.size();
    const double p50 = percentile(plan.latencies_ms, 0.50);
    const double p99 = percentile(plan.latencies_ms, 0.99);
    // With a fixed number of clients waiting at a time, a pause of the tracker delays only those few
    // announces: it shows in the maximum, not in the percentiles.
    const double max = percentile(plan.latencies_ms, 1.0);
    std::printf(
        "mode=%s announces=%zu planned=%zu errors=%zu timeouts=%zu seconds=%.3f announces_per_s=%.0f "
        "p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
        opt.mode.c_str(), done, plan.total(), plan.errors, plan.timeouts, seconds,
        static_cast<double>(done) / seconds, p50, p99, max);
    return done == plan.total() && plan.errors == 0 ? 0 : 1;
}
