// Pre-placement end to end on 127.0.0.1: the real toast-server plans a title over three `toast-client serve`
// boxes; each box fetches its stripes while idle, within its rate, and stops the moment it plays a title;
// with the server gone, a viewer gets the whole title from the boxes' pieces. And a box refuses bad
// assignments (unknown title, pieces out of range, over quota, another torrent, a path for a name) with a
// clear error and changes nothing, across a restart too.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "push_test_support.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;

namespace {

std::string id_of(const std::string& torrent_bytes, ServiceBed& bed, Box& box) {
    auto a = box.call("POST", "/api/titles", "application/x-bittorrent", torrent_bytes);
    INFO(a.body);
    REQUIRE((a.status == 201 || a.status == 200));
    (void)bed;
    return a.j()["id"].get<std::string>();
}

std::uint64_t push_bytes(const json& status) {
    return status["push"]["push_bytes"].get<std::uint64_t>();
}

// Pieces a pushed title holds, from its status's piece map (one character per piece, '.' missing).
std::set<int> held_pieces(const json& title) {
    std::set<int> out;
    const auto cells = title["map"]["cells"].get<std::string>();
    for (std::size_t i = 0; i < cells.size(); ++i)
        if (cells[i] != '.') out.insert(static_cast<int>(i));
    return out;
}

}  // namespace

TEST_CASE(
    "boxes fetch their assignment while idle, a viewer takes the title from them, a play stops the push",
    "[client][service][push][integration]") {
    ServiceBed bed;
    auto b_torrent = bed.add_video("b.ts", 4, 300);
    auto a_torrent = bed.add_video("a.ts", 6, 440);  // the last ingested: the viewer's torrent()
    {
        std::ofstream(bed.dir() / "forecast.json") << R"({"titles": {"a.ts": 10}})";
        auto config = json::parse(toast::testing::read_file(bed.dir() / "server.json"));
        config["demand"] = {{"forecast", (bed.dir() / "forecast.json").string()}};
        // One viewer expected at the peak: the title's deficit is about its bitrate; boxes of 2 Mbps commit a
        // tenth of their idle upload per stripe, so it is cut in several stripes of two holders each.
        config["push"] = {{"window", {{"after_start", {"0s", "1h"}}}},
                          {"rate", "8Mbps"},
                          {"peak_viewers", 1},
                          {"holder_share", 0.1},
                          {"chunk_pieces", 2},
                          {"refresh", "2s"}};
        std::ofstream(bed.dir() / "server.json") << config.dump();
    }
    bed.start_tracker();
    bed.start_server();
    const auto server = "http://127.0.0.1:" + std::to_string(bed.server_port());
    std::vector<std::unique_ptr<Box>> boxes;
    for (int i = 1; i <= 3; ++i) {
        boxes.push_back(std::make_unique<Box>(
            bed.dir(), "box" + std::to_string(i),
            std::vector<std::string>{"--server", server, "--box-id", "box" + std::to_string(i),
                                     "--push-quota", "10MiB", "--push-rate", "400kbps", "--upload-limit",
                                     "2Mbps"}));
    }
    auto& box1 = *boxes[0];

    // box1 is fetching its stripes at 400 kbps.
    auto s =
        box1.wait([](const json& j) { return j["push"]["assignment"].is_object() && push_bytes(j) > 0; });
    INFO(s.dump(2) << box1.log());
    REQUIRE(push_bytes(s) > 0);
    const auto assigned = s["push"]["assignment"]["bytes"].get<std::uint64_t>();
    REQUIRE(push_bytes(s) < assigned);
    CHECK(s["push"]["state"] == "fetching");
    CHECK(s["push"]["assignment"]["titles"][0]["name"] == "a.ts");

    // A play stops the push at once: nothing more arrives while the title plays.
    auto b = id_of(b_torrent, bed, box1);
    auto play = box1.call("POST", "/api/titles/" + b + "/play");
    REQUIRE(play.status == 200);
    auto paused = box1.wait([](const json& j) { return j["push"]["state"] == "paused_playing"; }, 5s);
    CHECK(paused["push"]["state"] == "paused_playing");
    CHECK(paused["push"]["in_flight"] == 0);
    std::this_thread::sleep_for(2s);
    auto later = box1.status();
    CHECK(push_bytes(later) == push_bytes(paused));
    CHECK(later["push"]["state"] == "paused_playing");
    REQUIRE(box1.call("POST", "/api/titles/" + b + "/stop").status == 200);

    // Idle again: every box completes its assignment, never faster than its rate.
    const auto resumed_at = std::chrono::steady_clock::now();
    const auto before = push_bytes(box1.status());
    std::map<std::string, std::set<int>> holdings;
    std::string a_id;
    for (auto& box : boxes) {
        auto done = box->wait([](const json& j) { return j["push"]["state"] == "complete"; }, 60s);
        INFO(done.dump(2) << box->log());
        REQUIRE(done["push"]["state"] == "complete");
        // Every byte fetched is counted; a title whose stripes moved when the third box joined starts over.
        CHECK(push_bytes(done) >= done["push"]["assignment"]["bytes"].get<std::uint64_t>());
        CHECK(done["push"]["held"].get<std::uint64_t>() <= 10u << 20);
        a_id = done["push"]["assignment"]["titles"][0]["id"].get<std::string>();
        auto t = box->title(a_id);
        CHECK(t["pushed"] == true);
        CHECK(t["push_bytes"] == done["push"]["assignment"]["bytes"]);
        CHECK(t["state"] == "stopped");
        holdings[done["push"]["box_id"].get<std::string>()] = held_pieces(t);
        // Pushed titles count against the push quota; only box1's watched title against the disk quota.
        std::uint64_t watched = 0;
        for (const auto& w : done["titles"])
            if (!w["pushed"].get<bool>()) watched += w["bytes_on_disk"].get<std::uint64_t>();
        CHECK(done["disk_used"] == watched);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - resumed_at).count();
    CHECK(double(push_bytes(box1.status()) - before) <= 50'000.0 * seconds + 32 * 1024 + 50'000);

    // The plan: every stripe on two boxes, no box holds the whole title, together they hold all of it.
    auto plan = json::parse(toast::testing::http_request(bed.server_port(), "GET", "/push/plan").body);
    INFO(plan.dump(2));
    auto title = plan["titles"][0];
    REQUIRE(title["stripes"].get<int>() >= 2);
    for (auto& holders : title["holders"])
        CHECK(holders.size() == 2);
    const int pieces = box1.title(a_id)["pieces"].get<int>();
    std::set<int> all;
    for (auto& [box, held] : holdings) {
        INFO(box);
        CHECK(held.size() < static_cast<std::size_t>(pieces));
        all.insert(held.begin(), held.end());
    }
    CHECK(all.size() == static_cast<std::size_t>(pieces));

    // The server goes away: a viewer takes the whole title from the boxes' pieces.
    bed.stop_server();
    auto viewer = bed.start_client("stream", "viewer", {"--behavior", "download", "--log-level", "warn"});
    auto code = viewer->wait(90s);
    INFO(viewer->stderr_text());
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(toast::testing::read_file(bed.data("viewer")) == toast::testing::read_file(bed.media_of("a.ts")));
    auto summary = read_stats(bed.stats("viewer")).back();
    CHECK(summary.bytes_from_server == 0);
    std::uint64_t uploaded = 0;
    for (auto& box : boxes) {
        auto t = box->title(a_id);
        INFO(t.dump(2));
        CHECK(t["bytes_uploaded"].get<std::uint64_t>() > 0);  // every box's pieces reached the viewer
        uploaded += t["bytes_uploaded"].get<std::uint64_t>();
    }
    CHECK(uploaded >= std::filesystem::file_size(bed.media_of("a.ts")));
    for (auto& box : boxes)
        box->stop();
}

