// `toast-client serve` as a box in the swarm: a title watched earlier keeps seeding, the box's upload cap is
// where a title's adaptive picker starts, the disk quota evicts the least recently watched title, and the
// piece map page as headless Chromium renders it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "service_bed.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;

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

TEST_CASE("the box's upload cap is where a title's adaptive picker starts",
          "[client][service][integration]") {
    ServiceBed bed;
    auto torrent = bed.add_video("movie.ts", 4, 440);
    bed.start_tracker();
    bed.start_server();
    // Far below the title's bitrate: peers like this box could not carry the stream, so the adaptive picker
    // (the default) keeps no piece in order from its first plan. Without the cap, and without peers to
    // measure, it would keep hybrid's whole window throughout.
    bed.start_service({"--upload-limit", "64kbps"});
    auto id = bed.add(torrent);
    bed.play_through(id);
    const auto stats = bed.box() / "titles" / id / "stats.jsonl";
    std::vector<toast::client::StatsRecord> lines;
    for (int i = 0; i < 50 && lines.size() < 2; ++i) {
        std::this_thread::sleep_for(100ms);
        lines = toast::client::testing::read_stats(stats);
    }
    REQUIRE(lines.size() >= 2);
    for (const auto& line : lines) {
        REQUIRE(line.adaptive_share);
        CHECK(*line.adaptive_share == 0.0);
        CHECK_FALSE(line.inorder_window);
    }
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
    auto seed = bed.start_seeded_service();
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

TEST_CASE("with --cache none a title leaves when its play stops, and watched titles leave at start",
          "[client][service][integration]") {
    ServiceBed bed;
    auto a = bed.add_video("a.ts", 4, 300);
    auto b = bed.add_video("b.ts", 4, 500);
    bed.start_tracker();
    bed.start_server();
    bed.start_service();
    auto kept = bed.add(b);  // watched under lru: kept
    bed.play_through(kept);
    REQUIRE(bed.call("POST", "/api/titles/" + kept + "/stop").status == 200);
    bed.stop_service();
    bed.start_service({"--cache", "none"});
    CHECK(bed.call("GET", "/api/titles/" + kept).status == 404);
    CHECK_FALSE(std::filesystem::exists(bed.box() / "titles" / kept));
    auto id = bed.add(a);
    bed.play_through(id);
    auto stop = bed.call("POST", "/api/titles/" + id + "/stop");
    INFO(stop.body);
    REQUIRE(stop.status == 200);
    CHECK(stop.j()["state"] == "removed");
    CHECK(bed.call("GET", "/api/titles/" + id).status == 404);
    CHECK_FALSE(std::filesystem::exists(bed.box() / "titles" / id));
    auto status = bed.call("GET", "/api/status").j();
    CHECK(status["cache"] == "none");
    CHECK(status["titles"].empty());
    bed.stop_service();
}
