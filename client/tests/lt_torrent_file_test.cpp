#include <catch2/catch.hpp>

#include <fstream>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>
#include <libtorrent/torrent_info.hpp>

#include "client/lt/torrent_file.hpp"
#include "lt_test_support.hpp"
#include "test_support.hpp"

using toast::client::parse_title_torrent;
using toast::client::title_urls;
using toast::client::TorrentFileError;

namespace {

// A torrent for a random file, re-encoded with `edit` applied to its top-level dictionary.
std::vector<char> torrent_with(const toast::testing::TempDir& dir,
                               const std::function<void(lt::entry&)>& edit) {
    toast::testing::write_random_file(dir / "movie.bin", 100'000, 3);
    auto bytes = toast::client::testing::make_torrent_bytes(dir / "movie.bin", 16 * 1024,
                                                            {"http://127.0.0.1:8080/titles/movie.bin"});
    lt::entry e = lt::bdecode(lt::span<const char>(bytes.data(), static_cast<long>(bytes.size())));
    edit(e);
    std::vector<char> out;
    lt::bencode(std::back_inserter(out), e);
    return out;
}

}  // namespace

TEST_CASE("the bitrate and title come from the torrent's toast key", "[client][torrent]") {
    toast::testing::TempDir dir;
    auto bytes = torrent_with(dir, [](lt::entry& e) {
        e["toast"]["bitrate"] = 2'000'000;
        e["toast"]["title"] = "Movie";
    });
    auto t = parse_title_torrent(bytes, "movie.torrent");
    REQUIRE(t.bitrate);
    CHECK(t.bitrate->value() == 2'000'000u);
    CHECK(t.title == "Movie");
    CHECK(t.url_list == std::vector<std::string>{"http://127.0.0.1:8080/titles/movie.bin"});
    // The server is never a web seed.
    CHECK(t.params.ti->web_seeds().empty());
    CHECK(t.params.url_seeds.empty());
    CHECK(t.params.ti->num_pieces() == 7);
}

TEST_CASE("the operator's peers come from the torrent's toast key", "[client][torrent][operator]") {
    toast::testing::TempDir dir;
    auto bytes = torrent_with(dir, [](lt::entry& e) {
        e["toast"]["bitrate"] = 2'000'000;
        e["toast"]["operator_peers"] =
            lt::entry::list_type{lt::entry("10.0.0.5:6881"), lt::entry("[::1]:7000")};
    });
    auto t = parse_title_torrent(bytes, "movie.torrent");
    CHECK(t.operator_peers == std::vector<toast::Endpoint>{{"10.0.0.5", 6881}, {"::1", 7000}});
    CHECK(parse_title_torrent(torrent_with(dir, [](lt::entry& e) { e["toast"]["bitrate"] = 1; }), "m")
              .operator_peers.empty());
}

TEST_CASE("a torrent without a toast key has no bitrate and is named after its file", "[client][torrent]") {
    toast::testing::TempDir dir;
    auto t = parse_title_torrent(torrent_with(dir, [](lt::entry&) {}), "movie.torrent");
    CHECK_FALSE(t.bitrate);
    CHECK(t.title == "movie.bin");
}

TEST_CASE("bad torrents are rejected with a message naming the problem", "[client][torrent]") {
    toast::testing::TempDir dir;
    auto message = [](const std::vector<char>& bytes) {
        try {
            parse_title_torrent(bytes, "x.torrent");
        } catch (const TorrentFileError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    std::string junk = "this is not bencode";
    CHECK_THAT(message(std::vector<char>(junk.begin(), junk.end())),
               Catch::Contains("x.torrent: not a bencoded torrent"));
    std::string list = "li1ee";
    CHECK_THAT(message(std::vector<char>(list.begin(), list.end())), Catch::Contains("not a dictionary"));
    std::string no_info = "d3:fooi1ee";
    CHECK_THAT(message(std::vector<char>(no_info.begin(), no_info.end())),
               Catch::Contains("not a valid torrent"));
    CHECK_THAT(message(torrent_with(dir, [](lt::entry& e) { e["toast"]["bitrate"] = -5; })),
               Catch::Contains("\"bitrate\" must be a positive integer"));
    CHECK_THAT(message(torrent_with(dir, [](lt::entry& e) { e["toast"] = "2Mbps"; })),
               Catch::Contains("\"toast\" is not a dictionary"));
    CHECK_THAT(message(torrent_with(dir, [](lt::entry& e) { e["toast"]["operator_peers"] = "10.0.0.5:1"; })),
               Catch::Contains("x.torrent: \"toast\".\"operator_peers\" is not a list"));
    CHECK_THAT(message(torrent_with(dir,
                                    [](lt::entry& e) {
                                        e["toast"]["operator_peers"] = lt::entry::list_type{
                                            lt::entry("10.0.0.5:1"), lt::entry("seed.example:6881")};
                                    })),
               Catch::Contains("\"operator_peers\" entry 1 is not an \"IP:PORT\" string"));
    CHECK_THROWS_WITH(toast::client::load_title_torrent(dir / "missing.torrent"),
                      Catch::Contains("cannot be read"));
}

TEST_CASE("server URLs become the title's URL on each server, url-list first", "[client][torrent]") {
    auto urls = title_urls({"http://127.0.0.1:8080/titles/a b.bin"},
                           {"http://127.0.0.1:9090", "http://127.0.0.1:9091/", "http://127.0.0.1:9092/media/",
                            "http://127.0.0.1:8080/titles/a b.bin"},
                           "a b.bin");
    CHECK(urls == std::vector<std::string>{
                      "http://127.0.0.1:8080/titles/a b.bin", "http://127.0.0.1:9090/titles/a%20b.bin",
                      "http://127.0.0.1:9091/titles/a%20b.bin", "http://127.0.0.1:9092/media/a%20b.bin"});
}
