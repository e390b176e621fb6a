#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "server/core/container.hpp"

using namespace toast::server;

namespace {

std::string ts_packets(std::size_t n, std::size_t packet = 188, std::size_t prefix = 0) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        std::string p(packet, '\xff');
        p[prefix] = '\x47';
        s += p;
    }
    return s;
}

std::string box(std::string_view type, std::string_view payload) {
    const auto size = static_cast<std::uint32_t>(8 + payload.size());
    std::string s{static_cast<char>(size >> 24), static_cast<char>(size >> 16), static_cast<char>(size >> 8),
                  static_cast<char>(size)};
    return s + std::string(type) + std::string(payload);
}

std::string ebml(std::string_view doctype) {
    // EBML header: EBMLVersion 1, then DocType (0x4282) with a 1-byte size.
    std::string s("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01", 9);
    s += std::string("\x42\x82", 2) + static_cast<char>(0x80 | doctype.size()) + std::string(doctype);
    return s + std::string(64, '\0');
}

std::string ext(const std::optional<Container>& c) {
    return c ? std::string(c->extension) : "none";
}

}  // namespace

TEST_CASE("the container is sniffed from the title's first bytes", "[server][container]") {
    CHECK(ext(sniff_container(ts_packets(20))) == "ts");
    CHECK(sniff_container(ts_packets(20))->content_type == "video/mp2t");
    CHECK(ext(sniff_container(ts_packets(2))) == "ts");
    CHECK(ext(sniff_container(ts_packets(20, 192, 4))) == "m2ts");
    CHECK(ext(sniff_container(box("ftyp", "isom\0\0\x02\0isomiso2avc1mp41") + box("free", ""))) == "mp4");
    CHECK(ext(sniff_container(box("ftyp", "qt  \0\0\0\0qt  "))) == "mov");
    CHECK(ext(sniff_container(box("ftyp", "3gp5\0\0\0\0"))) == "3gp");
    CHECK(ext(sniff_container(box("moov", std::string(100, '\0')))) == "mov");
    CHECK(ext(sniff_container(ebml("matroska"))) == "mkv");
    CHECK(ext(sniff_container(ebml("webm"))) == "webm");
    CHECK(ext(sniff_container(std::string("RIFF\x10\0\0\0AVI LIST", 16))) == "avi");
    CHECK(ext(sniff_container(std::string("FLV\x01\x05\0\0\0\x09", 9))) == "flv");
    CHECK(ext(sniff_container(std::string("\0\0\x01\xba\x44\0\x04", 7))) == "mpg");
    CHECK(ext(sniff_container("OggS\0\x02")) == "ogv");
}

TEST_CASE("bytes that are no known container are not guessed at", "[server][container]") {
    CHECK_FALSE(sniff_container(""));
    CHECK_FALSE(sniff_container("G"));            // one sync byte is not a transport stream
    CHECK_FALSE(sniff_container(ts_packets(1)));  // nor is one packet
    auto broken = ts_packets(20);
    broken[188 * 7] = 'x';  // a lost sync byte among the first eight packets
    CHECK_FALSE(sniff_container(broken));
    CHECK_FALSE(sniff_container("plain text, not a video\n"));
    CHECK_FALSE(sniff_container(box("free", "ftyp")));  // "ftyp" in the wrong place
    std::mt19937_64 rng(7);
    int found = 0;
    for (int i = 0; i < 1000; ++i) {
        std::string s(4096, '\0');
        for (auto& c : s)
            c = static_cast<char>(rng());
        if (sniff_container(s)) ++found;
    }
    CHECK(found == 0);
}

TEST_CASE("a source file's extension names the container when the bytes do not", "[server][container]") {
    CHECK(ext(container_from_extension("/media/movie.ts")) == "ts");
    CHECK(ext(container_from_extension("MOVIE.MP4")) == "mp4");
    CHECK(ext(container_from_extension("clip.m4v")) == "mp4");
    CHECK(ext(container_from_extension("clip.mts")) == "m2ts");
    CHECK(ext(container_from_extension("a.mpeg")) == "mpg");
    CHECK(ext(container_from_extension("a.webm")) == "webm");
    CHECK(ext(container_from_extension("movie")) == "none");
    CHECK(ext(container_from_extension("movie.bin")) == "none");
    CHECK(ext(container_from_extension(".ts")) == "none");  // a hidden file, no extension
    CHECK(ext(container_from_extension("dir.ts/movie")) == "none");
    CHECK(ext(container_from_extension("movie.")) == "none");
}

TEST_CASE("the torrent's file name is the title's name with its container's extension",
          "[server][container]") {
    const auto ts = sniff_container(ts_packets(4));
    const auto mp4 = container_from_extension("x.mp4");
    CHECK(title_file_name("movie", ts) == "movie.ts");
    CHECK(title_file_name("movie", mp4) == "movie.mp4");
    CHECK(title_file_name("movie.ts", ts) == "movie.ts");
    CHECK(title_file_name("MOVIE.TS", ts) == "MOVIE.TS");
    CHECK(title_file_name("clip.m4v", mp4) == "clip.m4v");  // another spelling of the same container
    CHECK(title_file_name("movie.mp4", ts) == "movie.mp4.ts");
    CHECK(title_file_name("season.1", ts) == "season.1.ts");
    CHECK(title_file_name("movie", std::nullopt) == "movie");
    CHECK(title_file_name("movie.ts", std::nullopt) == "movie.ts");
}
