#include <catch2/catch.hpp>

#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "client/http/mpv_ipc.hpp"
#include "test_support.hpp"

using namespace toast::client;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

// Runs `io` until `done` or `limit` passes.
bool run_until(asio::io_context& io, const std::function<bool()>& done, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        io.restart();
        io.run_for(10ms);
    }
    return done();
}

}  // namespace

TEST_CASE("the mpv IPC waits for the socket, asks for the position and reports mpv's events",
          "[client][http][mpv]") {
    toast::testing::TempDir d;
    const auto path = d / "mpv.sock";
    asio::io_context io;
    std::vector<MpvEvent> got;
    MpvIpcConfig config;
    config.retry = 20ms;
    MpvIpc ipc(
        io, path, [&](const MpvEvent& e) { got.push_back(e); }, config);
    ipc.start();
    // mpv creates its socket a moment after it starts.
    run_until(
        io, [] { return false; }, 100ms);
    CHECK_FALSE(ipc.connected());
    local::acceptor acceptor(io, local::endpoint(path.string()));
    local::socket mpv(io);
    acceptor.async_accept(mpv, [](boost::system::error_code) {});
    REQUIRE(run_until(
        io, [&] { return ipc.connected() && mpv.is_open(); }, 5s));
    std::string asked;
    bool read_all = false;
    asio::async_read_until(mpv, asio::dynamic_buffer(asked), "paused-for-cache\"]}\n",
                           [&](boost::system::error_code ec, std::size_t) { read_all = !ec; });
    REQUIRE(run_until(
        io, [&] { return read_all; }, 5s));
    CHECK(asked == mpv_observe_commands());
    std::string lines =
        "{\"data\":null,\"request_id\":0,\"error\":\"success\"}\n"
        "{\"event\":\"property-change\",\"id\":1,\"name\":\"time-pos\",\"data\":4.25}\n"
        "garbage\n"
        "{\"event\":\"property-change\",\"id\":2,\"name\":\"pause\",\"data\":true}\n"
        "{\"event\":\"seek\"}\n";
    asio::write(mpv, asio::buffer(lines));
    REQUIRE(run_until(
        io, [&] { return got.size() == 3; }, 5s));
    CHECK(got[0] == MpvEvent{MpvEventKind::position, 4'250ms});
    CHECK(got[1] == MpvEvent{MpvEventKind::pause, {}, true});
    CHECK(got[2] == MpvEvent{MpvEventKind::seek});
    // mpv quits: the connection ends quietly.
    mpv.close();
    REQUIRE(run_until(
        io, [&] { return !ipc.connected(); }, 5s));
    CHECK(ipc.events() == 3);
}

TEST_CASE("the mpv IPC gives up on a socket that never appears", "[client][http][mpv]") {
    toast::testing::TempDir d;
    asio::io_context io;
    MpvIpcConfig config;
    config.retry = 10ms;
    config.give_up = 100ms;
    int events = 0;
    MpvIpc ipc(
        io, d / "none.sock", [&](const MpvEvent&) { ++events; }, config);
    ipc.start();
    // Nothing left to do once it gives up: the io_context runs out of work.
    auto start = std::chrono::steady_clock::now();
    io.run_for(5s);
    CHECK(std::chrono::steady_clock::now() - start < 2s);
    CHECK_FALSE(ipc.connected());
    CHECK(events == 0);
}
