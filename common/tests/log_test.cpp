#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <catch2/catch.hpp>

#include "toast/common/log.hpp"

using namespace toast;

namespace {

std::string log_through(bool journal, spdlog::level::level_enum level, const std::string& text) {
    std::ostringstream out;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
    sink->set_formatter(make_log_formatter(journal));
    spdlog::logger logger("server", sink);
    logger.set_level(spdlog::level::trace);
    logger.log(level, text);
    return out.str();
}

}  // namespace

TEST_CASE("JOURNAL_STREAM matches only stderr's own device and inode", "[common][log]") {
    CHECK(is_journal_stream("8:12345", 8, 12345));
    CHECK(is_journal_stream("18446744073709551615:1", 18446744073709551615ull, 1));
    CHECK_FALSE(is_journal_stream("8:12345", 8, 12346));
    CHECK_FALSE(is_journal_stream("9:12345", 8, 12345));
    CHECK_FALSE(is_journal_stream("", 0, 0));
    CHECK_FALSE(is_journal_stream("8", 8, 0));
    CHECK_FALSE(is_journal_stream(":", 0, 0));
    CHECK_FALSE(is_journal_stream("8:", 8, 0));
    CHECK_FALSE(is_journal_stream("8:12x", 8, 12));
    CHECK_FALSE(is_journal_stream("-8:12", 8, 12));
    CHECK_FALSE(is_journal_stream("8:12:1", 8, 12));
}

TEST_CASE("journal lines carry the syslog priority of their level and no timestamp", "[common][log]") {
    CHECK(log_through(true, spdlog::level::trace, "t") == "<7>trace t\n");
    CHECK(log_through(true, spdlog::level::debug, "d") == "<7>debug d\n");
    CHECK(log_through(true, spdlog::level::info, "serving HTTP") == "<6>info serving HTTP\n");
    CHECK(log_through(true, spdlog::level::warn, "disk 1 slow") == "<4>warning disk 1 slow\n");
    CHECK(log_through(true, spdlog::level::err, "bad") == "<3>error bad\n");
    CHECK(log_through(true, spdlog::level::critical, "dead") == "<2>critical dead\n");
}

TEST_CASE("terminal lines carry the time, the component and the level", "[common][log]") {
    auto line = log_through(false, spdlog::level::warn, "disk 1 slow");
    // 2024-05-01T12:00:00.123 [server] warning disk 1 slow
    REQUIRE(line.size() > 24);
    CHECK(line[4] == '-');
    CHECK(line[10] == 'T');
    CHECK(line[19] == '.');
    CHECK(line.substr(23) == " [server] warning disk 1 slow\n");
}

TEST_CASE("log_escape leaves printable ASCII and escapes everything else", "[common][log]") {
    CHECK(log_escape("GET /titles/movie") == "GET /titles/movie");
    CHECK(log_escape(std::string("a\x1b[2Jb\x7f", 7)) == "a\\x1b[2Jb\\x7f");
    // C1 controls and any other byte >= 0x80 (a terminal may read 0x9b as CSI).
    CHECK(log_escape("\x85\x9b\x80\x9f\xc3\xa9") == "\\x85\\x9b\\x80\\x9f\\xc3\\xa9");
    CHECK(log_escape(std::string("nul\0", 4)) == "nul\\x00");
    // A literal backslash cannot be mistaken for an escape.
    CHECK(log_escape("a\\x41") == "a\\\\x41");
    CHECK(log_escape("abcdef", 3) == "abc...");
}
