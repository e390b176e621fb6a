#include <catch2/catch.hpp>

#include <fstream>

#include "client/core/stats.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

StatsRecord sample() {
    StatsRecord r;
    r.event = "summary";
    r.t_ms = 61'000;
    r.bytes_from_peers = 9'000'000;
    r.bytes_from_server = 1'250'000;
    r.bytes_server_useful = 1'000'000;
    r.bytes_server_wasted = 250'000;
    r.bytes_uploaded = 8'000'000;
    r.bytes_redundant = 16'384;
    r.bytes_redundant_raced = 8'192;
    r.stalls = 2;
    r.stall_seconds = 1.5;
    r.longest_stall = 1.25;
    r.startup_ms = 420;
    r.session_ms = 35;
    r.tracker_ms = 60;
    r.first_piece_ms = 410;
    r.playhead = 10'000'000;
    r.pieces_had = 40;
    r.buffer_bytes = 2'500'000;
    r.pieces_fetched_ahead = 3;
    r.fidelity = 0.75;
    r.completed = true;
    r.peers = 3;
    r.buffer_ahead_s = 8.5;
    r.player_url = "http://127.0.0.1:8080/title.mp4";
    r.first_byte_ms = 95;
    r.seeks = 2;
    r.seek_ms = {120, 310};
    r.urgent_fetches = 4;
    r.server_late_answers = 1;
    r.inorder_window = std::pair{12, 40};
    r.late_pieces = 2;
    r.pieces_mixed = 1;
    r.blocks_awaited = 4;
    r.blocks_awaited_late = 1;
    r.adaptive_share = 0.5;
    r.adaptive_peer_ratio = 0.75;
    r.bytes_from_operator = 1'048'576;
    return r;
}

}  // namespace

TEST_CASE("a stats record serialises to one JSON line with exactly the documented keys in order",
          "[client][stats]") {
    auto line = to_json_line(sample());
    CHECK(
        line ==
        R"({"event":"summary","t_ms":61000,"bytes_from_peers":9000000,"bytes_from_server":1250000,)"
        R"("bytes_server_useful":1000000,"bytes_server_wasted":250000,"bytes_uploaded":8000000,)"
        R"("bytes_redundant":16384,"bytes_redundant_raced":8192,"stalls":2,"stall_seconds":1.5,)"
        R"("longest_stall":1.25,"startup_ms":420,)"
        R"("session_ms":35,"tracker_ms":60,"first_piece_ms":410,)"
        R"("playhead":10000000,"pieces_had":40,"buffer_bytes":2500000,"pieces_fetched_ahead":3,)"
        R"("fidelity":0.75,"completed":true,"peers":3,"buffer_ahead_s":8.5,)"
        R"("player_url":"http://127.0.0.1:8080/title.mp4","first_byte_ms":95,"seeks":2,"seek_ms":[120,310],)"
        R"("urgent_fetches":4,"server_late_answers":1,"inorder_window":[12,40],"late_pieces":2,)"
        R"("pieces_mixed":1,"blocks_awaited":4,"blocks_awaited_late":1,"adaptive_share":0.5,)"
        R"("adaptive_peer_ratio":0.75,"bytes_from_operator":1048576})"
        "\n");
    auto j = to_json(sample());
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items())
        keys.push_back(k);
    std::vector<std::string> expected(stats_keys().begin(), stats_keys().end());
    CHECK(keys == expected);
    // The keys the schema requires of the summary line (common/docs/client-stats.md).
    for (auto k : {"event", "bytes_from_server", "bytes_from_peers", "bytes_uploaded", "bytes_redundant",
                   "stalls", "stall_seconds", "startup_ms", "completed"})
        CHECK(j.contains(k));
}

TEST_CASE("unknown startup and fidelity are null", "[client][stats]") {
    StatsRecord r;
    auto j = to_json(r);
    CHECK(j["event"] == "stats");
    CHECK(j["startup_ms"].is_null());
    CHECK(j["session_ms"].is_null());
    CHECK(j["tracker_ms"].is_null());
    CHECK(j["first_piece_ms"].is_null());
    CHECK(j["fidelity"].is_null());
    CHECK(j["completed"] == false);
    CHECK(j["player_url"].is_null());
    CHECK(j["first_byte_ms"].is_null());
    CHECK(j["inorder_window"].is_null());
    CHECK(j["adaptive_share"].is_null());
    CHECK(j["seek_ms"] == nlohmann::json::array());
}

