#include "swarm_fixture.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

using namespace std::chrono_literals;
using toast::testing::ChildProcess;

namespace toast::client::testing {

SwarmFixture::SwarmFixture(const std::string& server_log_level)
    : server_port_(toast::testing::free_tcp_port()), tracker_port_(toast::testing::free_tcp_port()) {
    for (auto d : {"d0", "d1", "logs"})
        std::filesystem::create_directories(dir_ / d);
    nlohmann::json config{{"listen", "127.0.0.1:" + std::to_string(server_port_)},
                          {"disks", {(dir_ / "d0").string(), (dir_ / "d1").string()}}};
    if (!server_log_level.empty()) config["log_level"] = server_log_level;
    std::ofstream(dir_ / "server.json") << config;
}

void SwarmFixture::patch_server_config(const std::string& patch) {
    auto config = nlohmann::json::parse(toast::testing::read_file(dir_ / "server.json"));
    config.merge_patch(nlohmann::json::parse(patch));
    std::ofstream(dir_ / "server.json") << config;
}

std::string SwarmFixture::sign(const std::vector<std::string>& args) const {
    std::vector<std::string> all{"--config", (dir_ / "server.json").string(), "sign"};
    all.insert(all.end(), args.begin(), args.end());
    auto r = toast::testing::run(TOAST_SERVER_BIN, all, 30s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.out.size() > 1);
    return r.out.substr(0, r.out.size() - 1);
}

std::string SwarmFixture::server_metrics(std::uint16_t port) const {
    auto r = toast::testing::http_request(port ? port : server_port_, "GET", "/metrics");
    REQUIRE(r.status == 200);
    return r.body;
}

double SwarmFixture::server_metric(const std::string& series, std::uint16_t port) const {
    std::istringstream in(server_metrics(port));
    for (std::string line; std::getline(in, line);)
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    return -1;
}

void SwarmFixture::ingest(const std::string& title, const std::filesystem::path& media,
                          const std::string& bitrate, const std::vector<std::string>& options) {
    title_ = title;
    media_ = media;
    std::vector<std::string> args{"--config", (dir_ / "server.json").string(), "ingest", title,
                                  media.string()};
    args.insert(args.end(), {"--torrent", torrent().string(), "--bitrate", bitrate});
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--announce", announce_url()});
    auto r = toast::testing::run(TOAST_SERVER_BIN, args, 60s);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
}

void SwarmFixture::start_tracker(const std::string& extra_config) {
    const auto config = dir_ / "tracker.json";
    nlohmann::json j{{"state_file", tracker_state().string()}, {"state_save_interval", "1s"}};
    j.update(nlohmann::json::parse(extra_config));
    std::ofstream(config) << j;
    tracker_ = std::make_unique<ChildProcess>(
        TOAST_TRACKER_BIN,
        std::vector<std::string>{"--listen", "127.0.0.1:" + std::to_string(tracker_port_), "--config",
                                 config.string()},
        logs());
    REQUIRE(toast::testing::wait_for_tcp_port(tracker_port_, 10s));
}

void SwarmFixture::kill_tracker() {
    REQUIRE(tracker_->stop(SIGKILL, 5s));
    tracker_.reset();
}

void SwarmFixture::start_server() {
    server_ = std::make_unique<ChildProcess>(
        TOAST_SERVER_BIN, std::vector<std::string>{"--config", (dir_ / "server.json").string(), "serve"},
        logs());
    REQUIRE(toast::testing::wait_for_tcp_port(server_port_, 10s));
}

void SwarmFixture::stop_server() {
    REQUIRE(server_->stop(SIGTERM, 5s));
    server_.reset();
}

std::unique_ptr<ChildProcess> SwarmFixture::start_client(
    const std::string& command, const std::string& who, const std::vector<std::string>& options,
    const std::optional<std::filesystem::path>& log_dir) {
    std::filesystem::create_directories(save_dir(who));
    std::vector<std::string> args{command,   torrent().string(), "--save-dir", save_dir(who).string(),
                                  "--stats", stats(who).string()};
    if (std::find(options.begin(), options.end(), "--listen") == options.end())
        args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    args.insert(args.end(), options.begin(), options.end());
    return std::make_unique<ChildProcess>(TOAST_CLIENT_BIN, args, log_dir.value_or(logs()));
}

std::unique_ptr<ChildProcess> SwarmFixture::seed(const std::string& who,
                                                 const std::vector<std::string>& options) {
    std::filesystem::create_directories(save_dir(who));
    std::filesystem::copy_file(media_, data(who));
    std::vector<std::string> args{"--behavior", "seed", "--log-level", "warn"};
    args.insert(args.end(), options.begin(), options.end());
    return start_client("stream", who, args);
}

bool SwarmFixture::wait_for_seeders(int n, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        try {
            auto res = toast::testing::http_request(tracker_port_, "GET", "/stats");
            if (res.status == 200 && nlohmann::json::parse(res.body)["totals"]["seeders"].get<int>() >= n) {
                return true;
            }
        } catch (const std::exception&) {
            // not answering yet: try again
        }
        std::this_thread::sleep_for(100ms);
    }
    return false;
}

std::string SwarmFixture::announce_url() const {
    return "http://127.0.0.1:" + std::to_string(tracker_port_) + "/announce";
}

std::vector<StatsRecord> read_stats(const std::filesystem::path& path) {
    std::vector<std::string> lines;
    {
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
    }
    std::vector<StatsRecord> out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        auto j = nlohmann::json::parse(lines[i], nullptr, false);
        if (j.is_discarded() && i + 1 == lines.size()) break;  // a line being written right now
        std::string error;
        auto r = j.is_discarded() ? std::nullopt : stats_from_json(j, &error);
        INFO(path.string() << ": " << lines[i] << ": " << error);
        REQUIRE(r);
        out.push_back(*r);
    }
    return out;
}

}  // namespace toast::client::testing
