#include "client/http/local_server.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

namespace toast::client {

namespace asio = boost::asio;

boost::system::error_code listen_on(asio::ip::tcp::acceptor& acceptor, const asio::ip::tcp::endpoint& where) {
    boost::system::error_code ec;
    acceptor.open(where.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(where, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    return ec;
}

bool connection_ended(const boost::system::error_code& ec) {
    return ec == boost::beast::http::error::end_of_stream || ec == asio::error::operation_aborted ||
           ec == asio::error::connection_reset || ec == asio::error::eof || ec == asio::error::bad_descriptor;
}

void close_socket(asio::ip::tcp::socket& socket) {
    boost::system::error_code ec;
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket.close(ec);
}

}  // namespace toast::client
