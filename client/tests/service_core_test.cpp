// The set-top-box service's pure decisions: the control API's routes and checks, the title state machine,
// the quota's eviction order, the saved title list, the command line and the piece map's cells.
#include <catch2/catch.hpp>

#include "client/core/cache_policy.hpp"
#include "client/core/service_api.hpp"
#include "client/core/service_options.hpp"
#include "client/core/service_piece_map.hpp"
#include "client/core/service_titles.hpp"
#include "toast/common/config.hpp"

#include <nlohmann/json.hpp>

using namespace toast;
using namespace toast::client;

namespace {

const std::string kId = "0123456789abcdef0123456789abcdef01234567";

ApiParse req(std::string_view method, std::string_view target, std::string_view type = {},
             std::string_view body = {}) {
    return parse_api_request({.method = method, .target = target, .content_type = type, .body = body});
}

}  // namespace

TEST_CASE("the API routes each path and method to its action", "[client][service][api]") {
    CHECK(req("GET", "/").request->action == ApiAction::piece_map);
    CHECK(req("GET", "/index.html").request->action == ApiAction::piece_map);
    CHECK(req("GET", "/api/status").request->action == ApiAction::service_status);
    CHECK(req("GET", "/api/events").request->action == ApiAction::events);
    CHECK(req("GET", "/api/titles").request->action == ApiAction::list_titles);
    CHECK(req("GET", "/api/titles?x=1").request->action == ApiAction::list_titles);
    auto s = req("GET", "/api/titles/" + kId);
    CHECK(s.request->action == ApiAction::title_status);
    CHECK(s.request->title_id == kId);
    CHECK(req("DELETE", "/api/titles/" + kId).request->action == ApiAction::remove);
    CHECK(req("POST", "/api/titles/" + kId + "/play").request->action == ApiAction::play);
    CHECK(req("POST", "/api/titles/" + kId + "/stop").request->action == ApiAction::stop);
}

TEST_CASE("the API answers unknown paths 404 and wrong methods 405 with the allowed ones",
          "[client][service][api]") {
    auto r = req("GET", "/etc/passwd");
    CHECK(!r.request);
    CHECK(r.error.status == 404);
    CHECK(r.error.message == "no such page: /etc/passwd");
    CHECK(req("GET", "/api/nothing").error.status == 404);
    CHECK(req("GET", "/api/titles/" + kId + "/rewind").error.status == 404);
    auto m = req("PUT", "/api/titles");
    CHECK(m.error.status == 405);
    CHECK(m.error.allow == "GET, POST");
    CHECK(m.error.message == "PUT is not allowed on /api/titles (allowed: GET, POST)");
    CHECK(req("GET", "/api/titles/" + kId + "/play").error.allow == "POST");
    CHECK(req("POST", "/api/titles/" + kId).error.allow == "GET, DELETE");
    CHECK(req("POST", "/").error.status == 405);
    CHECK(req("GET", "*").error.status == 400);
}

TEST_CASE("a title is named by its info-hash only, never by a path", "[client][service][api]") {
    CHECK(is_title_id(kId));
    CHECK_FALSE(is_title_id(kId.substr(1)));
    CHECK_FALSE(is_title_id("0123456789ABCDEF0123456789abcdef01234567"));
    CHECK_FALSE(is_title_id("..23456789abcdef0123456789abcdef01234567"));
    for (const std::string& bad : std::vector<std::string>{"..", "..%2f..%2fetc", "movie.mp4", kId + "0"}) {
        auto r = req("GET", "/api/titles/" + bad);
        CHECK(r.error.status == 400);
        CHECK(r.error.message ==
              "'" + bad + "' is not a title id (the 40 lower-case hex digits of its info-hash)");
    }
}

