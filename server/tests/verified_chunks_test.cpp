#include <catch2/catch.hpp>

#include <vector>

#include "server/core/fd_budget.hpp"
#include "server/core/verified_chunks.hpp"

using namespace toast::server;

namespace {

std::vector<std::uint64_t> unverified(const VerifiedChunks& v, std::uint32_t disk, const char* file,
                                      const FileIdentity& id, std::uint64_t first, std::uint64_t last,
                                      std::size_t chunks = 20) {
    std::vector<std::uint64_t> out;
    v.unverified(disk, file, id, first, last, chunks, out);
    return out;
}

using List = std::vector<std::uint64_t>;

}  // namespace

TEST_CASE("a file never seen has every touched chunk unverified", "[server][verified]") {
    VerifiedChunks v;
    const FileIdentity id{42, 1'000, 1'250'000};
    CHECK(unverified(v, 0, "blocks/a@1/000000.blk", id, 3, 5) == List{3, 4, 5});
    CHECK(unverified(v, 7, "x", id, 0, 0) == List{0});
    CHECK(v.files() == 0);
}

TEST_CASE("verified chunks are remembered per disk and file for the same identity", "[server][verified]") {
    VerifiedChunks v;
    const FileIdentity id{42, 1'000, 1'250'000};
    v.mark(1, "f", id, 3, 20);
    v.mark(1, "f", id, 5, 20);
    CHECK(unverified(v, 1, "f", id, 2, 6) == List{2, 4, 6});
    CHECK(unverified(v, 1, "f", id, 3, 3).empty());
    // Same name on another disk, or another name on this disk: nothing known.
    CHECK(unverified(v, 0, "f", id, 3, 3) == List{3});
    CHECK(unverified(v, 1, "g", id, 3, 3) == List{3});
    CHECK(v.files() == 1);
}

TEST_CASE("a file with a new inode, mtime or size is verified again from scratch", "[server][verified]") {
    VerifiedChunks v;
    const FileIdentity id{42, 1'000, 1'250'000};
    for (std::uint64_t c = 0; c < 20; ++c)
        v.mark(0, "f", id, c, 20);
    CHECK(unverified(v, 0, "f", id, 0, 19).empty());
    CHECK(unverified(v, 0, "f", FileIdentity{43, 1'000, 1'250'000}, 0, 1) == List{0, 1});  // renamed over
    CHECK(unverified(v, 0, "f", FileIdentity{42, 1'001, 1'250'000}, 0, 1) == List{0, 1});  // rewritten
    CHECK(unverified(v, 0, "f", FileIdentity{42, 1'000, 1'000'000}, 0, 1) == List{0, 1});  // truncated
    // Marking under the new identity replaces the old record instead of adding to it.
    const FileIdentity rewritten{42, 2'000, 1'250'000};
    v.mark(0, "f", rewritten, 7, 20);
    CHECK(unverified(v, 0, "f", rewritten, 6, 8) == List{6, 8});
    CHECK(unverified(v, 0, "f", id, 0, 1) == List{0, 1});
    CHECK(v.files() == 1);
}

TEST_CASE("forgetting a file drops its record and chunks past the end are ignored", "[server][verified]") {
    VerifiedChunks v;
    const FileIdentity id{1, 2, 3};
    v.mark(2, "f", id, 0, 4);
    v.mark(2, "f", id, 9, 4);  // beyond the file's 4 chunks: ignored
    CHECK(unverified(v, 2, "f", id, 0, 9, 4) == List{1, 2, 3});
    v.forget(2, "f");
    v.forget(5, "nothing");  // unknown disk and file: no effect
    CHECK(v.files() == 0);
    CHECK(unverified(v, 2, "f", id, 0, 1, 4) == List{0, 1});
    CHECK(unverified(v, 2, "f", id, 0, 1, 0).empty());  // a file with no chunks
}

TEST_CASE("a chunk that fails makes the file suspect and untrusted until it passes or the file changes",
          "[server][verified]") {
    VerifiedChunks v;
    const FileIdentity id{42, 1'000, 1'250'000};
    for (std::uint64_t c = 0; c < 20; ++c)
        v.mark(0, "f", id, c, 20);
    CHECK_FALSE(v.suspect(0, "f"));
    v.fail(0, "f", id, 4, 20);
    CHECK(v.suspect(0, "f"));
    CHECK_FALSE(v.suspect(1, "f"));  // the same name on another disk is another copy
    CHECK_FALSE(v.suspect(0, "g"));
    // Rot does not change the identity, so nothing that passed before is trusted any more.
    CHECK(unverified(v, 0, "f", id, 0, 19).size() == 20);
    // Another chunk passing does not clear the failed one.
    v.mark(0, "f", id, 5, 20);
    CHECK(v.suspect(0, "f"));
    v.mark(0, "f", id, 4, 20);
    CHECK_FALSE(v.suspect(0, "f"));
    // A file restored under another identity starts clean.
    v.fail(0, "f", id, 2, 20);
    v.mark(0, "f", FileIdentity{43, 2'000, 1'250'000}, 9, 20);
    CHECK_FALSE(v.suspect(0, "f"));
    v.fail(0, "f", id, 2, 20);
    v.forget(0, "f");
    CHECK_FALSE(v.suspect(0, "f"));
    v.fail(0, "f", id, 20, 20);  // past the end: ignored
    CHECK_FALSE(v.suspect(0, "f"));
    CHECK(v.suspect_files() == 0);
}

TEST_CASE("the count of suspect files follows failures, passes, new identities and forgetting",
          "[server][verified]") {
    VerifiedChunks v;
    const FileIdentity id{42, 1'000, 1'250'000};
    CHECK(v.suspect_files() == 0);
    v.fail(0, "f", id, 1, 20);
    v.fail(0, "f", id, 3, 20);  // a second chunk of the same file: still one file
    v.fail(1, "g", id, 0, 20);
    CHECK(v.suspect_files() == 2);
    v.mark(0, "f", id, 1, 20);
    CHECK(v.suspect_files() == 2);  // chunk 3 still failed
    v.mark(0, "f", id, 3, 20);
    CHECK(v.suspect_files() == 1);
    v.mark(1, "g", FileIdentity{43, 2'000, 1'250'000}, 0, 20);  // restored
    CHECK(v.suspect_files() == 0);
    v.fail(2, "h", id, 0, 20);
    v.forget(2, "h");
    CHECK(v.suspect_files() == 0);
}

TEST_CASE("the descriptor limit asked for covers files, connections and the reserve up to the hard limit",
          "[server][fd]") {
    CHECK(wanted_nofile_limit(4096, 1024, 1024, 1'048'576) == 4096 + 1024 + kReservedDescriptors);
    CHECK(wanted_nofile_limit(4096, 1024, 1024, 4096) == 4096);           // capped by the hard limit
    CHECK(wanted_nofile_limit(4096, 1024, 65'536, 1'048'576) == 65'536);  // never lowered
}

TEST_CASE("the open-file cache gets what the descriptor limit leaves after connections", "[server][fd]") {
    CHECK(open_file_budget(4096, 1024, 20'000) == 4096);
    CHECK(open_file_budget(4096, 1024, 4096) == 4096 - 1024 - kReservedDescriptors);
    // Too many connections for the limit: a quarter of it still goes to files.
    CHECK(open_file_budget(4096, 1024, 1024) == 256);
    CHECK(open_file_budget(4096, 1024, 3) == 1);
    CHECK(open_file_budget(16, 1024, 1'048'576) == 16);
}
