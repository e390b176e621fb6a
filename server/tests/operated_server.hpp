// The real toast-server as an operator runs it, for the integration tests: two disks, one title ingested
// from an MP4 (so its torrent's file is movie.mp4), a running server, SIGHUP reloads.
#pragma once

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace toast::server::testing {

namespace tt = toast::testing;
using namespace std::chrono_literals;

class Operated {
  public:
    // `customize` edits the config before the ingest and the start (signed-URL keys, TLS, ...).
    explicit Operated(bool access_log = false, const std::function<void(Operated&)>& customize = {}) {
        for (int d = 0; d < 2; ++d)
            std::filesystem::create_directory(dir_ / ("disk" + std::to_string(d)));
        port_ = tt::free_tcp_port();
        config_ = {{"listen", "127.0.0.1:" + std::to_string(port_)},
                   {"disks", {{{"path", (dir_ / "disk0").string()}}, {{"path", (dir_ / "disk1").string()}}}},
                   {"policy", "rda"},
                   {"block_size", "64KiB"},
                   {"piece_size", "32KiB"},
                   {"public_url", "http://vod.test:8080"}};
        if (access_log) config_["access_log"] = {{"path", (dir_ / "access.log").string()}};
        if (customize) customize(*this);
        write_config();
        source_ = ingest("movie", "film.mp4", 300'000, 5);
        server_ = std::make_unique<tt::ChildProcess>(
            TOAST_SERVER_BIN, std::vector<std::string>{"--config", config_path(), "serve"}, dir_.path());
        REQUIRE(tt::wait_for_tcp_port(port_, 10s));
    }

    std::string ingest(const std::string& name, const std::string& file, std::uint64_t size,
                       std::uint64_t seed) {
        tt::write_random_file(dir_ / file, size, seed);
        auto r =
            tt::run(TOAST_SERVER_BIN, {"--config", config_path(), "ingest", name, (dir_ / file).string()});
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        return tt::read_file(dir_ / file);
    }

    void write_config() const { std::ofstream(config_path()) << config_.dump(2); }
    nlohmann::json& config() { return config_; }
    std::string config_path() const { return (dir_ / "config.json").string(); }
    std::filesystem::path path(const std::string& name) const { return dir_ / name; }
    std::uint16_t port() const { return port_; }
    const std::string& source() const { return source_; }
    tt::ChildProcess& server() { return *server_; }

    // Sends SIGHUP and waits (bounded) until the server has logged its `count`-th reload (one line naming
    // the config file per reload).
    void reload(std::size_t count) {
        REQUIRE(::kill(server_->pid(), SIGHUP) == 0);
        for (int i = 0; i < 100 && reloads() < count; ++i)
            std::this_thread::sleep_for(50ms);
        REQUIRE(reloads() == count);
    }
    std::size_t reloads() const {
        const auto err = server_->stderr_text();
        const auto marker = "reload: " + config_path();
        std::size_t n = 0;
        for (auto at = err.find(marker); at != std::string::npos; at = err.find(marker, at + 1))
            ++n;
        return n;
    }

  private:
    tt::TempDir dir_;
    std::uint16_t port_ = 0;
    nlohmann::json config_;
    std::string source_;
    std::unique_ptr<tt::ChildProcess> server_;
};

}  // namespace toast::server::testing
