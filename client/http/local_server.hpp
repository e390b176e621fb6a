// What the box's two local HTTP servers (the player endpoint and the service's control API) share: the
// state a server and its connections hold in common, the base of a connection, and their socket chores
// (listening, telling a connection that just ended from a failed read, closing).
#pragma once

#include <cstdint>
#include <memory>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/system/error_code.hpp>

namespace toast::client {

// Opens `acceptor` on `where` (port 0: a free one), with SO_REUSEADDR, bound and listening. The first
// failure, or no error.
boost::system::error_code listen_on(boost::asio::ip::tcp::acceptor& acceptor,
                                    const boost::asio::ip::tcp::endpoint& where);

// A read failed because the client went away or the server closed the connection: nothing to answer, the
// connection just ends (as opposed to a malformed or oversized request, which gets an error status).
bool connection_ended(const boost::system::error_code& ec);

// Shuts `socket` down both ways and closes it, ignoring errors (it may be closed already).
void close_socket(boost::asio::ip::tcp::socket& socket);

// The state a server shares with its connections, which hold it by shared_ptr (so it outlives the server
// object while a handler is pending): the acceptor, the bound port, whether the server stopped, and the live
// connections. `Connection` has close().
template <class Connection>
struct LocalServerState {
    explicit LocalServerState(boost::asio::io_context& io_) : io(io_), acceptor(io_) {}

    // Listens on `where`; the error, or none (then `port` is the bound port).
    boost::system::error_code listen(const boost::asio::ip::tcp::endpoint& where) {
        auto ec = listen_on(acceptor, where);
        if (!ec) port = acceptor.local_endpoint().port();
        return ec;
    }
    // Accepts nothing more and closes every connection. Idempotent.
    void stop() {
        if (stopped) return;
        stopped = true;
        boost::system::error_code ec;
        acceptor.close(ec);
        const auto open = connections;  // close() may end a connection and so unregister it
        for (auto* c : open)
            c->close();
    }

    boost::asio::io_context& io;
    boost::asio::ip::tcp::acceptor acceptor;
    std::uint16_t port = 0;
    bool stopped = false;
    std::set<Connection*> connections;  // every connection object alive
};

// A connection of a local server (`Self` derives from it): the server's state, the socket, one timer and
// the read buffer. It is in the state's `connections` from its construction to its destruction.
template <class State, class Self>
class LocalConnection : public std::enable_shared_from_this<Self> {
  public:
    LocalConnection(std::shared_ptr<State> state, boost::asio::ip::tcp::socket socket)
        : sh_(std::move(state)), socket_(std::move(socket)), timer_(sh_->io) {
        sh_->connections.insert(static_cast<Self*>(this));
    }
    ~LocalConnection() { sh_->connections.erase(static_cast<Self*>(this)); }
    LocalConnection(const LocalConnection&) = delete;
    LocalConnection& operator=(const LocalConnection&) = delete;

  protected:
    // The start of every read handler: the timer stops; true when there is nothing to answer because the
    // server stopped or the client went away (the connection is then closed).
    bool read_ended(const boost::system::error_code& ec) {
        timer_.cancel();
        if (sh_->stopped) return true;
        if (!connection_ended(ec)) return false;
        static_cast<Self*>(this)->close();
        return true;
    }

    std::shared_ptr<State> sh_;
    boost::asio::ip::tcp::socket socket_;
    boost::asio::steady_timer timer_;
    boost::beast::flat_buffer buffer_;
};

}  // namespace toast::client
