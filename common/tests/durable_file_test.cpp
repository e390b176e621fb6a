#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "test_support.hpp"
#include "toast/common/durable_file.hpp"

using toast::testing::read_file;
using toast::testing::TempDir;

namespace {

std::size_t entries(const std::filesystem::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir))
        ++n;
    return n;
}

}  // namespace

TEST_CASE("a file written atomically replaces the old one whole and leaves no temporary behind",
          "[common][durable]") {
    TempDir dir;
    const auto target = dir / "state.json";
    toast::write_file_atomically(target, "first");
    CHECK(read_file(target) == "first");
    toast::write_file_atomically(target, std::string(100'000, 'x'));
    CHECK(read_file(target) == std::string(100'000, 'x'));
    CHECK(entries(dir.path()) == 1);

    // The mode is the caller's (less the umask, which is 022 or stricter here).
    toast::write_file_atomically(dir / "private", "p", 0600);
    struct stat st {};
    REQUIRE(::stat((dir / "private").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("a failed atomic write names the step and the path, keeps the errno and leaves the old file",
          "[common][durable]") {
    TempDir dir;
    const auto target = dir / "missing" / "state.json";
    try {
        toast::write_file_atomically(target, "x");
        FAIL("no error for a directory that does not exist");
    } catch (const std::system_error& e) {
        CHECK(e.code().value() == ENOENT);
        const std::string what = e.what();
        CHECK(what.rfind("cannot create " + (dir / "missing").string() + "/.state.json.tmp.", 0) == 0);
        CHECK_THAT(what, Catch::EndsWith(": No such file or directory"));
    }

    // A target that is a directory: the rename fails, the directory stays, and the temporary goes.
    std::filesystem::create_directory(dir / "taken");
    std::filesystem::create_directory(dir / "taken" / "inside");
    CHECK_THROWS_AS(toast::write_file_atomically(dir / "taken", "x"), std::system_error);
    CHECK(std::filesystem::is_directory(dir / "taken" / "inside"));
    CHECK(entries(dir.path()) == 1);
}

TEST_CASE("temporary names are hidden, unique, and recognised", "[common][durable]") {
    const auto a = toast::temporary_name_for("/srv/d0/manifests/movie.json");
    const auto b = toast::temporary_name_for("/srv/d0/manifests/movie.json");
    CHECK(a != b);
    CHECK(a.parent_path() == "/srv/d0/manifests");
    CHECK(toast::is_temporary_name(a.filename().string()));
    CHECK_FALSE(toast::is_temporary_name("movie.json"));
    CHECK_FALSE(toast::is_temporary_name(".hidden"));
    CHECK_FALSE(toast::is_temporary_name(""));
}
