// What the push end-to-end tests share: more boxes beside the ServiceBed's one (each `toast-client serve` as
// a child process with its own save dir and API port), a bounded wait on a box's status, and a canned HTTP
// server that plays the operator's server for assignments (answers set by the test; anything else 404).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "service_bed.hpp"

namespace toast::client::testing {

class Box {
  public:
    Box(const std::filesystem::path& dir, const std::string& name, const std::vector<std::string>& options)
        : save_dir_(dir / name), logs_(dir / "logs" / name), port_(toast::testing::free_tcp_port()) {
        std::filesystem::create_directories(logs_);
        std::vector<std::string> args{
            "serve",       "--save-dir", save_dir_.string(), "--api", "127.0.0.1:" + std::to_string(port_),
            "--log-level", "info"};
        args.insert(args.end(), options.begin(), options.end());
        process_ = std::make_unique<toast::testing::ChildProcess>(TOAST_CLIENT_BIN, args, logs_);
        REQUIRE(toast::testing::wait_for_tcp_port(port_, 15s));
    }
    ApiAnswer call(const std::string& method, const std::string& target, const std::string& type = {},
                   const std::string& body = {}) {
        return api(port_, method, target, type, body);
    }
    json status() {
        auto a = call("GET", "/api/status");
        REQUIRE(a.status == 200);
        return a.j();
    }
    // Polls the box's status until `done` holds (bounded); returns the last status.
    json wait(const std::function<bool(const json&)>& done, std::chrono::milliseconds timeout = 30s) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        auto s = status();
        while (!done(s) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(100ms);
            s = status();
        }
        return s;
    }
    json title(const std::string& id) {
        const auto s = status();
        for (const auto& t : s["titles"])
            if (t["id"] == id) return t;
        return nullptr;
    }
    void stop() {
        auto code = process_->stop(SIGTERM, 15s);
        INFO(process_->stderr_text());
        REQUIRE(code);
        CHECK(*code == 0);
        process_.reset();
    }
    std::string log() const { return process_ ? process_->stderr_text() : std::string(); }
    const std::filesystem::path& save_dir() const { return save_dir_; }

  private:
    std::filesystem::path save_dir_, logs_;
    std::uint16_t port_;
    std::unique_ptr<toast::testing::ChildProcess> process_;
};

// One request per connection, answered from `routes` by path prefix (longest first); 404 otherwise.
class CannedServer {
  public:
    CannedServer() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        REQUIRE(::listen(fd_, 16) == 0);
        thread_ = std::thread([this] { serve(); });
    }
    ~CannedServer() {
        stop_ = true;
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    void set(const std::string& prefix, std::string body, int status = 200) {
        std::lock_guard lock(mutex_);
        routes_[prefix] = {status, std::move(body)};
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    int requests(const std::string& prefix) {
        std::lock_guard lock(mutex_);
        return counts_[prefix];
    }

  private:
    void serve() {
        while (!stop_) {
            int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) continue;
            timeval tv{5, 0};
            ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            std::string in;
            char buf[4096];
            while (in.find("\r\n\r\n") == std::string::npos) {
                auto n = ::read(c, buf, sizeof buf);
                if (n <= 0) break;
                in.append(buf, static_cast<std::size_t>(n));
            }
            auto sp = in.find(' ');
            auto target =
                sp == std::string::npos ? std::string() : in.substr(sp + 1, in.find(' ', sp + 1) - sp - 1);
            int status = 404;
            std::string body = "not here\n";
            {
                std::lock_guard lock(mutex_);
                std::size_t best = 0;
                for (auto& [prefix, answer] : routes_) {
                    if (target.rfind(prefix, 0) == 0 && prefix.size() > best) {
                        best = prefix.size();
                        status = answer.first;
                        body = answer.second;
                        ++counts_[prefix];
                    }
                }
            }
            auto out = "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Not Found") +
                       "\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nConnection: close\r\n\r\n" + body;
            std::size_t sent = 0;
            while (sent < out.size()) {
                auto n = ::write(c, out.data() + sent, out.size() - sent);
                if (n <= 0) break;
                sent += static_cast<std::size_t>(n);
            }
            ::close(c);
        }
    }
    int fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::map<std::string, std::pair<int, std::string>> routes_;
    std::map<std::string, int> counts_;
    std::thread thread_;
};

}  // namespace toast::client::testing