TEST_CASE("stats records read back strictly", "[client][stats]") {
    auto j = nlohmann::json::parse(to_json(sample()).dump());
    auto back = stats_from_json(j);
    REQUIRE(back);
    CHECK(*back == sample());
    StatsRecord empty;
    CHECK(*stats_from_json(nlohmann::json::parse(to_json(empty).dump())) == empty);

    std::string error;
    auto broken = j;
    broken.erase("stalls");
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "stalls: missing");
    broken = j;
    broken["extra"] = 1;
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "extra: unknown key");
    broken = j;
    broken["bytes_uploaded"] = -5;
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "bytes_uploaded: not a non-negative integer");
    broken = j;
    broken["fidelity"] = 1.5;
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "fidelity: not a number in [0, 1] or null");
    broken = j;
    broken["event"] = "tick";
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "event: not \"stats\" or \"summary\"");
    CHECK_FALSE(stats_from_json(nlohmann::json::array(), &error));
    CHECK(error == "record: not a JSON object");
    broken = j;
    broken["inorder_window"] = {40, 12};
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "inorder_window: not [first, last] piece indices or null");
    broken = j;
    broken["adaptive_share"] = 2;
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "adaptive_share: not a number in [0, 1] or null");
    broken = j;
    broken["tracker_ms"] = "soon";
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "tracker_ms: not an integer or null");
    broken = j;
    broken["seek_ms"] = {5, -1};
    CHECK_FALSE(stats_from_json(broken, &error));
    CHECK(error == "seek_ms: not an array of non-negative integers");
}

TEST_CASE("playback figures come from the StreamWatcher", "[client][stats]") {
    auto g = *TitleGeometry::make(Bytes(4000), Bytes(1000), BitRate(8000));
    const SteadyTime t0{std::chrono::seconds(7)};
    PieceSet had(PieceCount(4));
    had.set(PieceIndex(0));
    StreamWatcher w(g, {}, t0 + 0s, had);
    w.tick(t0 + 1500ms);  // stalled at piece 1 since 1 s
    StatsRecord r;
    fill_playback(r, w, t0 + 1500ms);
    CHECK(r.stalls == 1);
    CHECK(r.stall_seconds == Approx(0.5));
    CHECK(r.longest_stall == Approx(0.5));
    CHECK(r.startup_ms == 0);
    CHECK(r.playhead == 1000);
    CHECK_FALSE(r.completed);
    for (int p = 1; p < 4; ++p)
        w.on_piece_had(PieceIndex(p), t0 + 2s);
    w.tick(t0 + 10s);
    fill_playback(r, w, t0 + 10s);
    CHECK(r.completed);
    CHECK(r.playhead == 4000);
    CHECK(r.stall_seconds == Approx(1.0));
}

TEST_CASE("the schema document lists exactly the record's keys and its examples read back",
          "[client][stats]") {
    std::ifstream doc(std::string(TOAST_SOURCE_DIR) + "/common/docs/client-stats.md");
    REQUIRE(doc);
    std::vector<std::string> table_keys;
    std::vector<std::string> examples;
    std::string line;
    while (std::getline(doc, line)) {
        if (line.rfind("| `", 0) == 0) table_keys.push_back(line.substr(3, line.find('`', 3) - 3));
        if (line.rfind("{\"event\"", 0) == 0) examples.push_back(line);
    }
    std::vector<std::string> expected(stats_keys().begin(), stats_keys().end());
    CHECK(table_keys == expected);
    REQUIRE(examples.size() == 2);
    for (const auto& e : examples) {
        std::string error;
        INFO(e);
        CHECK(stats_from_json(nlohmann::json::parse(e), &error));
        CHECK(error.empty());
    }
    CHECK(examples.back() == to_json(sample()).dump());
}