TEST_CASE("a title is added from the torrent's bytes or an http URL", "[client][service][api]") {
    auto t = req("POST", "/api/titles", "application/x-bittorrent", "d4:infod...ee");
    REQUIRE(t.request);
    CHECK(t.request->action == ApiAction::add_torrent);
    CHECK(t.request->torrent == "d4:infod...ee");
    auto u = req("POST", "/api/titles", "application/json; charset=utf-8",
                 R"({"url": "http://10.0.0.1:8080/t/a.torrent"})");
    REQUIRE(u.request);
    CHECK(u.request->action == ApiAction::add_url);
    CHECK(u.request->url == "http://10.0.0.1:8080/t/a.torrent");
}

TEST_CASE("a bad add request is refused with what is wrong", "[client][service][api]") {
    struct Case {
        std::string type, body;
        int status;
        std::string message;
    };
    for (const auto& c : std::vector<Case>{
             {"application/x-bittorrent", "", 400, "the body is empty: send the .torrent file's bytes"},
             {"", "x", 415,
              "missing Content-Type: use application/x-bittorrent (the .torrent) or application/json"},
             {"text/plain", "x", 415,
              "unsupported Content-Type 'text/plain': use application/x-bittorrent (the .torrent) or "
              "application/json "
              "({\"url\": ...})"},
             {"application/json", "{", 400, "the body is not valid JSON"},
             {"application/json", "[1]", 400,
              "the body must be a JSON object such as {\"url\": \"http://...\"}"},
             {"application/json", "{}", 400,
              "missing \"url\": the http:// or https:// URL of the title's .torrent"},
             {"application/json", R"({"url": 5})", 400, "\"url\" must be a string"},
             {"application/json", R"({"url": "http://h/a", "path": "/etc"})", 400,
              "unknown field \"path\" (only \"url\" is accepted)"},
             {"application/json", R"({"url": "file:///etc/passwd"})", 400,
              "\"url\": 'file:///etc/passwd' is not an http:// or https:// URL"},
             {"application/json", R"({"url": "http:///a"})", 400,
              "\"url\": 'http:///a' is not an http:// or https:// URL"},
             {"application/json", R"({"url": "http://h/a b"})", 400,
              "\"url\": 'http://h/a b' is not an http:// or https:// URL"},
         }) {
        INFO(c.type << " " << c.body);
        auto r = req("POST", "/api/titles", c.type, c.body);
        CHECK(!r.request);
        CHECK(r.error.status == c.status);
        CHECK(r.error.message == c.message);
    }
    auto big = req("POST", "/api/titles", "application/x-bittorrent", std::string(kMaxTorrentBytes + 1, 'd'));
    CHECK(big.error.status == 413);
}

TEST_CASE("requests from another origin may read but not change titles", "[client][service][api]") {
    auto post = [](std::string_view origin) {
        return parse_api_request({.method = "POST",
                                  .target = "/api/titles/" + kId + "/play",
                                  .host = "127.0.0.1:8780",
                                  .origin = origin});
    };
    CHECK(post("").request);
    CHECK(post("http://127.0.0.1:8780").request);
    auto evil = post("http://evil.example");
    CHECK(evil.error.status == 403);
    CHECK(evil.error.message ==
          "a request from another origin (http://evil.example) may not change the service's titles");
    CHECK(
        parse_api_request(
            {.method = "DELETE", .target = "/api/titles/" + kId, .host = "localhost:8780", .origin = "null"})
            .error.status == 403);
    CHECK(parse_api_request({.method = "GET",
                             .target = "/api/status",
                             .host = "localhost:8780",
                             .origin = "http://evil.example"})
              .request);
}

TEST_CASE("error bodies are JSON objects with the message", "[client][service][api]") {
    CHECK(api_error_body("no title \"x\"") == R"({"error":"no title \"x\""})");
}

TEST_CASE("a title's state follows play, stop and remove", "[client][service][state]") {
    auto t = transition(TitleState::stopped, TitleCommand::play);
    CHECK(t.next == TitleState::playing);
    CHECK(t.changed);
    CHECK(t.status == 200);
    auto again = transition(TitleState::playing, TitleCommand::play);
    CHECK(again.next == TitleState::playing);
    CHECK_FALSE(again.changed);
    CHECK(again.status == 200);
    auto stop = transition(TitleState::playing, TitleCommand::stop);
    CHECK(stop.next == TitleState::stopped);
    CHECK(stop.changed);
    auto bad = transition(TitleState::stopped, TitleCommand::stop);
    CHECK(bad.status == 409);
    CHECK(bad.error == "the title is not playing");
    CHECK(bad.next == TitleState::stopped);
    CHECK(transition(TitleState::playing, TitleCommand::remove).next == TitleState::removed);
    CHECK(transition(TitleState::stopped, TitleCommand::remove).next == TitleState::removed);
    CHECK(transition(TitleState::removed, TitleCommand::play).status == 404);
    CHECK(to_string(TitleState::playing) == "playing");
}

