#include "test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

extern char** environ;

namespace toast::testing {
namespace fs = std::filesystem;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

TempDir::TempDir() {
    std::random_device rd;
    for (int i = 0; i < 100; ++i) {
        auto candidate = fs::temp_directory_path() / ("toast-test-" + std::to_string(rd()));
        if (fs::create_directory(candidate)) {
            path_ = candidate;
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

namespace {

std::uint16_t free_port(int type) {
    int fd = ::socket(AF_INET, type, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        throw std::runtime_error("bind() to port 0 failed");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

std::uint16_t free_tcp_port() {
    return free_port(SOCK_STREAM);
}
std::uint16_t free_udp_port() {
    return free_port(SOCK_DGRAM);
}

bool wait_for_tcp_port(std::uint16_t port, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port);
        bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        ::close(fd);
        if (ok) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

ChildProcess::ChildProcess(const std::string& program, const std::vector<std::string>& args,
                           const fs::path& log_dir) {
    static int counter = 0;
    auto stem = fs::path(program).filename().string() + "-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter++);
    out_ = log_dir / (stem + ".out");
    err_ = log_dir / (stem + ".err");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> storage{program};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : storage)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + program);
    pid_ = pid;
}

ChildProcess::~ChildProcess() {
    if (running() && !stop(SIGTERM, std::chrono::seconds(5))) kill_hard();
}

bool ChildProcess::running() {
    if (status_ || pid_ <= 0) return false;
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return false;
    }
    return true;
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status_;
}

std::optional<int> ChildProcess::stop(int signal, std::chrono::milliseconds timeout) {
    if (running()) ::kill(pid_, signal);
    return wait(timeout);
}

void ChildProcess::kill_hard() {
    if (running()) ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(5));
}

std::string ChildProcess::stdout_text() const {
    return slurp(out_);
}
std::string ChildProcess::stderr_text() const {
    return slurp(err_);
}

RunResult run(const std::string& program, const std::vector<std::string>& args,
              std::chrono::milliseconds timeout) {
    TempDir logs;
    RunResult result;
    {
        ChildProcess child(program, args, logs.path());
        auto status = child.wait(timeout);
        if (!status) {
            result.timed_out = true;
            child.kill_hard();
        } else {
            result.exit_code = *status;
        }
        result.out = child.stdout_text();
        result.err = child.stderr_text();
    }
    return result;
}

std::string HttpResponse::header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
}

// Synchronous Beast/asio operations ignore expires_after, so both helpers run asynchronous operations on a
// private io_context for at most `timeout`.
HttpResponse http_request(std::uint16_t port, const std::string& method, const std::string& target,
                          const std::map<std::string, std::string>& headers,
                          std::chrono::milliseconds timeout) {
    return http_request_with_body(port, method, target, headers, {}, timeout);
}

HttpResponse http_request_with_body(std::uint16_t port, const std::string& method, const std::string& target,
                                    const std::map<std::string, std::string>& headers,
                                    const std::string& body, std::chrono::milliseconds timeout) {
    boost::asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(timeout);
    http::request<http::string_body> req(http::string_to_verb(method), target, 11);
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    for (const auto& [k, v] : headers)
        req.set(k, v);
    if (!body.empty()) {
        req.body() = body;
        req.prepare_payload();
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ull << 34);
    parser.skip(method == "HEAD");
    beast::error_code result = boost::asio::error::timed_out;
    stream.async_connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
                         [&](beast::error_code ec) {
                             if (ec) {
                                 result = ec;
                                 return;
                             }
                             http::async_write(stream, req, [&](beast::error_code wec, std::size_t) {
                                 if (wec) {
                                     result = wec;
                                     return;
                                 }
                                 http::async_read(stream, buffer, parser,
                                                  [&](beast::error_code rec, std::size_t) { result = rec; });
                             });
                         });
    ioc.run_for(timeout + std::chrono::milliseconds(100));
    if (result) throw std::runtime_error("http_request " + method + " " + target + ": " + result.message());
    auto& res = parser.get();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res) {
        std::string name(f.name_string());
        for (auto& c : name)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.headers[name] = std::string(f.value());
    }
    out.body = std::move(res.body());
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return out;
}

std::string raw_exchange(std::uint16_t port, const std::string& bytes, std::chrono::milliseconds timeout) {
    boost::asio::io_context ioc;
    tcp::socket socket(ioc);
    std::string out;
    std::array<char, 65536> buf{};
    std::function<void()> read_more = [&] {
        socket.async_read_some(boost::asio::buffer(buf), [&](beast::error_code ec, std::size_t n) {
            out.append(buf.data(), n);
            if (!ec) read_more();
        });
    };
    socket.async_connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
                         [&](beast::error_code ec) {
                             if (ec) return;
                             boost::asio::async_write(socket, boost::asio::buffer(bytes),
                                                      [&](beast::error_code, std::size_t) {});
                             read_more();
                         });
    ioc.run_for(timeout);
    return out;
}

void write_random_file(const fs::path& path, std::uint64_t size, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::ofstream out(path, std::ios::binary);
    std::string chunk;
    while (size > 0) {
        std::uint64_t n = std::min<std::uint64_t>(size, 1 << 20);
        chunk.resize(n);
        for (std::uint64_t i = 0; i < n; i += 8) {
            std::uint64_t v = rng();
            for (std::uint64_t j = 0; j < 8 && i + j < n; ++j)
                chunk[i + j] = static_cast<char>(v >> (8 * j));
        }
        out.write(chunk.data(), static_cast<std::streamsize>(n));
        size -= n;
    }
}

TestPki make_test_pki(const fs::path& dir) {
    fs::create_directories(dir);
    TestPki p;
    p.ca = dir / "ca.pem";
    p.ca_key = dir / "ca.key";
    p.other_ca = dir / "other-ca.pem";
    p.server_cert = dir / "server.pem";
    p.server_key = dir / "server.key";
    const auto ext = dir / "server.ext";
    std::ofstream(ext) << "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                          "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n";
    auto openssl = [](const std::vector<std::string>& args) {
        auto r = run("/usr/bin/openssl", args, std::chrono::seconds(30));
        if (r.exit_code != 0) throw std::runtime_error("openssl " + args.front() + " failed: " + r.err);
    };
    const std::vector<std::string> ec_key{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"};
    auto ca = [&](const fs::path& cert, const fs::path& key, const std::string& cn) {
        std::vector<std::string> args{"req", "-x509"};
        args.insert(args.end(), ec_key.begin(), ec_key.end());
        args.insert(args.end(),
                    {"-keyout", key.string(), "-out", cert.string(), "-days", "2", "-subj", "/CN=" + cn});
        openssl(args);
    };
    ca(p.ca, p.ca_key, "Toast Test CA");
    ca(p.other_ca, dir / "other-ca.key", "Some Other CA");
    std::vector<std::string> csr{"req"};
    csr.insert(csr.end(), ec_key.begin(), ec_key.end());
    csr.insert(csr.end(), {"-keyout", p.server_key.string(), "-out", (dir / "server.csr").string(), "-subj",
                           "/CN=127.0.0.1"});
    openssl(csr);
    openssl({"x509", "-req", "-in", (dir / "server.csr").string(), "-CA", p.ca.string(), "-CAkey",
             p.ca_key.string(), "-CAcreateserial", "-out", p.server_cert.string(), "-days", "2", "-extfile",
             ext.string()});
    return p;
}

std::string read_file(const fs::path& path) {
    return slurp(path);
}

}  // namespace toast::testing
