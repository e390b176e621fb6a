#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "client/core/push_assignment.hpp"

using namespace toast;
using namespace toast::client;
using json = nlohmann::json;

namespace {

const std::string kHash = "d967f544993f290178692f681c9faa9e3aee4145";

// 10 pieces of 32 KiB, the last 10 000 bytes.
json good() {
    return json::parse(R"({"box": "b1", "plan": "9f86d081884c7d65", "generation": 2,
        "window": {"start_ms": 1000, "end_ms": 5000}, "rate_bps": 2000000, "quota": 1048576,
        "upload_bps": 1000000, "refresh_s": 60,
        "titles": [{"name": "movie", "info_hash": ")" +
                       kHash + R"(", "torrent": "/torrents/movie.torrent",
                    "piece_size": 32768, "pieces": 10, "ranges": [[0, 1], [8, 9]], "bytes": 108304}]})");
}

std::string refusal(const json& j) {
    std::string error;
    auto a = parse_push_assignment(j.dump(), &error);
    CHECK_FALSE(a);
    return error;
}

TorrentFacts facts() {
    return TorrentFacts{"movie", kHash, Bytes(9 * 32768 + 10'000), Bytes(32768), 10};
}

}  // namespace

TEST_CASE("a well-formed assignment is read whole", "[client][service][push]") {
    std::string error;
    auto a = parse_push_assignment(good().dump(), &error);
    INFO(error);
    REQUIRE(a);
    CHECK(a->box == "b1");
    CHECK(a->plan == "9f86d081884c7d65");
    CHECK(a->generation == 2);
    CHECK(a->window_start_ms == 1000);
    CHECK(a->window_end_ms == 5000);
    CHECK(a->rate == BitRate(2'000'000));
    CHECK(a->quota == Bytes(1048576));
    CHECK(a->refresh == std::chrono::seconds(60));
    REQUIRE(a->titles.size() == 1);
    const auto& t = a->titles[0];
    CHECK(t.ranges ==
          std::vector<PieceRange>{{PieceIndex(0), PieceIndex(1)}, {PieceIndex(8), PieceIndex(9)}});
    CHECK(t.holds(PieceIndex(9)));
    CHECK_FALSE(t.holds(PieceIndex(2)));
    CHECK(a->bytes() == Bytes(108304));
    CHECK(check_assignment(*a, "b1", Bytes(1 << 20)).empty());
    CHECK(check_title(t, facts()).empty());
}

TEST_CASE("malformed, path-like and out-of-range assignments are refused with the field named",
          "[client][service][push]") {
    auto with = [](auto change) {
        auto j = good();
        change(j);
        return refusal(j);
    };
    CHECK(refusal(json::array()) == "not a JSON object");
    CHECK(with([](json& j) { j["path"] = "/etc"; }) == "unknown field \"path\"");
    CHECK(with([](json& j) { j["titles"][0]["file"] = "/etc/passwd"; }) ==
          "unknown field \"titles[0].file\"");
    CHECK(with([](json& j) { j["titles"][0]["name"] = "../../etc"; }) ==
          "titles[0].name '../../etc' looks like a path (it has a slash)");
    CHECK(with([](json& j) { j["titles"][0]["name"] = ".hidden"; }) ==
          "titles[0].name '.hidden' looks like a path (it starts with a dot)");
    CHECK(with([](json& j) { j["titles"][0]["torrent"] = "http://evil.example/x.torrent"; }) ==
          "titles[0].torrent must be \"/torrents/movie.torrent\" on the box's server");
    CHECK(with([](json& j) { j["titles"][0]["ranges"] = json::parse("[[0, 10]]"); }) ==
          "titles[0].ranges[0] [0, 10] is out of range: the title has 10 pieces");
    CHECK(with([](json& j) { j["titles"][0]["ranges"] = json::parse("[[4, 5], [5, 6]]"); }) ==
          "titles[0].ranges[1] [5, 6] is out of order or overlaps the range before it");
    CHECK(with([](json& j) { j["titles"][0]["ranges"] = json::parse("[[-1, 2]]"); }) ==
          "titles[0].ranges[0] [-1, 2] is out of order or overlaps the range before it");
    CHECK(with([](json& j) { j["titles"][0]["bytes"] = 999999; }) ==
          "titles[0].bytes 999999 is not what its ranges hold");
    CHECK(with([](json& j) { j["titles"][0]["info_hash"] = "XYZ"; }) ==
          "titles[0].info_hash must be 40 lower-case hex digits");
    CHECK(with([](json& j) { j["titles"][0]["piece_size"] = 1000; }) ==
          "titles[0].piece_size must be a power of two of at least 16 KiB");
    CHECK(with([](json& j) { j["titles"].push_back(j["titles"][0]); }) ==
          "titles[1].info_hash " + kHash + " is listed twice");
    CHECK(with([](json& j) { j["window"]["end_ms"] = 10; }) ==
          "\"window\" must have start_ms <= end_ms, unix milliseconds");
    CHECK(with([](json& j) { j["box"] = "a/b"; }) == "\"box\" must be a box id");
    CHECK(with([](json& j) { j["refresh_s"] = 0; }) == "\"refresh_s\" must be in [1, 86400]");
}

TEST_CASE("an assignment for another box, over quota, or unlike its torrent is refused",
          "[client][service][push]") {
    auto a = *parse_push_assignment(good().dump(), nullptr);
    CHECK(check_assignment(a, "b2", Bytes(1 << 20)) == "it is for box 'b1', this box is 'b2'");
    CHECK(check_assignment(a, "b1", Bytes(100'000)) ==
          "it needs 105.77 KiB, over this box's push quota of 97.66 KiB");
    auto f = facts();
    f.info_hash = std::string(40, '0');
    CHECK(check_title(a.titles[0], f) == "title 'movie': the server's torrent has info-hash " +
                                             std::string(40, '0') + ", the assignment says " + kHash);
    f = facts();
    f.name = "other";
    CHECK(check_title(a.titles[0], f) == "title 'movie': info-hash " + kHash + " is the title 'other'");
    f = facts();
    f.pieces = 12;
    CHECK(check_title(a.titles[0], f) ==
          "title 'movie': the torrent has 12 pieces of 32 KiB, the assignment says 10 of 32 KiB");
    f = facts();
    f.size = Bytes(10 * 32768);  // a last piece of full size: the ranges hold more than the assignment says
    CHECK(check_title(a.titles[0], f) ==
          "title 'movie': its ranges hold 131072 bytes, the assignment says 108304");
}

TEST_CASE("ranges cover and count", "[client][service][push]") {
    std::vector<PieceRange> outer{{PieceIndex(0), PieceIndex(3)}, {PieceIndex(8), PieceIndex(9)}};
    CHECK(ranges_cover(outer, {{PieceIndex(1), PieceIndex(2)}, {PieceIndex(9), PieceIndex(9)}}));
    CHECK_FALSE(ranges_cover(outer, {{PieceIndex(3), PieceIndex(4)}}));
    CHECK(range_bytes(outer, Bytes(9 * 100 + 50), Bytes(100)) == Bytes(400 + 150));
}
