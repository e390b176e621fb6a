#include "server/bench/loadgen/trial.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <sstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "server/bench/loadgen/direct_viewer.hpp"
#include "server/bench/loadgen/viewer_shared.hpp"

namespace toast::loadgen {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kHeadLimit = 16 * 1024;

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "http://HOST:PORT/PATH" as an endpoint (a numeric host) and the path; nullopt for anything else.
std::optional<std::pair<tcp::endpoint, std::string>> parse_location(const std::string& url) {
    constexpr std::string_view kScheme = "http://";
    if (url.rfind(kScheme, 0) != 0) return std::nullopt;
    const auto slash = url.find('/', kScheme.size());
    const auto authority =
        url.substr(kScheme.size(), slash == std::string::npos ? std::string::npos : slash - kScheme.size());
    const auto colon = authority.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    boost::system::error_code ec;
    auto host = authority.substr(0, colon);
    if (host == "localhost") host = "127.0.0.1";
    const auto address = asio::ip::make_address(host, ec);
    if (ec) return std::nullopt;
    try {
        const auto port = std::stoul(authority.substr(colon + 1));
        if (port == 0 || port > 65535) return std::nullopt;
        return std::pair{tcp::endpoint(address, static_cast<std::uint16_t>(port)),
                         slash == std::string::npos ? std::string("/") : url.substr(slash)};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

class Viewer final : public TrialViewer, public std::enable_shared_from_this<Viewer> {
  public:
    Viewer(asio::io_context& io, Shared& shared, tcp::endpoint server, std::string title)
        : socket_(io),
          retry_timer_(io),
          shared_(shared),
          server_(server),
          title_(std::move(title)),
          path_(shared.spec.path_prefix + title_) {}

    void start() override {
        started_ = true;
        requested_ = Clock::now();
        connect();
    }

    void connect() {
        head_.clear();
        request_ = "GET " + path_ + " HTTP/1.1\r\nHost: " + server_.address().to_string() + ":" +
                   std::to_string(server_.port()) + "\r\nConnection: close\r\n\r\n";
        socket_ = tcp::socket(retry_timer_.get_executor());
        socket_.async_connect(server_, [self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return self->fail("connect: " + ec.message());
            asio::async_write(self->socket_, asio::buffer(self->request_),
                              [self](boost::system::error_code wec, std::size_t) {
                                  if (wec) return self->fail("write: " + wec.message());
                                  self->read();
                              });
        });
    }

    // Cut off by the trial's deadline check.
    bool overdue(Clock::time_point now) const override {
        if (done_ || !started_) return false;
        if (!playback_)
            return now - requested_ >
                   std::chrono::duration<double>(shared_.spec.slack * 2 + shared_.spec.retry_for);
        return std::chrono::duration<double>(now - requested_).count() > deadline_;
    }
    void cut_off() override {
        fail("cut off: still playing " + std::to_string(shared_.spec.slack) + " s after its schedule");
    }
    bool done() const { return done_; }

  private:
    void read() {
        socket_.async_read_some(asio::buffer(buffer_),
                                [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                                    self->on_read(ec, n);
                                });
    }

    void on_read(boost::system::error_code ec, std::size_t n) {
        if (done_) return;
        const auto now = Clock::now();
        if (n > 0) {
            if (!playback_) {
                head_.append(buffer_.data(), n);
                const auto end = head_.find("\r\n\r\n");
                if (end == std::string::npos) {
                    if (head_.size() > kHeadLimit) return fail("response head over 16 KiB");
                } else if (!on_head(head_.substr(0, end + 2))) {
                    return;
                } else {
                    body(now, head_.size() - end - 4);
                }
            } else {
                body(now, n);
            }
            if (done_) return;
        }
        if (ec) {
            if (playback_ && received_ >= length_) return finish(now);
            return fail(ec == asio::error::eof ? "connection closed early" : "read: " + ec.message());
        }
        read();
    }

    // Parses the status line and headers; false when the viewer is finished (refused, error).
    bool on_head(const std::string& head) {
        std::istringstream in(head);
        std::string version, line;
        int status = 0;
        in >> version >> status;
        std::getline(in, line);
        std::optional<std::uint64_t> length;
        std::optional<double> retry;
        std::string location;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            const auto name = lower(line.substr(0, colon));
            auto value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            try {
                if (name == "content-length") length = std::stoull(value);
                if (name == "retry-after") retry = std::stod(value);
                if (name == "location") location = value;
            } catch (const std::exception&) {
                return fail("bad " + name + " header '" + value + "'"), false;
            }
        }
        if (status == 307 && redirects_ < kMaxRedirects) {
            // A node of a tier without room names one with room.
            auto target = parse_location(location);
            if (!target) return fail("307 with an unusable Location '" + location + "'"), false;
            ++redirects_;
            ++shared_.result.redirects;
            server_ = target->first;
            path_ = target->second;
            reconnect(std::chrono::milliseconds(0));
            return false;
        }
        if (status == 503) {
            ++shared_.result.refusals;
            if (retry) shared_.result.retry_after.push_back(*retry);
            const double wait = std::max(1.0, retry.value_or(1.0));
            const double since = std::chrono::duration<double>(Clock::now() - requested_).count();
            if (since + wait <= shared_.spec.retry_for) {
                // A player asks again, of the server it first asked.
                server_ = first_server_;
                path_ = shared_.spec.path_prefix + title_;
                redirects_ = 0;
                reconnect(std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::duration<double>(wait)));
                return false;
            }
            ++shared_.result.refused;
            close();
            return false;
        }
        if (status != 200 || !length) {
            fail("status " + std::to_string(status) + (length ? "" : " without Content-Length"));
            return false;
        }
        ++shared_.result.admitted;
        ++shared_.streaming;
        streaming_ = true;
        shared_.result.peak_streams = std::max(shared_.result.peak_streams, shared_.streaming);
        length_ = *length;
        const auto& spec = shared_.spec;
        auto trace = spec.traces.find(title_);
        NeedCurve need = trace != spec.traces.end()
                             ? NeedCurve::rounds(spec.trace_round, trace->second)
                             : NeedCurve::constant(bytes_per_second(spec.bitrate), length_);
        const std::uint64_t initial = trace != spec.traces.end()
                                          ? (trace->second.empty() ? 0 : trace->second[0])
                                          : bytes_in(spec.bitrate, spec.time_slice).value();
        const double duration = need.duration();
        playback_.emplace(std::move(need), initial, requested_, spec.watch);
        // A viewer still playing this long after its request is far behind any schedule the server could
        // keep (its stalls say how far): stop waiting for it.
        deadline_ = (spec.watch ? std::min(*spec.watch, duration) : duration) +
                    2 * std::chrono::duration<double>(spec.time_slice).count() + spec.slack;
        return true;
    }

    void body(Clock::time_point now, std::size_t n) {
        received_ += n;
        playback_->on_bytes(now, received_);
        if (received_ >= length_ || playback_->done()) finish(now);
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

    // Closes this connection and asks again after `wait` (a redirect, a retry).
    void reconnect(std::chrono::milliseconds wait) {
        boost::system::error_code ec;
        socket_.shutdown(tcp::socket::shutdown_both, ec);
        socket_.close(ec);
        retry_timer_.expires_after(wait);
        retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code tec) {
            if (!tec && !self->done_) self->connect();
        });
    }

