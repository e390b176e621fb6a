// The HTTP side of toast-tracker on Boost.Beast: an acceptor and one session object per connection that
// reads a request (header size bounded, read time bounded), asks TrackerService for the answer and writes
// it, keeping the connection alive when the client asks for it. All on the caller's single-threaded
// io_context.
//
// Lifetime: sessions live in the io_context's pending handlers, which are destroyed only with the
// io_context, possibly after this server. So sessions never refer back to the server; they share a small
// connection count with it, and the TrackerService they use must outlive the io_context.
#pragma once

#include <cstddef>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tracker/io/tracker_service.hpp"

namespace toast::tracker {

class HttpServer {
  public:
    // Binds and listens at once; throws boost::system::system_error when the address cannot be used.
    HttpServer(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& listen,
               TrackerService& service);
    boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
    void start();
    void stop();

    // Open connections, shared with the sessions (see Lifetime above).
    struct Connections {
        std::size_t open = 0;
        Gauge* gauge = nullptr;
        void opened() { gauge->set(static_cast<double>(++open)); }
        void closed() { gauge->set(static_cast<double>(--open)); }
    };

  private:
    void do_accept();

    boost::asio::io_context& ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::steady_timer retry_timer_;
    TrackerService& service_;
    std::shared_ptr<Connections> connections_;
    bool stopped_ = false;
};

}  // namespace toast::tracker
