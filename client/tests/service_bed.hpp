// The fixture of the `toast-client serve` end-to-end tests: the real toast-server and toast-tracker
// (SwarmFixture) with ingested MPEG-TS titles, the service as a child process, and its control API.
#pragma once

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "swarm_fixture.hpp"
#include "test_support.hpp"

namespace toast::client::testing {

using json = nlohmann::json;
using toast::testing::ChildProcess;
using namespace std::chrono_literals;

struct ApiAnswer {
    int status = 0;
    std::string head;
    std::string body;
    json j() const { return json::parse(body); }
};

// One request with a body on a fresh connection (the test support's client sends none).
inline ApiAnswer api(std::uint16_t port, const std::string& method, const std::string& target,
                     const std::string& type = {}, const std::string& body = {}) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (!type.empty()) req += "Content-Type: " + type + "\r\n";
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n" + body;
    auto raw = toast::testing::raw_exchange(port, req, 20s);
    ApiAnswer a;
    auto end = raw.find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    a.head = raw.substr(0, end);
    a.body = raw.substr(end + 4);
    a.status = std::stoi(raw.substr(9, 3));
    return a;
}

// A kSeconds H.264/AAC MPEG-TS test pattern.
inline void make_video(const std::filesystem::path& out, int seconds, int tone) {
    auto r = toast::testing::run(FFMPEG_BIN,
                                 {"-v",
                                  "error",
                                  "-y",
                                  "-f",
                                  "lavfi",
                                  "-i",
                                  "testsrc=size=320x240:rate=25",
                                  "-f",
                                  "lavfi",
                                  "-i",
                                  "sine=frequency=" + std::to_string(tone) + ":sample_rate=44100",
                                  "-t",
                                  std::to_string(seconds),
                                  "-c:v",
                                  "libx264",
                                  "-preset",
                                  "ultrafast",
                                  "-g",
                                  "25",
                                  "-b:v",
                                  "800k",
                                  "-c:a",
                                  "aac",
                                  "-b:a",
                                  "64k",
                                  out.string()},
                                 60s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
}

inline std::vector<std::string> framecrc(const std::string& input) {
    auto r = toast::testing::run(
        FFMPEG_BIN, {"-v", "error", "-nostdin", "-i", input, "-map", "0", "-f", "framecrc", "-"}, 60s);
    INFO(input << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < r.out.size()) {
        auto end = r.out.find('\n', at);
        if (end == std::string::npos) end = r.out.size();
        auto line = r.out.substr(at, end - at);
        if (!line.empty() && line[0] != '#') lines.push_back(line);
        at = end + 1;
    }
    return lines;
}

// The server with ingested titles and the tracker, and the service as a child process.
class ServiceBed : public SwarmFixture {
  public:
    ServiceBed() : SwarmFixture("warn") {}

    // Ingests `name` (an MPEG-TS of `seconds`) and returns its torrent's bytes.
    std::string add_video(const std::string& name, int seconds, int tone) {
        // ffmpeg picks the container by the extension: a title named without one is still MPEG-TS.
        auto media = dir() / ("media-" + name + (name.find('.') == std::string::npos ? ".ts" : ""));
        make_video(media, seconds, tone);
        media_[name] = media;
        ingest(name, media, std::to_string(std::filesystem::file_size(media) * 8 / seconds),
               {"--piece-size", "32KiB"});
        auto bytes = toast::testing::read_file(torrent());
        if (torrent() != dir() / (name + ".torrent"))
            std::filesystem::copy_file(torrent(), dir() / (name + ".torrent"));
        return bytes;
    }
    std::filesystem::path media_of(const std::string& name) const { return media_.at(name); }

    void start_service(const std::vector<std::string>& extra = {}) {
        if (api_port_ == 0) api_port_ = toast::testing::free_tcp_port();
        std::vector<std::string> args{
            "serve",       "--save-dir", box().string(), "--api", "127.0.0.1:" + std::to_string(api_port_),
            "--log-level", "info"};
        args.insert(args.end(), extra.begin(), extra.end());
        std::filesystem::create_directories(logs() / "service");
        service_ = std::make_unique<ChildProcess>(TOAST_CLIENT_BIN, args, logs() / "service");
        REQUIRE(toast::testing::wait_for_tcp_port(api_port_, 15s));
    }
    // The tracker, the server, a seed the tracker lists, then the service: the swarm a box joins. Returns the
    // seed, which stops when it is dropped.
    std::unique_ptr<ChildProcess> start_seeded_service() {
        start_tracker();
        start_server();
        auto seeder = seed("seed");
        REQUIRE(wait_for_seeders(1, 10s));
        start_service();
        return seeder;
    }
    void stop_service() {
        auto status = service_->stop(SIGTERM, 15s);
        INFO(service_->stderr_text());
        REQUIRE(status);
        CHECK(*status == 0);
        service_.reset();
    }
    std::filesystem::path box() const { return dir() / "box"; }
    std::uint16_t port() const { return api_port_; }
    ApiAnswer call(const std::string& method, const std::string& target, const std::string& type = {},
                   const std::string& body = {}) {
        return api(api_port_, method, target, type, body);
    }
    std::string service_log() const { return service_ ? service_->stderr_text() : std::string(); }

    // Adds a title from its torrent's bytes and returns its id.
    std::string add(const std::string& torrent_bytes) {
        auto a = call("POST", "/api/titles", "application/x-bittorrent", torrent_bytes);
        INFO(a.body);
        REQUIRE(a.status == 201);
        return a.j()["id"].get<std::string>();
    }
    json status(const std::string& id) {
        auto a = call("GET", "/api/titles/" + id);
        INFO(a.body);
        REQUIRE(a.status == 200);
        return a.j();
    }
    // Plays and reads the whole title through the player URL; returns the URL.
    std::string play_through(const std::string& id) {
        auto p = call("POST", "/api/titles/" + id + "/play");
        INFO(p.body);
        REQUIRE(p.status == 200);
        auto url = p.j()["url"].get<std::string>();
        auto port = static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
        auto path = url.substr(url.find('/', 7));
        auto r = toast::testing::http_request(port, "GET", path, {}, 60s);
        REQUIRE(r.status == 200);
        CHECK(r.body.size() == status(id)["size"].get<std::size_t>());
        return url;
    }
    // Polls a title's status until `done` holds (bounded).
    json wait_status(const std::string& id, const std::function<bool(const json&)>& done,
                     std::chrono::milliseconds timeout = 20s) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        json s = status(id);
        while (!done(s) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(100ms);
            s = status(id);
        }
        return s;
    }

  private:
    std::uint16_t api_port_ = 0;
    std::map<std::string, std::filesystem::path> media_;
    std::unique_ptr<ChildProcess> service_;
};

inline bool is_id(const std::string& s) {
    return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace toast::client::testing