    void close() {
        if (done_) return;
        done_ = true;
        --shared_.open;
        if (streaming_) --shared_.streaming;
        retry_timer_.cancel();
        boost::system::error_code ec;
        socket_.shutdown(tcp::socket::shutdown_both, ec);
        socket_.close(ec);
    }

    static constexpr int kMaxRedirects = 8;
    tcp::socket socket_;
    asio::steady_timer retry_timer_;
    Shared& shared_;
    tcp::endpoint server_;
    const tcp::endpoint first_server_ = server_;
    std::string title_;
    std::string path_;
    int redirects_ = 0;
    bool streaming_ = false;
    std::string request_;
    Clock::time_point requested_;
    std::array<char, 64 * 1024> buffer_{};
    std::string head_;
    std::optional<Playback> playback_;
    std::uint64_t length_ = 0;
    std::uint64_t received_ = 0;
    double deadline_ = 0;
    bool started_ = false;
    bool done_ = false;
};

void disk_counters(const std::map<std::string, double>& m, const std::string& name,
                   std::vector<std::uint64_t>& out) {
    for (std::size_t d = 0;; ++d) {
        auto it = m.find(name + "{disk=\"" + std::to_string(d) + "\"}");
        if (it == m.end()) return;
        out.push_back(static_cast<std::uint64_t>(it->second));
    }
}

}  // namespace

std::map<std::string, double> scrape_metrics(const std::string& host, std::uint16_t port) {
    std::map<std::string, double> out;
    try {
        asio::io_context io;
        tcp::socket s(io);
        s.connect(tcp::endpoint(asio::ip::make_address(host), port));
        const std::string req = "GET /metrics HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
        asio::write(s, asio::buffer(req));
        std::string text;
        boost::system::error_code ec;
        std::array<char, 65536> buf{};
        for (;;) {
            auto n = s.read_some(asio::buffer(buf), ec);
            text.append(buf.data(), n);
            if (ec) break;
        }
        const auto body = text.find("\r\n\r\n");
        if (body == std::string::npos) return out;
        std::istringstream in(text.substr(body + 4));
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#') continue;
            const auto space = line.rfind(' ');
            if (space == std::string::npos) continue;
            try {
                out[line.substr(0, space)] = std::stod(line.substr(space + 1));
            } catch (const std::exception&) {
            }
        }
    } catch (const std::exception&) {
        out.clear();
    }
    return out;
}

