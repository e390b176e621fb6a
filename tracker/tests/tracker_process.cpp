#include "tracker_process.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <libtorrent/bdecode.hpp>

#include "tracker/core/udp_protocol.hpp"

namespace toast::tracker::testing {

namespace lt = libtorrent;

TrackerProcess::TrackerProcess(bool with_udp, const std::string& config_json,
                               const std::vector<std::string>& extra_args) {
    http_port_ = toast::testing::free_tcp_port();
    std::vector<std::string> args = {"--listen", "127.0.0.1:" + std::to_string(http_port_)};
    if (with_udp) {
        udp_port_ = toast::testing::free_udp_port();
        args.insert(args.end(), {"--udp", "127.0.0.1:" + std::to_string(udp_port_)});
    }
    if (!config_json.empty()) {
        auto path = dir_ / "tracker.json";
        std::ofstream(path) << config_json;
        args.insert(args.end(), {"--config", path.string()});
    }
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    process_ = std::make_unique<toast::testing::ChildProcess>(TOAST_TRACKER_BIN, args, dir_.path());
    if (!toast::testing::wait_for_tcp_port(http_port_, std::chrono::seconds(10))) {
        throw std::runtime_error("toast-tracker did not start: " + process_->stderr_text());
    }
}

toast::testing::HttpResponse TrackerProcess::get(const std::string& target) const {
    return toast::testing::http_request(http_port_, "GET", target);
}

std::optional<SwarmCounts> TrackerProcess::http_scrape(const InfoHash& hash) const {
    auto res = get("/scrape?info_hash=" + url_escape(hash.view()));
    if (res.status != 200) return std::nullopt;
    lt::error_code ec;
    auto root =
        lt::bdecode(lt::span<const char>(res.body.data(), static_cast<std::ptrdiff_t>(res.body.size())), ec);
    if (ec || root.type() != lt::bdecode_node::dict_t) return std::nullopt;
    auto file = root.dict_find_dict("files").dict_find_dict(std::string(hash.view()));
    if (!file) return std::nullopt;
    return SwarmCounts{static_cast<std::uint32_t>(file.dict_find_int_value("complete")),
                       static_cast<std::uint32_t>(file.dict_find_int_value("incomplete")),
                       static_cast<std::uint64_t>(file.dict_find_int_value("downloaded"))};
}

namespace {

std::uint64_t read_u64(const std::vector<std::uint8_t>& b, std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i)
        v = (v << 8) | b[at + i];
    return v;
}

std::uint32_t read_u32(const std::vector<std::uint8_t>& b, std::size_t at) {
    return static_cast<std::uint32_t>(read_u64(b, at) >> 32);
}

class UdpSocket {
  public:
    explicit UdpSocket(bool v6 = false) : v6_(v6) {
        fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
        if (fd_ < 0) throw std::runtime_error("socket() failed");
    }
    ~UdpSocket() { ::close(fd_); }
    UdpSocket(const UdpSocket&) = delete;
    UdpSocket& operator=(const UdpSocket&) = delete;

    void send(std::uint16_t port, const std::vector<std::uint8_t>& packet) {
        if (v6_) {
            sockaddr_in6 to6{};
            to6.sin6_family = AF_INET6;
            to6.sin6_addr = in6addr_loopback;
            to6.sin6_port = htons(port);
            ::sendto(fd_, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to6), sizeof to6);
            return;
        }
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        to.sin_port = htons(port);
        ::sendto(fd_, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
    std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds timeout) {
        timeval tv{};
        tv.tv_sec = static_cast<long>(timeout.count() / 1000);
        tv.tv_usec = static_cast<long>((timeout.count() % 1000) * 1000);
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        std::vector<std::uint8_t> buf(65536);
        auto n = ::recv(fd_, buf.data(), buf.size(), 0);
        if (n < 0) return std::nullopt;
        buf.resize(static_cast<std::size_t>(n));
        return buf;
    }

  private:
    bool v6_ = false;
    int fd_ = -1;
};

}  // namespace

std::optional<std::vector<std::uint8_t>> udp_exchange(std::uint16_t port,
                                                      const std::vector<std::uint8_t>& packet,
                                                      std::chrono::milliseconds timeout, bool v6) {
    UdpSocket s(v6);
    s.send(port, packet);
    return s.receive(timeout);
}

void udp_send(std::uint16_t port, const std::vector<std::uint8_t>& packet) {
    UdpSocket s;
    s.send(port, packet);
}

std::optional<SwarmCounts> TrackerProcess::udp_scrape(const InfoHash& hash) const {
    // Connection ids are bound to the client's address and port, so both requests use one socket.
    UdpSocket s;
    s.send(udp_port_, udp::write_connect_request(11));
    auto connect = s.receive(std::chrono::seconds(2));
    if (!connect || connect->size() != 16 || read_u32(*connect, 0) != 0) return std::nullopt;
    s.send(udp_port_, udp::write_scrape_request(read_u64(*connect, 8), 12, {hash}));
    auto reply = s.receive(std::chrono::seconds(2));
    if (!reply || reply->size() != 20 || read_u32(*reply, 0) != 2) return std::nullopt;
    return SwarmCounts{read_u32(*reply, 8), read_u32(*reply, 16), read_u32(*reply, 12)};
}

std::string TrackerProcess::stats() const {
    return get("/stats").body;
}

double TrackerProcess::metric(const std::string& series) const {
    std::istringstream in(get("/metrics").body);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
}

std::string http_get_v6(std::uint16_t port, const std::string& target) {
    boost::asio::io_context ioc;
    boost::beast::tcp_stream stream(ioc);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("::1"), port));
    boost::beast::http::request<boost::beast::http::empty_body> req(boost::beast::http::verb::get, target,
                                                                    11);
    req.set(boost::beast::http::field::host, "[::1]");
    boost::beast::http::write(stream, req);
    boost::beast::flat_buffer buffer;
    boost::beast::http::response<boost::beast::http::string_body> res;
    boost::beast::http::read(stream, buffer, res);
    return res.body();
}

bool ipv6_loopback_available() {
    int fd = ::socket(AF_INET6, SOCK_DGRAM, 0);
    if (fd < 0) return false;
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

std::string url_escape(std::string_view bytes) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (char c : bytes) {
        auto b = static_cast<unsigned char>(c);
        out += '%';
        out += digits[b >> 4];
        out += digits[b & 0xf];
    }
    return out;
}

std::string announce_target(char hash, int peer, int port, int left) {
    std::string id = "-TT0001-" + std::to_string(100000000000 + peer);
    return "/announce?info_hash=" + url_escape(std::string(20, hash)) + "&peer_id=" + id +
           "&port=" + std::to_string(port) + "&uploaded=0&downloaded=0&left=" + std::to_string(left);
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return cond();
}

}  // namespace toast::tracker::testing
