#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "toast/common/access_log.hpp"

using namespace toast;
using namespace std::chrono_literals;

namespace {

// 2026-11-23T20:10:01.750Z
const auto kWhen = std::chrono::system_clock::time_point(std::chrono::seconds(1795464601)) + 750ms;

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct TempPath {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("toast-access-log-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    TempPath() { std::filesystem::create_directories(dir); }
    ~TempPath() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST_CASE("an access log line is the combined log format plus request time and range",
          "[common][access_log]") {
    AccessLogEntry e;
    e.peer = "127.0.0.1";
    e.received = kWhen;
    e.request_line = "GET /titles/movie HTTP/1.1";
    e.status = 206;
    e.body_bytes = 262144;
    e.user_agent = "libtorrent/2.0.8";
    e.duration = 4'400us;
    e.range = "bytes=0-262143";
    CHECK(format_access_log(e) ==
          "127.0.0.1 - - [23/Nov/2026:20:10:01 +0000] \"GET /titles/movie HTTP/1.1\" 206 262144 \"-\" "
          "\"libtorrent/2.0.8\" 0.004 \"bytes=0-262143\"\n");
}

TEST_CASE("absent headers are '-' and long requests show whole seconds", "[common][access_log]") {
    AccessLogEntry e;
    e.peer = "::1";
    e.received =
        std::chrono::system_clock::time_point(std::chrono::seconds(946684799));  // 1999-12-31T23:59:59Z
    e.request_line = "GET /stream/movie HTTP/1.1";
    e.status = 200;
    e.body_bytes = 12'000'000;
    e.referer = "http://portal.example/";
    e.duration = 61'234'999us;
    CHECK(format_access_log(e) ==
          "::1 - - [31/Dec/1999:23:59:59 +0000] \"GET /stream/movie HTTP/1.1\" 200 12000000 "
          "\"http://portal.example/\" \"-\" 61.234 \"-\"\n");
}

TEST_CASE("request data cannot break a line or its quoting", "[common][access_log]") {
    CHECK(access_log_escape("") == "-");
    CHECK(access_log_escape("a\"b") == "a\\x22b");
    CHECK(access_log_escape("a\\b") == "a\\x5Cb");
    CHECK(access_log_escape("x\r\ny") == "x\\x0D\\x0Ay");
    CHECK(access_log_escape(std::string("\x1b[31m\x7f\x80\xff", 8)) == "\\x1B[31m\\x7F\\x80\\xFF");
    CHECK(access_log_escape("/titles/caf%C3%A9 ok~") == "/titles/caf%C3%A9 ok~");
    AccessLogEntry e;
    e.peer = "10.0.0.1";
    e.received = kWhen;
    e.request_line = "GET /x\"\n HTTP/1.1";
    e.user_agent = "evil\"agent\n10.0.0.2 - - [fake]";
    e.status = 400;
    const auto line = format_access_log(e);
    CHECK(std::count(line.begin(), line.end(), '\n') == 1);
    CHECK(std::count(line.begin(), line.end(), '"') == 8);
    CHECK(line ==
          "10.0.0.1 - - [23/Nov/2026:20:10:01 +0000] \"GET /x\\x22\\x0A HTTP/1.1\" 400 0 \"-\" "
          "\"evil\\x22agent\\x0A10.0.0.2 - - [fake]\" 0.000 \"-\"\n");
}

TEST_CASE("the access log file appends whole lines from many threads", "[common][access_log]") {
    TempPath tmp;
    const auto path = tmp.dir / "access.log";
    { std::ofstream(path) << "earlier line\n"; }
    AccessLogFile log(path);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&log, t] {
            const std::string line = "thread " + std::to_string(t) + std::string(200, 'x') + "\n";
            for (int i = 0; i < 500; ++i)
                REQUIRE(log.write(line));
        });
    }
    for (auto& t : threads)
        t.join();
    std::istringstream in(read_file(path));
    std::string line;
    REQUIRE(std::getline(in, line));
    CHECK(line == "earlier line");
    int lines = 0;
    while (std::getline(in, line)) {
        ++lines;
        REQUIRE(line.size() == 208);
        REQUIRE(line.substr(8) == std::string(200, 'x'));
    }
    CHECK(lines == 2000);
}

TEST_CASE("reopen starts a new file after logrotate moved the old one", "[common][access_log]") {
    TempPath tmp;
    const auto path = tmp.dir / "access.log";
    AccessLogFile log(path);
    // Created 0640: peers' addresses are not for every local user.
    CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read) ==
          std::filesystem::perms::none);
    REQUIRE(log.write("one\n"));
    std::filesystem::rename(path, tmp.dir / "access.log.1");
    REQUIRE(log.write("two\n"));  // still the moved file until reopened
    CHECK_FALSE(log.reopen().has_value());
    REQUIRE(log.write("three\n"));
    CHECK(read_file(tmp.dir / "access.log.1") == "one\ntwo\n");
    CHECK(read_file(path) == "three\n");

    // A reopen that fails keeps the file it has.
    std::filesystem::rename(path, tmp.dir / "access.log.2");
    std::filesystem::create_directory(path);  // the path is now a directory: open fails
    auto error = log.reopen();
    REQUIRE(error.has_value());
    CHECK_THAT(*error,
               Catch::Matchers::Contains(path.string()) && Catch::Matchers::Contains("Is a directory"));
    REQUIRE(log.write("four\n"));
    CHECK(read_file(tmp.dir / "access.log.2") == "three\nfour\n");
}

TEST_CASE("an access log that cannot be opened is an error naming the path", "[common][access_log]") {
    TempPath tmp;
    const auto path = tmp.dir / "missing-dir" / "access.log";
    try {
        AccessLogFile log(path);
        FAIL("opened " << path);
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) ==
              "cannot open access log " + path.string() + ": No such file or directory");
    }
}