namespace {

// One second's requests to each node: the most asked node's over the mean, when there were at least 10 a
// node on average and two nodes or more.
std::optional<double> ask_peak(const std::vector<std::uint64_t>& asks) {
    if (asks.size() < 2) return std::nullopt;
    std::uint64_t total = 0, most = 0;
    for (auto a : asks) {
        total += a;
        most = std::max(most, a);
    }
    const double mean = static_cast<double>(total) / static_cast<double>(asks.size());
    if (mean < 10) return std::nullopt;
    return static_cast<double>(most) / mean;
}

}  // namespace

TrialResult run_trial(const TrialSpec& spec, std::size_t viewers) {
    TrialResult result;
    result.viewers = viewers;
    std::mt19937_64 rng(spec.seed);
    const auto starts = arrival_times(spec.arrivals, viewers, rng);
    const auto picks = pick_titles(spec.pick, viewers, spec.weights, rng);

    std::vector<std::pair<std::string, std::uint16_t>> servers{{spec.host, spec.port}};
    servers.insert(servers.end(), spec.more_servers.begin(), spec.more_servers.end());
    std::vector<std::map<std::string, double>> before;
    for (const auto& [host, port] : servers)
        before.push_back(scrape_metrics(host, port));
    asio::io_context io;
    Shared shared{spec, result, viewers, 0, std::vector<std::uint64_t>(servers.size())};
    std::vector<tcp::endpoint> endpoints;
    for (const auto& [host, port] : servers)
        endpoints.emplace_back(asio::ip::make_address(host), port);
    TierLayout tier;
    for (std::size_t n = 0; n < spec.tier_ids.size() && n < servers.size(); ++n)
        tier.nodes.push_back(
            {spec.tier_ids[n], "http://" + servers[n].first + ":" + std::to_string(servers[n].second)});
    tier.replicas =
        std::min<std::uint32_t>(spec.tier_replicas, static_cast<std::uint32_t>(tier.nodes.size()));
    tier.placement = spec.tier_placement;
    std::vector<std::shared_ptr<TrialViewer>> all;
    std::vector<std::unique_ptr<asio::steady_timer>> timers;
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < viewers; ++i) {
        std::shared_ptr<TrialViewer> v;
        if (spec.tier_ids.empty())
            v = std::make_shared<Viewer>(io, shared, endpoints[i % endpoints.size()], spec.titles[picks[i]]);
        else
            v = make_direct_viewer(io, shared, tier, endpoints, spec.titles[picks[i]], rng());
        all.push_back(v);
        auto timer = std::make_unique<asio::steady_timer>(io);
        timer->expires_at(
            t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(starts[i])));
        timer->async_wait([v](boost::system::error_code ec) {
            if (!ec) v->start();
        });
        timers.push_back(std::move(timer));
    }
    // Once a second: cut off viewers far behind their schedule; stop when everyone is done.
    asio::steady_timer watchdog(io);
    std::vector<double> samples, ask_peaks;
    std::function<void()> check = [&] {
        const auto now = Clock::now();
        for (auto& v : all)
            if (v->overdue(now)) v->cut_off();
        if (shared.streaming > 0) samples.push_back(static_cast<double>(shared.streaming));
        if (auto peak = ask_peak(shared.node_asks)) ask_peaks.push_back(*peak);
        std::fill(shared.node_asks.begin(), shared.node_asks.end(), 0);
        if (shared.open == 0) return;
        watchdog.expires_after(std::chrono::seconds(1));
        watchdog.async_wait([&](boost::system::error_code ec) {
            if (!ec) check();
        });
    };
    check();
    io.run();
    result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();

    if (!samples.empty()) {
        std::sort(samples.begin(), samples.end());
        result.median_streams = samples[samples.size() / 2];
    }
    if (!ask_peaks.empty()) {
        std::sort(ask_peaks.begin(), ask_peaks.end());
        result.ask_peak_median = ask_peaks[ask_peaks.size() / 2];
        result.ask_peak_p90 = ask_peaks[ask_peaks.size() * 9 / 10];
    }
    for (std::size_t n = 0; n < servers.size(); ++n) {
        const auto after = scrape_metrics(servers[n].first, servers[n].second);
        std::vector<std::uint64_t> r0, r1, b0, b1;
        disk_counters(before[n], "toast_disk_reads_total", r0);
        disk_counters(after, "toast_disk_reads_total", r1);
        disk_counters(before[n], "toast_disk_bytes_read_total", b0);
        disk_counters(after, "toast_disk_bytes_read_total", b1);
        std::uint64_t reads = 0, bytes = 0;
        if (r0.size() == r1.size() && b0.size() == b1.size() && r0.size() == b0.size()) {
            for (std::size_t d = 0; d < r0.size(); ++d) {
                result.disk_reads.push_back(r1[d] - r0[d]);
                result.disk_bytes.push_back(b1[d] - b0[d]);
                reads += r1[d] - r0[d];
                bytes += b1[d] - b0[d];
            }
        }
        result.node_reads.push_back(reads);
        result.node_bytes.push_back(bytes);
    }
    return result;
}

}  // namespace toast::loadgen