namespace {

struct Held {
    std::string id;
    std::uint64_t bytes;
    std::int64_t last_watched;
    bool pinned;
};

// The box's least-recently-watched policy over titles given as (id, bytes, last watched, pinned).
EvictionPlan plan_lru(const std::vector<Held>& held, Bytes quota, Bytes incoming = Bytes(0)) {
    std::vector<CacheEntry> entries;
    for (const auto& h : held)
        entries.push_back(
            {.id = h.id, .bytes = Bytes(h.bytes), .last_watched = h.last_watched, .pinned = h.pinned});
    return plan_cache_evictions(std::move(entries), quota, CachePolicy::lru, incoming);
}

}  // namespace

TEST_CASE("within the quota nothing is evicted", "[client][service][quota]") {
    auto plan = plan_lru({{"a", 40, 1, false}, {"b", 60, 2, false}}, Bytes(100));
    CHECK(plan.evict.empty());
    CHECK(plan.fits);
    CHECK(plan.used_after == Bytes(100));
}

TEST_CASE("the least recently watched titles are evicted first, only as many as needed",
          "[client][service][quota]") {
    std::vector<Held> titles{
        {"new", 30, 300, false}, {"old", 30, 100, false}, {"mid", 30, 200, false}, {"playing", 50, 50, true}};
    auto plan = plan_lru(titles, Bytes(100));
    CHECK(plan.evict == std::vector<std::string>{"old", "mid"});
    CHECK(plan.fits);
    CHECK(plan.used_after == Bytes(80));
    // Room for an incoming title takes one more.
    auto more = plan_lru(titles, Bytes(100), Bytes(40));
    CHECK(more.evict == std::vector<std::string>{"old", "mid", "new"});
    CHECK(more.used_after == Bytes(90));
}

TEST_CASE("eviction ties are broken by id, and pinned titles never go", "[client][service][quota]") {
    auto plan = plan_lru({{"b", 10, 5, false}, {"a", 10, 5, false}, {"c", 10, 1, true}}, Bytes(20));
    CHECK(plan.evict == std::vector<std::string>{"a"});
    auto impossible = plan_lru({{"a", 10, 1, false}, {"p", 90, 9, true}}, Bytes(80));
    CHECK_FALSE(impossible.fits);
    CHECK(impossible.evict.empty());
    CHECK(impossible.used_after == Bytes(100));
}

TEST_CASE("the saved title list round-trips and names what is wrong", "[client][service][saved]") {
    std::vector<SavedTitle> list{{kId, "Movie \"One\"", 1000, 2000}, {std::string(40, 'a'), "two", 5, 0}};
    auto text = format_saved_titles(list);
    auto back = parse_saved_titles(text);
    REQUIRE(back);
    CHECK(*back == list);
    std::string error;
    CHECK_FALSE(parse_saved_titles("{", &error));
    CHECK(error == "not a JSON object");
    CHECK_FALSE(parse_saved_titles(R"({"version": 2, "titles": []})", &error));
    CHECK(error == "\"version\" must be 1");
    CHECK_FALSE(parse_saved_titles(
        R"({"version": 1, "titles": [{"id": "../x", "name": "a", "added": 1, "last_watched": 0}]})", &error));
    CHECK(error == "titles[0].id must be 40 lower-case hex digits");
    CHECK_FALSE(parse_saved_titles(R"({"version": 1, "titles": [{"id": ")" + kId +
                                       R"(", "name": "a", "added": -1, "last_watched": 0}]})",
                                   &error));
    CHECK(error == "titles[0].added must be a non-negative integer (unix ms)");
    auto twice = R"({"version": 1, "titles": [{"id": ")" + kId +
                 R"(", "name": "a", "added": 1, "last_watched": 0},)" + R"({"id": ")" + kId +
                 R"(", "name": "b", "added": 1, "last_watched": 0}]})";
    CHECK_FALSE(parse_saved_titles(twice, &error));
    CHECK(error == "titles[1].id " + kId + " is listed twice");
}

