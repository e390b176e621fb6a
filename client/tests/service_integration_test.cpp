// `toast-client serve` end to end on 127.0.0.1, driven through its control API as a set-top-box app would:
// add a title (by its torrent's bytes and by URL), play it through ffmpeg, read its status and the event
// stream, stop, remove; the config file; restart the service and find the titles and positions again.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "service_bed.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;

namespace {

// Bad requests get a 4xx with a message, and change nothing.
void check_refusals(ServiceBed& bed, const std::string& id) {
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
}

// The event stream: status events, each a JSON document naming the title.
void check_event_stream(ServiceBed& bed, const std::string& id) {
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
}

}  // namespace

TEST_CASE("the service adds a title, plays it through ffmpeg, reports it, stops and removes it",
          "[client][service][integration]") {
    ServiceBed bed;
    auto torrent = bed.add_video("movie.ts", 8, 440);
    auto seed = bed.start_seeded_service();

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

    check_refusals(bed, id);

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

    check_event_stream(bed, id);

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
                                               {"disk_io", "mmap"},
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

TEST_CASE("a restarted service resumes its titles and their playback positions, also on the other disk I/O",
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

    // Restarted on the other disk back end: the same file, checked again through a memory map.
    bed.start_service({"--disk-io", "mmap"});
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
