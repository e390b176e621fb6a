// The socket helpers the player endpoint and the control API share.
#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/error.hpp>

#include "client/http/local_server.hpp"

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace toast::client;

TEST_CASE("listen_on binds a free port, and a taken one fails with the bind's error",
          "[client][http][listen]") {
    asio::io_context io;
    tcp::acceptor first(io);
    REQUIRE_FALSE(listen_on(first, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)));
    const auto port = first.local_endpoint().port();
    CHECK(port != 0);
    CHECK(first.is_open());

    tcp::acceptor second(io);
    auto ec = listen_on(second, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    CHECK(ec == asio::error::address_in_use);

    // A client connects to the listening one.
    tcp::socket client(io);
    boost::system::error_code connect_error;
    client.connect(first.local_endpoint(), connect_error);
    CHECK_FALSE(connect_error);
    tcp::socket accepted(io);
    first.accept(accepted);
    close_socket(accepted);
    CHECK_FALSE(accepted.is_open());
    close_socket(accepted);  // closing twice is harmless
    CHECK_FALSE(accepted.is_open());
}

TEST_CASE("a read error that means the peer left ends the connection and others are answered",
          "[client][http][listen]") {
    namespace http = boost::beast::http;
    CHECK(connection_ended(http::error::end_of_stream));
    CHECK(connection_ended(asio::error::operation_aborted));
    CHECK(connection_ended(asio::error::connection_reset));
    CHECK(connection_ended(asio::error::eof));
    CHECK(connection_ended(asio::error::bad_descriptor));
    CHECK_FALSE(connection_ended(http::error::header_limit));
    CHECK_FALSE(connection_ended(http::error::body_limit));
    CHECK_FALSE(connection_ended(http::error::bad_method));
    CHECK_FALSE(connection_ended(asio::error::timed_out));
    CHECK_FALSE(connection_ended({}));
}

namespace {
struct FakeConnection {
    int closed = 0;
    void close() { ++closed; }
};
}  // namespace

TEST_CASE("a local server's state listens, then stops once, closing every connection",
          "[client][http][listen]") {
    asio::io_context io;
    LocalServerState<FakeConnection> state(io);
    REQUIRE_FALSE(state.listen(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)));
    CHECK(state.port == state.acceptor.local_endpoint().port());
    CHECK(state.port != 0);
    FakeConnection a, b;
    state.connections = {&a, &b};
    state.stop();
    CHECK(state.stopped);
    CHECK_FALSE(state.acceptor.is_open());
    CHECK(a.closed == 1);
    CHECK(b.closed == 1);
    state.stop();  // idempotent
    CHECK(a.closed == 1);
    CHECK(b.closed == 1);
}