TEST_CASE("serve's command line", "[client][service][options]") {
    auto ok = parse_serve_args({"--save-dir", "/var/lib/toast", "--api=127.0.0.1:9000", "--disk-quota",
                                "2GiB", "--upload-limit", "8Mbps", "--server", "http://s:8080/", "--tracker",
                                "http://t:6969/announce", "--listen", "127.0.0.1:6881"});
    REQUIRE(ok.options);
    CHECK(ok.options->save_dir == "/var/lib/toast");
    CHECK(ok.options->api == Endpoint{"127.0.0.1", 9000});
    CHECK(ok.options->listen == Endpoint{"127.0.0.1", 6881});
    CHECK(ok.options->disk_quota == Bytes(2ull << 30));
    CHECK(ok.options->upload_limit == BitRate(8'000'000));
    CHECK(ok.options->servers == std::vector<std::string>{"http://s:8080/"});
    CHECK(ok.options->trackers == std::vector<std::string>{"http://t:6969/announce"});
    auto defaults = parse_serve_args({"--save-dir", "d"});
    REQUIRE(defaults.options);
    CHECK(defaults.options->api == Endpoint{"127.0.0.1", 8780});
    CHECK_FALSE(defaults.options->disk_quota);
    CHECK(defaults.options->disk_io == DiskIoKind::posix);
    auto mmap = parse_serve_args({"--save-dir", "d", "--disk-io", "mmap"});
    REQUIRE(mmap.options);
    CHECK(mmap.options->disk_io == DiskIoKind::mmap);
    CHECK(parse_serve_args({"--save-dir", "d", "--disk-io", "aio"}).error ==
          "--disk-io: 'aio' is not a disk I/O (posix, mmap)");
    CHECK(parse_serve_args({"--help"}).help);
    CHECK(parse_serve_args({}).error == "--save-dir is required");
    CHECK(parse_serve_args({"--save-dir", "d", "--api", "0.0.0.0:80"}).error ==
          "--api: '0.0.0.0:80' is not a loopback address: the control API has no authentication");
    CHECK(parse_serve_args({"--save-dir", "d", "--disk-quota", "lots"}).error ==
          "--disk-quota: 'lots' is not a positive size such as 20GiB");
    CHECK(parse_serve_args({"--save-dir", "d", "--upload-limit", "1bps"})
              .error.rfind("--upload-limit: '1bps' is outside", 0) == 0);
    CHECK(parse_serve_args({"--save-dir", "d", "--server", "ftp://s/"}).error ==
          "--server: 'ftp://s/' is not an http:// or https:// URL");
    CHECK(parse_serve_args({"--save-dir", "d", "--server", "https://s/"}).options->servers ==
          std::vector<std::string>{"https://s/"});
    CHECK(parse_serve_args({"--save-dir", "d", "--token", "t", "--token-file", "f"}).error ==
          "--token-file: give either a token or a token file, not both");
    CHECK(parse_serve_args({"--save-dir", "d", "--telemetry", "tcp://x"}).error ==
          "--telemetry: 'tcp://x' is not an http:// or https:// URL, or off");
    CHECK(parse_serve_args({"--save-dir", "d", "--telemetry-interval", "0s"}).error ==
          "--telemetry-interval: '0s' is not a duration from 1s to 24h");
    auto access = parse_serve_args({"--save-dir", "d", "--token-file", "/etc/toast/token", "--ca-file",
                                    "ca.pem", "--telemetry", "off", "--telemetry-interval", "30s"});
    REQUIRE(access.options);
    CHECK(access.options->token_file == "/etc/toast/token");
    CHECK(access.options->ca_file == "ca.pem");
    CHECK(access.options->telemetry == "off");
    CHECK(access.options->telemetry_interval == std::chrono::seconds(30));
    CHECK(parse_serve_args({"--save-dir", "d", "--frobnicate", "1"}).error == "--frobnicate: unknown option");
    CHECK(parse_serve_args({"--save-dir"}).error == "--save-dir: missing value");
    CHECK(parse_serve_args({"movie.torrent"}).error ==
          "unexpected argument 'movie.torrent' (serve takes options only)");
}

TEST_CASE("the piece map shows each piece's source and what is in flight", "[client][service][map]") {
    PieceMapInput in;
    in.pieces = PieceCount(8);
    in.had = PieceSet(PieceCount(8));
    in.from_peers = PieceSet(PieceCount(8));
    in.from_server = PieceSet(PieceCount(8));
    for (int p : {0, 1, 2, 5})
        in.had.set(PieceIndex(p));
    in.from_peers.set(PieceIndex(1));
    in.from_server.set(PieceIndex(2));
    in.from_server.set(PieceIndex(5));
    in.peer_in_flight = {PieceIndex(3), PieceIndex(4), PieceIndex(1), PieceIndex(99)};
    in.server_in_flight = {PieceIndex(4), PieceIndex(6), PieceIndex(-1)};
    CHECK(piece_cells(in) == "hpsfFsF.");
    CHECK(piece_cells(PieceMapInput{}) == "");
}

