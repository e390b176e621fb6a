// The Beast server in-process on 127.0.0.1 and a free port, over a fake store made of maps: the fixture the
// HTTP tests share.
#pragma once

#include <spdlog/spdlog.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "fake_store.hpp"
#include "server/http/http_service.hpp"
#include "test_support.hpp"

namespace toast::server::testing {

using namespace std::chrono_literals;

inline std::string pattern(std::size_t n, unsigned seed) {
    std::string s(n, '\0');
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (std::size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s[i] = static_cast<char>(x);
    }
    return s;
}

// A running HttpService on its own thread; stopped (drained) on destruction.
struct Server {
    toast::testing::TempDir dir;
    FakeStore store;
    FakeDisks disks{2};
    MetricsRegistry metrics;
    ServerConfig config;
    std::string small = pattern(10000, 1);
    std::string big;
    std::unique_ptr<HttpService> service;
    std::thread thread;

    explicit Server(std::function<void(ServerConfig&)> adjust = {}) {
        spdlog::set_level(spdlog::level::warn);
        config.listen = Endpoint{"127.0.0.1", 0};
        config.idle_timeout = 5s;
        // The fake store's titles have no block layout to admit against: the tests that exercise admission
        // control turn it on.
        config.admission.enabled = false;
        if (adjust) adjust(config);
        store.add("small", small);
        toast::testing::write_random_file(dir / "big.bin", 10 * 1024 * 1024 + 12345, 7);
        big = toast::testing::read_file(dir / "big.bin");
        store.add_file("big", dir / "big.bin");
        service = std::make_unique<HttpService>(config, store, disks, metrics);
        thread = std::thread([this] { service->run(); });
    }
    ~Server() { stop(); }
    void stop() {
        if (thread.joinable()) {
            service->shutdown(2s);
            thread.join();
        }
    }
    std::uint16_t port() const { return service->port(); }
};

// The value of one series in a /metrics text; -1 when it is absent.
inline double metric(const std::string& text, const std::string& series) {
    auto pos = text.find("\n" + series + " ");
    if (pos == std::string::npos) return -1;
    return std::stod(text.substr(pos + series.size() + 2));
}

}  // namespace toast::server::testing
