// `toast-client serve` end to end on 127.0.0.1: the real toast-server and toast-tracker (SwarmFixture), the
// service as a child process, driven through its control API as a set-top-box app would: add a title (by its
// torrent's bytes and by URL), play it through ffmpeg, read its status and the event stream, stop, remove;
// restart the service and find the titles and positions again; evict the least recently watched title when
// the disk quota is reached; and the piece map page as headless Chromium renders it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "swarm_fixture.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using json = nlohmann::json;
using toast::testing::ChildProcess;

namespace {

struct ApiAnswer {
    int status = 0;
    std::string head;
    std::string body;
    json j() const { return json::parse(body); }
};

// One request with a body on a fresh connection (the test support's client sends none).
ApiAnswer api(std::uint16_t port, const std::string& method, const std::string& target,
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
void make_video(const std::filesystem::path& out, int seconds, int tone) {
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

std::vector<std::string> framecrc(const std::string& input) {
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
class ServiceBed : public toast::client::testing::SwarmFixture {
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

bool is_id(const std::string& s) {
    return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST_CASE("the service adds a title, plays it through ffmpeg, reports it, stops and removes it",
          "[client][service][integration]") {
    ServiceBed bed;
    auto torrent = bed.add_video("movie.ts", 8, 440);
    bed.start_tracker();
    bed.start_server();
    auto seed = bed.seed("seed");
    REQUIRE(bed.wait_for_seeders(1, 10s));
    bed.start_service();

    auto added = bed.call("POST", "/api/titles", "application/x-bittorrent", torrent);
    INFO(added.body);
    REQUIRE(added.status == 201);
    auto id = added.j()["id"].get<std::string>();
    CHECK(is_id(id));
    CHECK(added.j()["state"] == "stopped");
    CHECK(added.j()["file"] == "movie.ts");
    CHECK(added.j()["size"] == std::filesystem::file_size(bed.media_of("movie.ts")));
    // Adding it again names the same title.
    auto again = bed.call("POST", "/api/titles", "application/x-bittorrent", torrent);
    CHECK(again.status == 200);
    CHECK(again.j()["id"] == id);

    // Bad requests: 4xx with a message.
    auto garbage = bed.call("POST", "/api/titles", "application/x-bittorrent", "not a torrent");
    CHECK(garbage.status == 422);
    CHECK(garbage.j()["error"].get<std::string>().find("the uploaded torrent") != std::string::npos);
    CHECK(bed.call("GET", "/api/titles/../../etc/passwd").status == 400);
    auto bad_id = bed.call("GET", "/api/titles/movie.ts");
    CHECK(bad_id.status == 400);
    CHECK(bad_id.j()["error"] ==
          "'movie.ts' is not a title id (the 40 lower-case hex digits of its info-hash)");
    CHECK(bed.call("GET", "/api/titles/" + std::string(40, '0')).status == 404);
    auto not_playing = bed.call("POST", "/api/titles/" + id + "/stop");
    CHECK(not_playing.status == 409);
    CHECK(not_playing.j()["error"] == "the title is not playing");
    auto file_url = bed.call("POST", "/api/titles", "application/json", R"({"url": "file:///etc/passwd"})");
    CHECK(file_url.status == 400);
    // Only requests naming the API's own address, and no title changes from another origin's page.
    auto rebound = toast::testing::raw_exchange(
        bed.port(), "GET /api/status HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", 5s);
    CHECK(rebound.rfind("HTTP/1.1 421 ", 0) == 0);
    auto cross = toast::testing::raw_exchange(
        bed.port(),
        "POST /api/titles/" + id +
            "/play HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n",
        5s);
    CHECK(cross.rfind("HTTP/1.1 403 ", 0) == 0);
    CHECK(bed.status(id)["state"] == "stopped");
    auto method = bed.call("PUT", "/api/titles/" + id);
    CHECK(method.status == 405);
    CHECK(method.head.find("Allow: GET, DELETE") != std::string::npos);

    // Play: the answer names the local URL; ffmpeg decodes it frame for frame like the file.
    auto play = bed.call("POST", "/api/titles/" + id + "/play");
    INFO(play.body);
    REQUIRE(play.status == 200);
    auto url = play.j()["url"].get<std::string>();
    CHECK(url.rfind("http://127.0.0.1:", 0) == 0);
    CHECK(url.substr(url.size() - 9) == "/movie.ts");
    CHECK(play.j()["resume_ms"] == 0);
    CHECK(bed.call("POST", "/api/titles/" + id + "/play").j()["url"] == url);  // already playing: same URL
    auto want = framecrc(bed.media_of("movie.ts").string());
    REQUIRE(want.size() > 100);
    CHECK(framecrc(url) == want);

    auto s = bed.wait_status(id, [](const json& j) { return j["pieces_had"] == j["pieces"]; });
    INFO(s.dump(2));
    CHECK(s["state"] == "playing");
    CHECK(s["pieces_had"] == s["pieces"]);
    CHECK(s["bytes_from_peers"].get<std::uint64_t>() + s["bytes_from_server"].get<std::uint64_t>() >=
          s["size"].get<std::uint64_t>());
    CHECK(s["stalls"] == 0);
    CHECK(s["position_ms"].get<std::int64_t>() > 0);
    CHECK(s["player_url"] == url);
    CHECK(s["map"]["cells"].get<std::string>().find('.') == std::string::npos);

    // The event stream: status events, each a JSON document naming the title.
    auto raw = toast::testing::raw_exchange(bed.port(), "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                            2500ms);
    CHECK(raw.find("Content-Type: text/event-stream") != std::string::npos);
    std::size_t events = 0;
    for (auto at = raw.find("event: status\ndata: "); at != std::string::npos;
         at = raw.find("event: status\ndata: ", at + 1)) {
        auto begin = at + 20;
        auto end = raw.find('\n', begin);
        REQUIRE(end != std::string::npos);
        auto e = json::parse(raw.substr(begin, end - begin));
        CHECK(e["titles"][0]["id"] == id);
        ++events;
    }
    CHECK(events >= 2);  // the first at once, then one a second

    // Stop: the title stays, seeding what it has.
    auto stop = bed.call("POST", "/api/titles/" + id + "/stop");
    INFO(stop.body);
    REQUIRE(stop.status == 200);
    CHECK(stop.j()["state"] == "stopped");
    auto stopped = bed.wait_status(id, [](const json& j) { return !j["checking"].get<bool>(); });
    CHECK(stopped["pieces_had"] == stopped["pieces"]);
    CHECK(std::filesystem::exists(bed.box() / "titles" / id / "movie.ts"));

    // Remove: gone from the list and from the disk.
    auto removed = bed.call("DELETE", "/api/titles/" + id);
    CHECK(removed.status == 200);
    CHECK(bed.call("GET", "/api/titles/" + id).status == 404);
    CHECK(bed.call("GET", "/api/titles").j()["titles"].empty());
    CHECK_FALSE(std::filesystem::exists(bed.box() / "titles" / id));
    bed.stop_service();
}

TEST_CASE("the service adds a title by URL and refuses an unreachable one",
          "[client][service][integration]") {
    ServiceBed bed;
    bed.add_video("movie.ts", 4, 440);
    auto web_port = toast::testing::free_tcp_port();
    ChildProcess web("/usr/bin/python3",
                     {"-m", "http.server", std::to_string(web_port), "--bind", "127.0.0.1", "--directory",
                      bed.dir().string()},
                     bed.logs());
    REQUIRE(toast::testing::wait_for_tcp_port(web_port, 10s));
    bed.start_service();
    auto base = "http://127.0.0.1:" + std::to_string(web_port);
    auto added =
        bed.call("POST", "/api/titles", "application/json", R"({"url": ")" + base + R"(/movie.ts.torrent"})");
    INFO(added.body);
    CHECK(added.status == 201);
    CHECK(added.j()["file"] == "movie.ts");
    auto missing =
        bed.call("POST", "/api/titles", "application/json", R"({"url": ")" + base + R"(/nothing.torrent"})");
    CHECK(missing.status == 502);
    CHECK(missing.j()["error"] ==
          "cannot fetch " + base + "/nothing.torrent: the server answered 404 File not found");
    auto not_torrent =
        bed.call("POST", "/api/titles", "application/json", R"({"url": ")" + base + R"(/media-movie.ts"})");
    CHECK(not_torrent.status == 422);
    bed.stop_service();
}

TEST_CASE(
    "a box needs only the server's URL: the service adds a title from the server's catalogue and plays "
    "it byte-identically",
    "[client][service][integration]") {
    ServiceBed bed;
    bed.add_video("movie", 4, 440);
    bed.start_tracker();
    bed.start_server();
    bed.start_service();
    auto catalog = toast::testing::http_request(bed.server_port(), "GET", "/catalog");
    REQUIRE(catalog.status == 200);
    auto titles = json::parse(catalog.body)["titles"];
    REQUIRE(titles.size() == 1);
    CHECK(titles[0]["name"] == "movie");
    CHECK(titles[0]["file"] == "movie.ts");  // the container's extension, found in the bytes
    auto url =
        "http://127.0.0.1:" + std::to_string(bed.server_port()) + titles[0]["torrent"].get<std::string>();
    auto added = bed.call("POST", "/api/titles", "application/json", json{{"url", url}}.dump());
    INFO(added.body);
    REQUIRE(added.status == 201);
    CHECK(added.j()["file"] == "movie.ts");
    CHECK(added.j()["id"] == titles[0]["info_hash"]);
    auto id = added.j()["id"].get<std::string>();

    auto play = bed.call("POST", "/api/titles/" + id + "/play");
    REQUIRE(play.status == 200);
    auto player_url = play.j()["url"].get<std::string>();
    CHECK(player_url.substr(player_url.size() - 9) == "/movie.ts");
    auto port = static_cast<std::uint16_t>(std::stoi(player_url.substr(player_url.rfind(':') + 1)));
    auto body =
        toast::testing::http_request(port, "GET", player_url.substr(player_url.find('/', 7)), {}, 60s);
    REQUIRE(body.status == 200);
    CHECK(body.body == toast::testing::read_file(bed.media_of("movie")));
    bed.stop_service();
}

TEST_CASE("the service reads its config file, and a bad one stops it with exit status 2",
          "[client][service][integration]") {
    toast::testing::TempDir dir;
    auto port = toast::testing::free_tcp_port();
    std::ofstream(dir / "client.json") << json{{"save_dir", (dir / "box").string()},
                                               {"listen", "127.0.0.1:0"},
                                               {"control_listen", "127.0.0.1:" + std::to_string(port)},
                                               {"disk_quota", "3MiB"},
                                               {"upload_limit", "4Mbps"},
                                               {"log_level", "warn"}};
    {
        ChildProcess service(TOAST_CLIENT_BIN, {"serve", "--config", (dir / "client.json").string()},
                             dir.path());
        REQUIRE(toast::testing::wait_for_tcp_port(port, 15s));
        auto status = api(port, "GET", "/api/status").j();
        CHECK(status["disk_quota"] == 3 * 1024 * 1024);
        CHECK(status["upload_limit_bps"] == 4'000'000);
        CHECK(std::filesystem::exists(dir / "box" / "titles"));
        auto code = service.stop(SIGTERM, 15s);
        REQUIRE(code);
        CHECK(*code == 0);
    }
    std::ofstream(dir / "bad.json") << R"({"save_dir": "/tmp/x", "control_listen": "0.0.0.0:80"})";
    auto bad = toast::testing::run(TOAST_CLIENT_BIN, {"serve", "--config", (dir / "bad.json").string()}, 30s);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("config field 'control_listen': '0.0.0.0:80' is not a loopback address") !=
          std::string::npos);
    auto corrupt_box = dir / "corrupt";
    std::filesystem::create_directories(corrupt_box);
    std::ofstream(corrupt_box / "titles.json") << "{\"version\": 1, \"titles\": [{}]}";
    auto corrupt = toast::testing::run(TOAST_CLIENT_BIN,
                                       {"serve", "--save-dir", corrupt_box.string(), "--api",
                                        "127.0.0.1:" + std::to_string(toast::testing::free_tcp_port())},
                                       30s);
    CHECK(corrupt.exit_code == 1);
    CHECK(corrupt.err.find(
              "titles.json: titles[0].id must be 40 lower-case hex digits (fix or remove the file)") !=
          std::string::npos);
    CHECK(toast::testing::read_file(corrupt_box / "titles.json") == "{\"version\": 1, \"titles\": [{}]}");
}

TEST_CASE("a restarted service resumes its titles and their playback positions",
          "[client][service][integration]") {
    ServiceBed bed;
    auto torrent = bed.add_video("movie.ts", 8, 440);
    bed.start_tracker();
    bed.start_server();
    bed.start_service();
    auto id = bed.add(torrent);
    auto play = bed.call("POST", "/api/titles/" + id + "/play");
    REQUIRE(play.status == 200);
    auto url = play.j()["url"].get<std::string>();
    auto port = static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
    // A player reads the first half, then keeps watching for a while.
    auto size = bed.status(id)["size"].get<std::uint64_t>();
    auto half = toast::testing::http_request(port, "GET", "/movie.ts",
                                             {{"Range", "bytes=0-" + std::to_string(size / 2)}}, 30s);
    REQUIRE(half.status == 206);
    auto watching =
        bed.wait_status(id, [](const json& j) { return j["position_ms"].get<std::int64_t>() >= 1500; });
    REQUIRE(watching["position_ms"].get<std::int64_t>() >= 1500);
    auto stop = bed.call("POST", "/api/titles/" + id + "/stop");
    REQUIRE(stop.status == 200);
    auto position = stop.j()["position_ms"].get<std::int64_t>();
    CHECK(position >= 1500);
    auto had = bed.wait_status(id, [](const json& j) { return !j["checking"].get<bool>(); })["pieces_had"];
    CHECK(had.get<int>() > 0);
    bed.stop_service();

    bed.start_service();
    auto list = bed.call("GET", "/api/titles").j()["titles"];
    REQUIRE(list.size() == 1);
    CHECK(list[0]["id"] == id);
    CHECK(list[0]["state"] == "stopped");
    CHECK(list[0]["position_ms"] == position);
    auto resumed = bed.wait_status(id, [&](const json& j) { return j["pieces_had"] == had; });
    CHECK(resumed["pieces_had"] == had);  // the pieces on disk, checked again, seed at once
    auto again = bed.call("POST", "/api/titles/" + id + "/play");
    REQUIRE(again.status == 200);
    CHECK(again.j()["resume_ms"] == position);
    bed.stop_service();
}

TEST_CASE("a title watched earlier keeps seeding: a new viewer takes it all from the box",
          "[client][service][integration]") {
    ServiceBed bed;
    auto torrent = bed.add_video("movie.ts", 6, 440);
    bed.start_tracker();
    bed.start_server();
    bed.start_service();
    auto id = bed.add(torrent);
    bed.play_through(id);
    REQUIRE(bed.call("POST", "/api/titles/" + id + "/stop").status == 200);
    auto stopped = bed.wait_status(
        id, [](const json& j) { return !j["checking"].get<bool>() && j["pieces_had"] == j["pieces"]; });
    REQUIRE(stopped["pieces_had"] == stopped["pieces"]);
    REQUIRE(bed.wait_for_seeders(1, 10s));
    // Without the server, the box is the only source.
    bed.stop_server();
    auto viewer = bed.start_client("stream", "viewer", {"--behavior", "download", "--log-level", "warn"});
    auto code = viewer->wait(60s);
    INFO(viewer->stderr_text());
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(toast::testing::read_file(bed.data("viewer")) ==
          toast::testing::read_file(bed.media_of("movie.ts")));
    auto summary = toast::client::testing::read_stats(bed.stats("viewer")).back();
    CHECK(summary.bytes_from_server == 0);
    CHECK(summary.bytes_from_peers >= stopped["size"].get<std::uint64_t>());
    auto after = bed.status(id);
    CHECK(after["bytes_uploaded"].get<std::uint64_t>() >= stopped["size"].get<std::uint64_t>());
    bed.stop_service();
}

TEST_CASE("at the disk quota the least recently watched title is evicted first",
          "[client][service][integration]") {
    ServiceBed bed;
    auto a = bed.add_video("a.ts", 6, 300);
    auto b = bed.add_video("b.ts", 6, 500);
    auto c = bed.add_video("c.ts", 6, 700);
    std::uint64_t sizes[] = {std::filesystem::file_size(bed.media_of("a.ts")),
                             std::filesystem::file_size(bed.media_of("b.ts")),
                             std::filesystem::file_size(bed.media_of("c.ts"))};
    // Room for any two titles, not for three.
    auto quota = sizes[0] + sizes[1] + sizes[2] - *std::min_element(std::begin(sizes), std::end(sizes)) / 2;
    bed.start_tracker();
    bed.start_server();
    bed.start_service({"--disk-quota", std::to_string(quota), "--upload-limit", "2Mbps"});
    auto ida = bed.add(a);
    auto idb = bed.add(b);
    auto idc = bed.add(c);
    bed.play_through(ida);
    REQUIRE(bed.call("POST", "/api/titles/" + ida + "/stop").status == 200);
    bed.play_through(idb);
    REQUIRE(bed.call("POST", "/api/titles/" + idb + "/stop").status == 200);
    // Watched: a, then b. Playing c needs room for all of c: a goes, b stays and seeds.
    auto play = bed.call("POST", "/api/titles/" + idc + "/play");
    INFO(play.body << "\n" << bed.service_log());
    REQUIRE(play.status == 200);
    CHECK(bed.call("GET", "/api/titles/" + ida).status == 404);
    CHECK_FALSE(std::filesystem::exists(bed.box() / "titles" / ida));
    auto sb = bed.wait_status(idb, [](const json& j) { return !j["checking"].get<bool>(); });
    CHECK(sb["state"] == "stopped");
    CHECK(sb["pieces_had"] == sb["pieces"]);
    auto service = bed.call("GET", "/api/status").j();
    CHECK(service["disk_quota"] == quota);
    CHECK(service["upload_limit_bps"] == 2'000'000);
    CHECK(service["titles"].size() == 2);
    CHECK(bed.service_log().find("evicting the least recently watched title " + ida) != std::string::npos);
    bed.stop_service();
}

#ifdef CHROMIUM_BIN
namespace {

// Headless Chromium loading `url`; returns the DOM once the page has loaded (its script has drawn the status
// the page carries). The page's event stream never ends, so --virtual-time-budget (which waits for the
// network to go idle) would never return.
std::string chromium_dom(const std::string& url, const std::filesystem::path& profile) {
    auto r =
        toast::testing::run(CHROMIUM_BIN,
                            {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--user-data-dir=" + profile.string(), "--timeout=10000", "--dump-dom", url},
                            90s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
}

// The text of the first element after `from` whose class is `cls` (<span class="cls">TEXT</span>).
std::string span_text(const std::string& dom, std::size_t from, const std::string& cls) {
    auto tag = "class=\"" + cls + "\">";
    auto at = dom.find(tag, from);
    REQUIRE(at != std::string::npos);
    at += tag.size();
    return dom.substr(at, dom.find('<', at) - at);
}

std::size_t count_of(const std::string& s, char c) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), c));
}

}  // namespace

TEST_CASE("headless Chromium shows the live piece map of a playing title",
          "[client][service][integration][browser]") {
    ServiceBed bed;
    auto torrent = bed.add_video("movie.ts", 8, 440);
    bed.start_tracker();
    bed.start_server();
    auto seed = bed.seed("seed");
    REQUIRE(bed.wait_for_seeders(1, 10s));
    bed.start_service();
    auto id = bed.add(torrent);
    bed.play_through(id);
    auto s =
        bed.wait_status(id, [](const json& j) { return j["pieces_had"] == j["pieces"] && j["peers"] >= 1; });
    REQUIRE(s["pieces_had"] == s["pieces"]);
    auto cells = s["map"]["cells"].get<std::string>();

    auto page = "http://127.0.0.1:" + std::to_string(bed.port()) + "/";
    auto dom = chromium_dom(page, bed.dir() / "chromium");
    INFO(dom.substr(0, 4000));
    // The page's script drew a status document.
    auto updates_at = dom.find("data-updates=\"");
    REQUIRE(updates_at != std::string::npos);
    CHECK(std::stoi(dom.substr(updates_at + 14)) >= 1);
    auto section = dom.find("id=\"title-" + id + "\"");
    REQUIRE(section != std::string::npos);
    CHECK(dom.find("data-state=\"playing\"", section) != std::string::npos);
    // What the page reports is what the service reports: the pieces by source, the playhead, the peers.
    auto from_peers = std::stoul(span_text(dom, section, "pieces-peers"));
    auto from_server = std::stoul(span_text(dom, section, "pieces-server"));
    CHECK(from_peers == count_of(cells, 'p'));
    CHECK(from_server == count_of(cells, 's'));
    CHECK(from_peers + from_server == s["pieces"].get<std::size_t>());
    CHECK(from_server > 0);  // the title's first pieces come from the server (give-up zone)
    CHECK(span_text(dom, section, "playhead") != "none");
    CHECK(std::stoi(span_text(dom, section, "peers")) >= 1);
    // The window and the zone move with the playhead: each is "none" or a range of pieces.
    for (const auto* cls : {"inorder", "give-up"}) {
        auto text = span_text(dom, section, cls);
        INFO(cls << ": " << text);
        CHECK((text == "none" || text.find('-') != std::string::npos));
    }
    // One cell per piece.
    auto map_at = dom.find("class=\"map\"", section);
    REQUIRE(map_at != std::string::npos);
    auto map_end = dom.find("</div>", map_at);
    std::size_t drawn = 0;
    for (auto at = dom.find("<i ", map_at); at != std::string::npos && at < map_end;
         at = dom.find("<i ", at + 1))
        ++drawn;
    CHECK(drawn == s["pieces"].get<std::size_t>());

    // A screenshot of the map for the test's logs (and a person looking at them).
    auto shot = bed.logs() / "piece-map.png";
    auto r = toast::testing::run(CHROMIUM_BIN,
                                 {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                  "--user-data-dir=" + (bed.dir() / "chromium").string(), "--timeout=10000",
                                  "--window-size=1200,800", "--screenshot=" + shot.string(), page},
                                 90s);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    REQUIRE(std::filesystem::exists(shot));
    CHECK(std::filesystem::file_size(shot) > 5000);
    if (const char* keep = std::getenv("TOAST_KEEP_SCREENSHOT"))
        std::filesystem::copy_file(shot, keep, std::filesystem::copy_options::overwrite_existing);
    bed.stop_service();
}
#endif
