#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "test_support.hpp"
#include "toast/common/read_file.hpp"

using toast::FileReadError;
using toast::read_file;

namespace {

FileReadError read_error(const std::filesystem::path& path) {
    try {
        read_file(path);
    } catch (const FileReadError& e) {
        return e;
    }
    FAIL("read_file(" << path << ") did not throw");
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("read_file returns a regular file's bytes exactly", "[common][read_file]") {
    toast::testing::TempDir dir;
    std::string bytes;
    for (int i = 0; i < 200'000; ++i)
        bytes += static_cast<char>(i * 7 % 256);  // NUL bytes included, past one 64 KiB read
    {
        std::ofstream out(dir.path() / "data", std::ios::binary);
        out << bytes;
    }
    CHECK(read_file(dir.path() / "data") == bytes);
    { std::ofstream empty(dir.path() / "empty"); }
    CHECK(read_file(dir.path() / "empty").empty());
}

TEST_CASE("read_file names the file and why it cannot be read", "[common][read_file]") {
    toast::testing::TempDir dir;
    auto missing = read_error(dir.path() / "absent.json");
    CHECK(missing.missing());
    CHECK(std::string(missing.what()) ==
          "cannot read '" + (dir.path() / "absent.json").string() + "': No such file or directory");

    // A directory opens like a file and reads as nothing: it must not pass for an empty file.
    auto directory = read_error(dir.path());
    CHECK_FALSE(directory.missing());
    CHECK(directory.code() == std::errc::is_a_directory);
    CHECK(std::string(directory.what()) == "cannot read '" + dir.path().string() + "': is a directory");

    // A FIFO with no writer: an error at once, not a read that waits for one.
    const auto fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto not_regular = read_error(fifo);
    CHECK(not_regular.reason() == "not a regular file");
    CHECK(not_regular.code() == std::errc::invalid_argument);
}