TEST_CASE("a box refuses bad assignments with a clear error and changes nothing, across a restart",
          "[client][service][push][integration]") {
    ServiceBed bed;
    auto b_torrent = bed.add_video("b.ts", 4, 300);
    auto a_torrent = bed.add_video("a.ts", 6, 440);
    bed.start_tracker();
    bed.start_server();
    const auto a_size = std::filesystem::file_size(bed.media_of("a.ts"));
    const auto a_pieces = static_cast<int>((a_size + 32767) / 32768);
    REQUIRE(a_pieces > 8);
    CannedServer fake;
    fake.set("/torrents/a.ts.torrent", a_torrent);
    fake.set("/torrents/b.ts.torrent", b_torrent);

    // The ids, as a box names the titles.
    std::string a_id, b_id;
    {
        Box probe(bed.dir(), "probe", {});
        a_id = id_of(a_torrent, bed, probe);
        b_id = id_of(b_torrent, bed, probe);
        probe.stop();
    }
    auto assignment = [&](const std::string& plan, const std::string& name, const std::string& hash,
                          const std::string& ranges, std::uint64_t bytes) {
        return json{{"box", "b1"},
                    {"plan", plan},
                    {"generation", 1},
                    {"window", {{"start_ms", 0}, {"end_ms", 4'000'000'000'000}}},
                    {"rate_bps", 8'000'000},
                    {"quota", 300 * 1024},
                    {"upload_bps", 1'000'000},
                    {"refresh_s", 1},
                    {"titles",
                     {{{"name", name},
                       {"info_hash", hash},
                       {"torrent", "/torrents/" + name + ".torrent"},
                       {"piece_size", 32768},
                       {"pieces", a_pieces},
                       {"ranges", json::parse(ranges)},
                       {"bytes", bytes}}}}}
            .dump();
    };
    fake.set("/push/assignment", assignment("good1", "a.ts", a_id, "[[0, 3]]", 4 * 32768));
    const std::vector<std::string> options{"--server", fake.url(),     "--box-id",
                                           "b1",       "--push-quota", "300KiB"};
    auto box = std::make_unique<Box>(bed.dir(), "box", options);
    auto s = box->wait([](const json& j) { return j["push"]["state"] == "complete"; });
    INFO(s.dump(2) << box->log());
    REQUIRE(s["push"]["state"] == "complete");
    CHECK(s["push"]["assignment"]["plan"] == "good1");
    CHECK(push_bytes(s) == 4 * 32768);
    const auto saved = toast::testing::read_file(box->save_dir() / "push.json");
    // The pushed pieces are the title's bytes.
    auto file = toast::testing::read_file(box->save_dir() / "titles" / a_id / "a.ts");
    auto media = toast::testing::read_file(bed.media_of("a.ts"));
    REQUIRE(file.size() >= 4 * 32768);
    CHECK(file.substr(0, 4 * 32768) == media.substr(0, 4 * 32768));
    CHECK(held_pieces(box->title(a_id)) == std::set<int>{0, 1, 2, 3});

    auto unchanged = [&](Box& b, const std::string& expected_error) {
        const auto refused = b.status()["push"]["refused"].get<int>();
        auto after = b.wait([&](const json& j) { return j["push"]["refused"].get<int>() > refused; }, 10s);
        INFO(after.dump(2) << b.log());
        REQUIRE(after["push"]["refused"].get<int>() > refused);
        CHECK_THAT(after["push"]["error"].get<std::string>(), Catch::Contains(expected_error));
        CHECK(after["push"]["assignment"]["plan"] == "good1");
        REQUIRE(after["titles"].size() == 1);
        CHECK(after["titles"][0]["id"] == a_id);
        CHECK(held_pieces(after["titles"][0]) == std::set<int>{0, 1, 2, 3});
        CHECK(toast::testing::read_file(b.save_dir() / "push.json") == saved);
        CHECK(b.log().find(expected_error) != std::string::npos);
    };
    SECTION("each bad assignment") {
        fake.set("/push/assignment",
                 assignment("bad1", "nosuch", std::string(40, 'c'), "[[0, 1]]", 2 * 32768));
        unchanged(
            *box,
            "title 'nosuch' is unknown to the server: its torrent /torrents/nosuch.torrent answered 404");
        fake.set("/push/assignment",
                 assignment("bad2", "a.ts", a_id, "[[0, " + std::to_string(a_pieces) + "]]",
                            std::uint64_t(a_pieces + 1) * 32768));
        unchanged(*box, "is out of range: the title has " + std::to_string(a_pieces) + " pieces");
        fake.set("/push/assignment", assignment("bad3", "a.ts", a_id, "[[0, 9]]", 10 * 32768));
        unchanged(*box, "over this box's push quota of 300 KiB");
        const std::string other(40, 'e');
        fake.set("/push/assignment", assignment("bad4", "b.ts", other, "[[0, 1]]", 2 * 32768));
        unchanged(*box, "title 'b.ts': the server's torrent has info-hash " + b_id +
                            ", the assignment says " + other);
        fake.set("/push/assignment", assignment("bad6", "b.ts", a_id, "[[0, 1]]", 2 * 32768));
        unchanged(*box, "title 'b.ts': info-hash " + a_id + " is the title 'a.ts'");
        fake.set("/push/assignment", assignment("bad5", "../../etc", a_id, "[[0, 1]]", 2 * 32768));
        unchanged(*box, "looks like a path");
    }
    SECTION("across a restart") {
        fake.set("/push/assignment", assignment("bad3", "a.ts", a_id, "[[0, 9]]", 10 * 32768));
        unchanged(*box, "over this box's push quota");
        box->stop();
        box = std::make_unique<Box>(bed.dir(), "box", options);
        auto resumed = box->wait([](const json& j) { return j["push"]["assignment"].is_object(); }, 10s);
        INFO(resumed.dump(2) << box->log());
        CHECK(resumed["push"]["assignment"]["plan"] == "good1");
        CHECK(box->log().find("push: resuming assignment good1") != std::string::npos);
        unchanged(*box, "over this box's push quota");
    }
    box->stop();
}