TEST_CASE("serve takes the client's pickers and chokers for every title", "[client][service][options]") {
    auto defaults = parse_serve_args({"--save-dir", "d"});
    REQUIRE(defaults.options);
    CHECK(defaults.options->picker == PickerKind::adaptive);
    CHECK(defaults.options->choker == ChokerOption::nearest);
    auto ok = parse_serve_args({"--save-dir", "d", "--picker", "inorder", "--choker", "leader"});
    REQUIRE(ok.options);
    CHECK(ok.options->picker == PickerKind::inorder);
    CHECK(ok.options->choker == ChokerOption::leader);
    CHECK(parse_serve_args({"--save-dir", "d", "--picker", "fastest"}).error ==
          "--picker: 'fastest' is not a picker (rarest, inorder, beta, hybrid, adaptive)");
    CHECK(parse_serve_args({"--save-dir", "d", "--choker", "tft"}).error ==
          "--choker: 'tft' is not a choker (nearest, leader, tit-for-tat, seed)");
    auto config =
        serve_options_from_config(nlohmann::json{{"save_dir", "d"}, {"picker", "beta"}, {"choker", "seed"}});
    CHECK(config.picker == PickerKind::beta);
    CHECK(config.choker == ChokerOption::seed);
    CHECK_THROWS_WITH(serve_options_from_config(nlohmann::json{{"save_dir", "d"}, {"choker", "fair"}}),
                      Catch::Contains("config field 'choker'"));
    const auto help = serve_help_text();
    CHECK(help.find("--picker P") != std::string::npos);
    CHECK(help.find("--choker C") != std::string::npos);
}

TEST_CASE("serve's config file gives the base options, the command line overrides them",
          "[client][service][options]") {
    auto config = nlohmann::json::parse(R"({"save_dir": "/var/lib/toast/client", "listen": "0.0.0.0:6881",
        "control_listen": "127.0.0.1:8700", "disk_quota": "20GiB", "upload_limit": "4Mbps",
        "servers": ["http://vod:8080/"], "disk_io": "mmap", "log_level": "info"})");
    auto base = serve_options_from_config(config);
    CHECK(base.save_dir == "/var/lib/toast/client");
    CHECK(base.listen == Endpoint{"0.0.0.0", 6881});
    CHECK(base.api == Endpoint{"127.0.0.1", 8700});
    CHECK(base.disk_quota == Bytes(20ull << 30));
    CHECK(base.upload_limit == BitRate(4'000'000));
    CHECK(base.servers == std::vector<std::string>{"http://vod:8080/"});
    CHECK(base.disk_io == DiskIoKind::mmap);
    auto first = parse_serve_args({"--config", "/etc/toast/client.json", "--disk-quota", "1GiB"});
    REQUIRE(first.options);
    CHECK(first.config == "/etc/toast/client.json");
    auto merged = parse_serve_args({"--config", "/etc/toast/client.json", "--disk-quota", "1GiB"}, base);
    REQUIRE(merged.options);
    CHECK(merged.options->disk_quota == Bytes(1ull << 30));
    CHECK(merged.options->upload_limit == BitRate(4'000'000));
    CHECK(merged.options->save_dir == "/var/lib/toast/client");

    auto error_of = [](const char* text) {
        try {
            serve_options_from_config(nlohmann::json::parse(text));
        } catch (const toast::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of(R"({"control_listen": "0.0.0.0:8700"})") ==
          "config field 'control_listen': '0.0.0.0:8700' is not a loopback address: the control API has no "
          "authentication");
    CHECK(error_of(R"({"disk_quota": "much"})").rfind("config field 'disk_quota'", 0) == 0);
    CHECK(error_of(R"({"disk_io": "aio"})").rfind("config field 'disk_io'", 0) == 0);
    CHECK(error_of(R"({"save_dri": "/x"})").find("save_dri") != std::string::npos);
    CHECK(error_of(R"([1])") == "the config must be a JSON object");
}
